import Foundation

/// Decodes the params of the usual request — an object of plain strings, numbers, booleans
/// and nulls — without `JSONDecoder`, whose generic machinery cost more than a `files/stat`
/// itself.
///
/// It is deliberately narrow: it takes only what it reads exactly as `JSONDecoder` would —
/// strings without escapes, integers written as plain digits, finite numbers, each key once —
/// and throws for everything else (a nested value, a type it is unsure of, any mismatch), in
/// which case the caller decodes with `JSONDecoder`. So every value it produces is the one
/// `JSONDecoder` produces, and every error the client sees is `JSONDecoder`'s.
enum FlatParams {
    /// `Params` from `object` (the bytes of a JSON object already checked by ``StrictJSON``),
    /// or `nil` when `JSONDecoder` must decide.
    static func decode<Params: Decodable>(_ type: Params.Type, from object: Data) -> Params? {
        guard let members = members(of: object) else { return nil }
        return try? Params(from: FlatDecoder(members: members))
    }

    enum Scalar {
        case string(String)
        case number(String)
        case bool(Bool)
        case null
    }

    /// The members of a flat object, or `nil` when it is not flat, repeats a key or writes a
    /// string with escapes.
    static func members(of object: Data) -> [String: Scalar]? {
        object.withUnsafeBytes { raw -> [String: Scalar]? in
            let bytes = raw.bindMemory(to: UInt8.self)
            var index = 0
            func skipSpace() {
                while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D {
                    index += 1
                }
            }
            func plainString() -> String? {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
                let start = index + 1
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                    if bytes[end] == UInt8(ascii: "\\") { return nil }
                    end += 1
                }
                guard end < bytes.count else { return nil }
                index = end + 1
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
            index += 1
            var members: [String: Scalar] = [:]
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { return members }
            while true {
                skipSpace()
                guard let key = plainString() else { return nil }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                skipSpace()
                guard index < bytes.count else { return nil }
                let value: Scalar
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard let text = plainString() else { return nil }
                    value = .string(text)
                case UInt8(ascii: "t"): index += 4; value = .bool(true)
                case UInt8(ascii: "f"): index += 5; value = .bool(false)
                case UInt8(ascii: "n"): index += 4; value = .null
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    let start = index
                    while index < bytes.count, !(bytes[index] == UInt8(ascii: ",") || bytes[index] == UInt8(ascii: "}")
                                                 || bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A
                                                 || bytes[index] == 0x0D) {
                        index += 1
                    }
                    value = .number(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
                default:
                    return nil  // an object or an array: not flat
                }
                guard members.updateValue(value, forKey: key) == nil else { return nil }
                skipSpace()
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: "}") { return members }
                guard bytes[index] == UInt8(ascii: ",") else { return nil }
                index += 1
            }
        }
    }
}

/// Any doubt: the caller falls back to `JSONDecoder`.
private struct NotFlat: Error {}

private struct FlatDecoder: Decoder {
    let members: [String: FlatParams.Scalar]
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(FlatKeyedContainer<Key>(members: members))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw NotFlat() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw NotFlat() }
}

private struct FlatKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: FlatParams.Scalar]
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func scalar(_ key: Key) throws -> FlatParams.Scalar {
        guard let value = members[key.stringValue] else { throw NotFlat() }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try scalar(key) { return true }
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try FlatValue(scalar: try scalar(key)).decode(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey> { throw NotFlat() }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw NotFlat() }
    func superDecoder() throws -> any Decoder { throw NotFlat() }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw NotFlat() }
}

/// One member's value, as a decoder of its own (for types such as `PathParam` or a
/// `String`-backed enum that read a single value).
private struct FlatValue: Decoder, SingleValueDecodingContainer {
    let scalar: FlatParams.Scalar
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> { throw NotFlat() }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw NotFlat() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool {
        if case .null = scalar { return true }
        return false
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        switch (scalar, type) {
        case (.string(let text), is String.Type): return text as! T
        case (.bool(let value), is Bool.Type): return value as! T
        case (.number(let literal), is Int.Type): return try integer(literal, Int.self) as! T
        case (.number(let literal), is Int64.Type): return try integer(literal, Int64.self) as! T
        case (.number(let literal), is Int32.Type): return try integer(literal, Int32.self) as! T
        case (.number(let literal), is UInt.Type): return try integer(literal, UInt.self) as! T
        case (.number(let literal), is UInt64.Type): return try integer(literal, UInt64.self) as! T
        case (.number(let literal), is Double.Type):
            guard let value = Double(literal), value.isFinite else { throw NotFlat() }
            return value as! T
        case (_, is String.Type), (_, is Bool.Type), (_, is Double.Type), (_, is Float.Type),
             (_, is Int.Type), (_, is Int64.Type), (_, is Int32.Type), (_, is UInt.Type), (_, is UInt64.Type),
             (_, is Int8.Type), (_, is Int16.Type), (_, is UInt8.Type), (_, is UInt16.Type), (_, is UInt32.Type),
             (_, is Data.Type), (_, is Date.Type), (_, is URL.Type), (_, is Decimal.Type):
            // A mismatch, or a type `JSONDecoder` treats in its own way: its decision.
            throw NotFlat()
        default:
            return try T(from: self)
        }
    }

    /// Plain digits only (`1.0` and `1e2` are left to `JSONDecoder`, which has its own rules).
    private func integer<Integer: FixedWidthInteger>(_ literal: String, _ type: Integer.Type) throws -> Integer {
        guard let value = Integer(literal, radix: 10), String(value) == literal else { throw NotFlat() }
        return value
    }
}
