import CofferCore
public import CofferJSONRPC
public import Foundation

/// Any JSON value: tool arguments as the client sent them, and the schemas, results and
/// content blocks MCP is made of.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    public var string: String? { if case .string(let text) = self { text } else { nil } }

    /// An integer, also when written as `3.0`.
    public var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .number(let value) where value.rounded() == value && abs(value) < 9e15: Int64(value)
        default: nil
        }
    }

    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    public var array: [JSONValue]? { if case .array(let items) = self { items } else { nil } }
    public var object: [String: JSONValue]? { if case .object(let members) = self { members } else { nil } }

    /// JSON text, keys sorted.
    public var jsonText: String {
        var bytes: [UInt8] = []
        writeJSON(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The same text, indented (as the reference server shows `directory_tree`).
    public var prettyText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(self)) ?? Data("null".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

/// Written by itself, keys sorted: results go out on every call, and the encoder's generic
/// machinery costs more than the work behind most of them.
extension JSONValue: JSONWritable {
    public func writeJSON(into bytes: inout [UInt8]) {
        switch self {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let value): bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): bytes.append(contentsOf: String(value).utf8)
        case .number(let value): bytes.append(contentsOf: (value.isFinite ? "\(value)" : "null").utf8)
        case .string(let text): JSONText.appendQuoted(text, to: &bytes)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                item.writeJSON(into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONText.appendQuoted(key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                members[key]!.writeJSON(into: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        // The likeliest first: a failed attempt costs an error.
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        if let value = try? container.decode(String.self) { self = .string(value); return }
        if let value = try? container.decode(Bool.self) { self = .bool(value); return }
        if let value = try? container.decode(Int64.self) { self = .integer(value); return }
        if let value = try? container.decode(Double.self) { self = .number(value); return }
        if let value = try? container.decode([JSONValue].self) { self = .array(value); return }
        self = .object(try container.decode([String: JSONValue].self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue {
    public init(_ text: String) { self = .string(text) }
    public init(_ value: Int) { self = .integer(Int64(value)) }
    public init(_ value: Int64) { self = .integer(value) }
    public init(_ value: Bool) { self = .bool(value) }
    public init(_ date: Date) { self = .string(Timestamp.iso8601(date)) }
    public init(_ texts: [String]) { self = .array(texts.map(JSONValue.string)) }
}
