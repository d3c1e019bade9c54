import Foundation

/// A request id exactly as sent: echoed back as the same text.
enum RequestID: Sendable, Hashable {
    case integer(Int64)
    /// Any other number, as the literal the client wrote (`1.0`, `1e3`, `18446744073709551616`).
    case number(String)
    case string(String)
    case null

    /// The id as JSON text.
    var json: Data {
        switch self {
        case .integer(let value): Data(String(value).utf8)
        case .number(let literal): Data(literal.utf8)
        case .string(let text): RPCConnection.jsonData(text)
        case .null: Data("null".utf8)
        }
    }

    /// The same, appended to `bytes`.
    func writeJSON(into bytes: inout [UInt8]) {
        switch self {
        case .integer(let value): bytes.append(contentsOf: String(value).utf8)
        case .number(let literal): bytes.append(contentsOf: literal.utf8)
        case .string: bytes.append(contentsOf: json)
        case .null: bytes.append(contentsOf: "null".utf8)
        }
    }

    /// The key `$/cancelRequest` finds the request by (`nil` for a null id).
    var key: RequestKey? {
        switch self {
        case .integer(let value): .integer(value)
        case .number(let value): .number(value)
        case .string(let text): .string(text)
        case .null: nil
        }
    }
}

/// A request id as a dictionary key: `$/cancelRequest` names requests by it (see `RequestID`).
enum RequestKey: Hashable, Sendable {
    case integer(Int64)
    case number(String)
    case string(String)
}

/// The parts of a message the server reads before knowing its method: decoded in one pass
/// with `JSONDecoder` (no dictionaries, no casts), leaving `params` to the method's own type.
///
/// The literal text of a numeric `id` comes in `userInfo[Envelope.idLiteral]` (from
/// ``StrictJSON``): the decoder gives numbers, not the digits they were written with.
struct Envelope: Decodable {
    static let idLiteral = CodingUserInfoKey(rawValue: "coffer.idLiteral")!
    static let rulesKey = CodingUserInfoKey(rawValue: "coffer.envelopeRules")!

    /// What the dialect names the members the server reads itself.
    struct Rules: Sendable {
        var cancelMethod: String
        var cancelIDParam: String
        var tokenPlace: ProgressTokenPlace
        /// The quoted member name whose presence in params sends a message to the decoder:
        /// `"workDoneToken"`, or `"progressToken"` where the token is inside `_meta` (a
        /// `_meta` without one, as every 2026-07-28 MCP request has, stays on the quick path).
        var tokenMember: [UInt8]

        init(_ dialect: any RPCDialect) {
            (cancelMethod, cancelIDParam) = dialect.cancelNotification
            tokenPlace = dialect.progressTokenPlace
            let name = switch tokenPlace {
            case .param(let name): name
            case .meta: "progressToken"
            }
            tokenMember = Array("\"\(name)\"".utf8)
        }
    }

    enum IDField { case absent, valid(RequestID), invalid }
    enum ParamsField { case absent, object, notObject }

    var jsonrpc: String?
    var id: IDField
    var method: String?
    /// Whether a `method` member is there at all (`method` is `nil` too when it is not a string).
    var hasMethod = false
    /// Whether it has a `result` or an `error`: the client's answer to a request of the server's.
    var isResponse = false
    var params: ParamsField
    /// What the server itself needs from params: `initialize`'s locale, a progress token,
    /// the id a cancelling notification names.
    var locale: String?
    var progressToken: ProgressToken?
    var cancelID: RequestID?

    private enum Keys: String, CodingKey { case jsonrpc, id, method, params, result, error }

    /// A member of params, by the name the dialect gives it.
    private struct Member: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        // `decodeIfPresent` and the most likely type first: a failed `try?` builds an error,
        // which costs more than the rest of the decoding.
        let container = try decoder.container(keyedBy: Keys.self)
        jsonrpc = (try? container.decodeIfPresent(String.self, forKey: .jsonrpc)) ?? nil
        method = (try? container.decodeIfPresent(String.self, forKey: .method)) ?? nil
        let literal = decoder.userInfo[Self.idLiteral] as? String
        id = container.contains(.id) ? Self.decodeID(container, .id, literal: literal).map(IDField.valid) ?? .invalid : .absent
        hasMethod = container.contains(.method)
        isResponse = container.contains(.result) || container.contains(.error)
        guard container.contains(.params), (try? container.decodeNil(forKey: .params)) == false else {
            params = .absent
            return
        }
        guard let fields = try? container.nestedContainer(keyedBy: Member.self, forKey: .params) else {
            params = .notObject
            return
        }
        params = .object
        let rules = decoder.userInfo[Self.rulesKey] as? Rules ?? Rules(LanguageServerDialect())
        switch method {
        case "initialize":
            locale = (try? fields.decodeIfPresent(String.self, forKey: Member("locale"))) ?? nil
        case rules.cancelMethod:
            let key = Member(rules.cancelIDParam)
            cancelID = fields.contains(key) ? Self.decodeID(fields, key) : nil
            return
        default:
            break
        }
        switch rules.tokenPlace {
        case .param(let name):
            progressToken = (try? fields.decodeIfPresent(ProgressToken.self, forKey: Member(name))) ?? nil
        case .meta:
            let meta = try? fields.nestedContainer(keyedBy: Member.self, forKey: Member("_meta"))
            progressToken = (try? meta?.decodeIfPresent(ProgressToken.self, forKey: Member("progressToken"))) ?? nil
        }
    }

    private static func decodeID<K: CodingKey>(_ container: KeyedDecodingContainer<K>, _ key: K,
                                                literal: String? = nil) -> RequestID? {
        if (try? container.decodeNil(forKey: key)) == true { return .null }
        if let value = try? container.decode(Int64.self, forKey: key) {
            // `1.0` and `1e0` decode as 1 too: only the plain digits of an Int64 are that integer.
            if let literal, literal != String(value) { return .number(literal) }
            return .integer(value)
        }
        if let text = try? container.decode(String.self, forKey: key) { return .string(text) }
        // Booleans must not pass as numbers.
        if (try? container.decode(Bool.self, forKey: key)) != nil { return nil }
        if let value = try? container.decode(Double.self, forKey: key) { return .number(literal ?? "\(value)") }
        return nil
    }
}

extension Envelope {
    /// The envelope of the usual request read straight from the bytes ``StrictJSON`` has
    /// already checked: `"jsonrpc": "2.0"`, a method name and an id without escapes, and
    /// params the server itself needs nothing from (no progress token; not `initialize` or
    /// the cancelling notification). `nil` for anything else, which `JSONDecoder` reads instead.
    init?(quick body: Data, _ message: StrictJSON.Message, rules: Rules) {
        guard let jsonrpc = message.jsonrpc, let methodRange = message.method else { return nil }
        let decided: Envelope? = body.withUnsafeBytes { raw -> Envelope? in
            let bytes = raw.bindMemory(to: UInt8.self)
            func text(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[range]) }
            /// The contents of a string without escapes, or `nil`.
            func plainString(_ range: Range<Int>) -> String? {
                let value = text(range)
                guard value.count >= 2, value.first == UInt8(ascii: "\""), !value.contains(UInt8(ascii: "\\")) else { return nil }
                return String(decoding: UnsafeBufferPointer(rebasing: value.dropFirst().dropLast()), as: UTF8.self)
            }
            guard plainString(jsonrpc) == "2.0", let method = plainString(methodRange),
                  method != "initialize", method != rules.cancelMethod else { return nil }
            var envelope = Envelope(jsonrpc: "2.0", method: method, id: .absent, params: .absent)
            if let range = message.id {
                let value = text(range)
                switch value.first ?? 0 {
                case UInt8(ascii: "\""):
                    guard let string = plainString(range) else { return nil }
                    envelope.id = .valid(.string(string))
                case UInt8(ascii: "n"):
                    envelope.id = .valid(.null)
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    let literal = String(decoding: value, as: UTF8.self)
                    envelope.id = .valid(Int64(literal).map { String($0) == literal ? .integer($0) : .number(literal) }
                                         ?? .number(literal))
                default:
                    return nil  // true, false, an object: the decoder's error
                }
            }
            if let range = message.params {
                let value = text(range)
                switch value.first ?? 0 {
                case UInt8(ascii: "n"): envelope.params = .absent
                case UInt8(ascii: "{"):
                    // A progress token is the server's to read: the decoder does that.
                    guard !Self.contains(rules.tokenMember, in: value) else { return nil }
                    envelope.params = .object
                default: envelope.params = .notObject
                }
            }
            return envelope
        }
        guard let decided else { return nil }
        self = decided
    }

    /// Whether `bytes` hold `needle` anywhere.
    private static func contains(_ needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = needle.count
        guard bytes.count >= count, let base = bytes.baseAddress else { return false }
        let first = needle[0]
        return needle.withUnsafeBufferPointer { needle in
            var index = 0
            while index <= bytes.count - count {
                if base[index] == first && memcmp(base + index, needle.baseAddress!, count) == 0 { return true }
                index += 1
            }
            return false
        }
    }

    private init(jsonrpc: String, method: String, id: IDField, params: ParamsField) {
        self.jsonrpc = jsonrpc
        self.method = method
        self.hasMethod = true
        self.id = id
        self.params = params
    }
}
