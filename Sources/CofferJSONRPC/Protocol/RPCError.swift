import CofferCore
import Foundation

/// A JSON-RPC error response: a code, a message, and for failed requests, data.
public struct RPCError: Error, Sendable {
    public var code: Int
    public var message: String
    /// `{kind, path?, detail?, suggestion?}` for `-32803`; any JSON object for another protocol's
    /// errors (strings, numbers, arrays and objects of them).
    public var data: [String: any Sendable]?

    public init(code: Int, message: String, data: [String: any Sendable]? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    // The codes of the contract (RPC.md).
    public static let parseError = -32700
    public static let invalidRequest = -32600
    public static let methodNotFound = -32601
    public static let invalidParams = -32602
    public static let internalError = -32603
    public static let notInitialized = -32002
    public static let requestCancelled = -32800
    public static let requestFailed = -32803

    public static func invalidParams(_ message: String) -> RPCError { RPCError(code: invalidParams, message: message) }

    /// A failure of a well-formed request, with the user message in `language`. A
    /// cancelled request is `-32800`.
    static func failure(_ error: CofferError, language: Language, hints: MessageHints = .rpc) -> RPCError {
        let message = error.userMessage(in: language, hints: hints)
        if error.kind == .cancelled { return RPCError(code: requestCancelled, message: message.text) }
        var data = ["kind": error.kind.identifier]
        if let path = error.path { data["path"] = path.description }
        if let detail = error.detailIdentifier { data["detail"] = detail }
        if !message.hint.isEmpty { data["suggestion"] = message.hint }
        return RPCError(code: requestFailed, message: message.text, data: data)
    }

    /// Invalid params, naming the param (`path`, `entries[2].name`).
    static func from(_ error: DecodingError) -> RPCError {
        func name(_ path: [any CodingKey], _ key: (any CodingKey)? = nil) -> String {
            // Params are decoded on their own; a leading `params` is left out all the same.
            let inside = path.first?.stringValue == "params" ? Array(path.dropFirst()) : path
            var parts = inside.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            if let key { parts.append(key.stringValue) }
            return parts.reduce("") { $0.isEmpty || $1.hasPrefix("[") ? $0 + $1 : $0 + "." + $1 }
        }
        switch error {
        case .keyNotFound(let key, let context):
            return invalidParams("missing param “\(name(context.codingPath, key))”")
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return invalidParams("param “\(name(context.codingPath))” must be \(describe(type))")
        case .dataCorrupted(let context):
            let param = name(context.codingPath)
            // A ``WordChoice`` says what it may be: “param “sort” must be one of …”.
            let refusal = context.debugDescription.hasPrefix("must be ") ? " " + context.debugDescription
                : ": " + context.debugDescription
            return invalidParams(param.isEmpty ? "params must be an object" : "param “\(param)”\(refusal)")
        @unknown default:
            return invalidParams("invalid params")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type: "an integer"
        case is Double.Type: "a number"
        case is [String].Type: "an array of strings"
        default: "of another type"
        }
    }
}
