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
        if let direct = type as? any FlatDecodable.Type {
            return direct.init(flat: members).map { $0 as! Params }
        }
        return try? Params(from: FlatDecoder(members: members))
    }

    enum Scalar {
        case string(String)
        case number(String)
        case bool(Bool)
        case null
    }

    /// A flat object's members in the order written: a few, so looked up one by one
    /// (cheaper than hashing them into a dictionary).
    struct Members {
        fileprivate(set) var pairs: [(key: String, value: Scalar)] = []

        subscript(key: String) -> Scalar? { pairs.first { $0.key == key }?.value }
        var keys: [String] { pairs.map(\.key) }
    }

    /// The members of a flat object, or `nil` when it is not flat, repeats a key or writes a
    /// string with escapes.
    static func members(of object: Data) -> Members? {
        object.withUnsafeBytes { raw -> Members? in
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
            var members = Members()
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
                guard members[key] == nil else { return nil }
                members.pairs.append((key, value))
                skipSpace()
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: "}") { return members }
                guard bytes[index] == UInt8(ascii: ",") else { return nil }
                index += 1
            }
        }
    }
}

/// Params read from a flat object's members without going through `Decoder` at all, for the
/// methods answered most often. The same rule holds: `nil` for anything `JSONDecoder` might
/// read otherwise (a member missing or of another type), never a different value.
protocol FlatDecodable {
    init?(flat members: FlatParams.Members)
}

/// Any doubt: the caller falls back to `JSONDecoder`.
private struct NotFlat: Error {}

private struct FlatDecoder: Decoder {
    let members: FlatParams.Members
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(FlatKeyedContainer<Key>(members: members))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw NotFlat() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw NotFlat() }
}

private struct FlatKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: FlatParams.Members
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
        // Types compared by identity: a chain of `is` casts cost more than the rest of a request.
        let identity = ObjectIdentifier(type)
        switch scalar {
        case .string(let text) where identity == Self.string: return text as! T
        case .bool(let value) where identity == Self.bool: return value as! T
        case .number(let literal) where identity == Self.int: return try integer(literal, Int.self) as! T
        case .number(let literal) where identity == Self.int64: return try integer(literal, Int64.self) as! T
        case .number(let literal) where identity == Self.int32: return try integer(literal, Int32.self) as! T
        case .number(let literal) where identity == Self.uint: return try integer(literal, UInt.self) as! T
        case .number(let literal) where identity == Self.uint64: return try integer(literal, UInt64.self) as! T
        case .number(let literal) where identity == Self.double:
            guard let value = Double(literal), value.isFinite else { throw NotFlat() }
            return value as! T
        default:
            // A mismatch, or a type `JSONDecoder` treats in its own way: its decision.
            if Self.decodersOwn.contains(identity) { throw NotFlat() }
            return try T(from: self)
        }
    }

    private static let string = ObjectIdentifier(String.self), bool = ObjectIdentifier(Bool.self)
    private static let int = ObjectIdentifier(Int.self), int64 = ObjectIdentifier(Int64.self)
    private static let int32 = ObjectIdentifier(Int32.self), uint = ObjectIdentifier(UInt.self)
    private static let uint64 = ObjectIdentifier(UInt64.self), double = ObjectIdentifier(Double.self)
    private static let decodersOwn: Set<ObjectIdentifier> = [
        string, bool, double, ObjectIdentifier(Float.self), int, int64, int32, uint, uint64,
        ObjectIdentifier(Int8.self), ObjectIdentifier(Int16.self), ObjectIdentifier(UInt8.self),
        ObjectIdentifier(UInt16.self), ObjectIdentifier(UInt32.self), ObjectIdentifier(Data.self),
        ObjectIdentifier(Date.self), ObjectIdentifier(URL.self), ObjectIdentifier(Decimal.self),
    ]

    /// Plain digits only (`1.0` and `1e2` are left to `JSONDecoder`, which has its own rules).
    private func integer<Integer: FixedWidthInteger>(_ literal: String, _ type: Integer.Type) throws -> Integer {
        guard let value = Integer(literal, radix: 10), String(value) == literal else { throw NotFlat() }
        return value
    }
}
