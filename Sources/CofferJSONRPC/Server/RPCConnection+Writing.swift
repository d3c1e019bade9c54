import CofferCore
import FileService
import Foundation
import Synchronization

/// Writing: answers and notifications out, as they finish.
extension RPCConnection {

    /// The response carrying `value` as its result: written in one buffer, envelope and
    /// all, when the result writes its own JSON.
    static func response<Value: Encodable>(encoding value: Value, id: RequestID) throws -> Data {
        guard let writable = value as? any JSONWritable else { return response(result: try JSONEncoder.rpc.encode(value), id: id) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(384)
        bytes.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        id.writeJSON(into: &bytes)
        bytes.append(contentsOf: #","result":"#.utf8)
        writable.writeJSON(into: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return Data(bytes)
    }

    static func response(result: Data, id: RequestID) -> Data {
        let head = #"{"jsonrpc":"2.0","id":"#
        let middle = #","result":"#
        let identifier = id.json
        var data = Data(capacity: head.utf8.count + identifier.count + middle.utf8.count + result.count + 2)
        data.append(contentsOf: head.utf8)
        data.append(identifier)
        data.append(contentsOf: middle.utf8)
        data.append(result)
        data.append(UInt8(ascii: "}"))
        return data
    }

    /// `response` with `warnings` in its result (an object: every method's result that can
    /// warn is one), as `"warnings": [{kind, path, attributes, reason, message}]`.
    static func response(_ response: Data, adding warnings: [OperationWarning], language: Language) -> Data {
        let marker = Data(#","result":{"#.utf8)
        // The id before it is a number or a string, whose quotes are escaped: the first match is the result's.
        guard let range = response.range(of: marker) else { return response }
        let listed: [[String: Any]] = warnings.map { warning in
            ["kind": warning.kind.rawValue, "path": warning.path, "attributes": warning.attributes,
             "reason": warning.reason.rawValue, "message": warning.message(language)]
        }
        var entry = Data(#""warnings":"#.utf8)
        entry.append(jsonData(listed))
        let isEmpty = range.upperBound < response.endIndex && response[range.upperBound] == UInt8(ascii: "}")
        if !isEmpty { entry.append(UInt8(ascii: ",")) }
        var spliced = response
        spliced.insert(contentsOf: entry, at: range.upperBound)
        return spliced
    }

    static func response(error: RPCError, id: RequestID) -> Data {
        var object: [String: Any] = ["code": error.code, "message": error.message]
        if let data = error.data { object["data"] = data }
        var data = Data(#"{"jsonrpc":"2.0","id":"#.utf8)
        data.append(id.json)
        data.append(contentsOf: Array(#","error":"#.utf8))
        data.append(jsonData(object))
        data.append(UInt8(ascii: "}"))
        return data
    }

    static func array(_ items: [Data]) -> Data {
        var data = Data([UInt8(ascii: "[")])
        for (index, item) in items.enumerated() {
            if index > 0 { data.append(UInt8(ascii: ",")) }
            data.append(item)
        }
        data.append(UInt8(ascii: "]"))
        return data
    }

    static func jsonData(_ object: Any) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed, .withoutEscapingSlashes]))
            ?? Data("null".utf8)
    }

    static func describe(_ error: any Error) -> String {
        let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
        return text ?? "the message is not valid JSON"
    }

    func log(_ text: String) {
        FileHandle.standardError.write(Data("\(configuration.serverName) \(configuration.frontEnd): \(text)\n".utf8))
    }
}
