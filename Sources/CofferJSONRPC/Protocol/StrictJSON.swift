package import Foundation

/// One pass over a message that holds it to RFC 8259 before `JSONDecoder` reads it.
///
/// Foundation's parser is lenient where JSON-RPC peers expect strictness: it takes trailing
/// commas and raw control characters inside strings. This pass rejects both (and any other
/// syntax fault) as a parse error, and on the way notes where each message's `"id"` value
/// lies, so an id is echoed as the exact text the client sent (`1.0` stays `1.0`, a
/// twenty-digit integer is not rounded), and where each element of a batch begins and ends,
/// so an element is decoded from its own bytes without a round trip through `Any`.
///
/// It validates; it builds nothing. UTF-8 is checked by the caller.
package struct StrictJSON {
    /// A message that is an object, or one element of a batch.
    package struct Message: Equatable {
        /// The bytes of the value (an element of a batch may be any value).
        package var range: Range<Int>
        package var isObject: Bool
        /// The bytes of the value of the member named `id`, if the object has one.
        package var id: Range<Int>?
        /// The same for `jsonrpc`, `method` and `params` (a message's own members), so the
        /// usual message is understood without a decoder.
        package var jsonrpc: Range<Int>?
        package var method: Range<Int>?
        package var params: Range<Int>?

        init(range: Range<Int>, isObject: Bool, id: Range<Int>? = nil) {
            (self.range, self.isObject, self.id) = (range, isObject, id)
        }

        /// The same message with its ranges counted from `start` of the text.
        func relative(to start: Int) -> Message {
            func shift(_ range: Range<Int>?) -> Range<Int>? { range.map { ($0.lowerBound - start)..<($0.upperBound - start) } }
            var message = Message(range: shift(range)!, isObject: isObject, id: shift(id))
            (message.jsonrpc, message.method, message.params) = (shift(jsonrpc), shift(method), shift(params))
            return message
        }
    }

    package enum Shape: Equatable {
        case single(Message)
        case batch([Message])
    }

    package struct Fault: Error, Equatable {
        var offset: Int
        var problem: String
        package var description: String { "\(problem) at byte \(offset)" }
    }

    /// Checks `data` and describes its shape, or names the first fault.
    package static func scan(_ data: Data) throws(Fault) -> Shape {
        do {
            return try data.withUnsafeBytes { raw throws(Fault) -> Shape in
                var scanner = StrictJSON(bytes: raw.bindMemory(to: UInt8.self))
                return try scanner.document()
            }
        } catch let fault as Fault {
            throw fault
        } catch {
            throw Fault(offset: 0, problem: "unreadable")
        }
    }

    /// The members of the object at `object` in `data` (a text ``scan(_:)`` has passed), each
    /// name (its escapes read) with where its value lies; empty for a value that is no object,
    /// `nil` when a name is given twice (which one a reader takes is not agreed on). Reads one
    /// level: enough to find `params._meta.progressToken` without building the message.
    package static func members(of data: Data, at object: Range<Int>) -> [String: Range<Int>]? {
        var found: [String: Range<Int>] = [:]
        var repeated = false
        data.withUnsafeBytes { raw in
            var scanner = StrictJSON(bytes: raw.bindMemory(to: UInt8.self))
            scanner.index = object.lowerBound
            guard scanner.peek() == UInt8(ascii: "{") else { return }
            do throws(Fault) {
                if try scanner.opensEmpty(closingWith: UInt8(ascii: "}")) { return }
                repeat {
                    scanner.skipSpace()
                    let keyStart = scanner.index
                    try scanner.string()
                    let key = keyStart..<scanner.index
                    scanner.skipSpace()
                    _ = scanner.next()
                    scanner.skipSpace()
                    let valueStart = scanner.index
                    try scanner.value(depth: 1)
                    let name = raw[(key.lowerBound + 1)..<(key.upperBound - 1)].contains(UInt8(ascii: "\\"))
                        ? string(in: data, at: key) : String(decoding: raw[(key.lowerBound + 1)..<(key.upperBound - 1)], as: UTF8.self)
                    guard let name else { continue }
                    if found.updateValue(valueStart..<scanner.index, forKey: name) != nil { repeated = true }
                } while try scanner.another(before: UInt8(ascii: "}"))
            } catch {
                found = [:]
            }
        }
        return repeated ? nil : found
    }

    /// The string at `range` of `data` (quotes included), its escapes read; `nil` if it is no string.
    package static func string(in data: Data, at range: Range<Int>) -> String? {
        try? JSONDecoder().decode(String.self, from: Data(data[(data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)]))
    }

    /// `data` with each range given replaced by its text (the ranges do not overlap).
    package static func replacing(_ edits: [(range: Range<Int>, with: Data)], in data: Data) -> Data {
        var result = Data()
        result.reserveCapacity(data.count + edits.reduce(0) { $0 + $1.with.count })
        var at = data.startIndex
        for edit in edits.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) {
            result.append(data[at..<(data.startIndex + edit.range.lowerBound)])
            result.append(edit.with)
            at = data.startIndex + edit.range.upperBound
        }
        result.append(data[at...])
        return result
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    /// Objects deeper than this are refused: the decoder recurses, and so does this pass.
    private static let maxDepth = 512

    private init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    private mutating func document() throws(Fault) -> Shape {
        skipSpace()
        let shape: Shape
        if peek() == UInt8(ascii: "[") {
            shape = .batch(try batch())
        } else {
            shape = .single(try message())
        }
        skipSpace()
        guard index == bytes.count else { throw fault("text after the value") }
        return shape
    }

    private mutating func batch() throws(Fault) -> [Message] {
        var elements: [Message] = []
        if try opensEmpty(closingWith: UInt8(ascii: "]")) { return elements }
        repeat {
            skipSpace()
            if peek() == UInt8(ascii: "]") { throw fault("a trailing comma") }
            elements.append(try message())
        } while try another(before: UInt8(ascii: "]"))
        return elements
    }

    /// Steps over an opening bracket; `true` when the closing one follows at once (and is passed).
    private mutating func opensEmpty(closingWith close: UInt8) throws(Fault) -> Bool {
        index += 1
        skipSpace()
        guard peek() == close else { return false }
        index += 1
        return true
    }

    /// After an element: `true` when a comma says another follows, `false` at the closing bracket.
    private mutating func another(before close: UInt8) throws(Fault) -> Bool {
        skipSpace()
        switch next() {
        case UInt8(ascii: ","): return true
        case close: return false
        default: throw fault("expected “,” or “\(Character(Unicode.Scalar(close)))”", back: 1)
        }
    }

    /// A value at the top of a message, noting where its own members lie if it is an object.
    private mutating func message() throws(Fault) -> Message {
        let start = index
        guard peek() == UInt8(ascii: "{") else {
            try value(depth: 1)
            return Message(range: start..<index, isObject: false)
        }
        var message = Message(range: start..<start, isObject: true)
        try object(depth: 1, noting: &message)
        message.range = start..<index
        return message
    }

    /// Notes where the value of a message's own member lies, by its key (quotes included);
    /// a key written with escapes is not recognised here and leaves the message to the decoder.
    private func note(key: Range<Int>, value: Range<Int>, in message: inout Message) {
        func named(_ name: StaticString) -> Bool {
            key.count == name.utf8CodeUnitCount + 2
                && memcmp(bytes.baseAddress! + key.lowerBound + 1, name.utf8Start, name.utf8CodeUnitCount) == 0
        }
        switch key.count {
        case 4 where named("id"): message.id = value
        case 8 where named("method"): message.method = value
        case 8 where named("params"): message.params = value
        case 9 where named("jsonrpc"): message.jsonrpc = value
        default: break
        }
    }

    private mutating func value(depth: Int) throws(Fault) {
        guard depth <= Self.maxDepth else { throw fault("nested too deeply") }
        guard let byte = peek() else { throw fault("the message ends where a value should be") }
        switch byte {
        case UInt8(ascii: "{"): try object(depth: depth, noting: nil)
        case UInt8(ascii: "["): try array(depth: depth)
        case UInt8(ascii: "\""): try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        default: throw fault("unexpected character")
        }
    }

    /// An object; with `message`, the places of the message's own members are noted in it.
    private mutating func object(depth: Int, noting message: UnsafeMutablePointer<Message>?) throws(Fault) {
        if try opensEmpty(closingWith: UInt8(ascii: "}")) { return }
        repeat {
            skipSpace()
            guard peek() == UInt8(ascii: "\"") else {
                throw fault(peek() == UInt8(ascii: "}") ? "a trailing comma" : "expected a member name")
            }
            let keyStart = index
            try string()
            let key = keyStart..<index
            skipSpace()
            guard next() == UInt8(ascii: ":") else { throw fault("expected “:”", back: 1) }
            skipSpace()
            let valueStart = index
            try value(depth: depth + 1)
            if let message { note(key: key, value: valueStart..<index, in: &message.pointee) }
        } while try another(before: UInt8(ascii: "}"))
    }

    private mutating func array(depth: Int) throws(Fault) {
        if try opensEmpty(closingWith: UInt8(ascii: "]")) { return }
        repeat {
            skipSpace()
            if peek() == UInt8(ascii: "]") { throw fault("a trailing comma") }
            try value(depth: depth + 1)
        } while try another(before: UInt8(ascii: "]"))
    }

    private mutating func string() throws(Fault) {
        index += 1
        while let byte = next() {
            switch byte {
            case UInt8(ascii: "\""):
                return
            case UInt8(ascii: "\\"):
                switch next() {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                     UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"):
                    for _ in 0..<4 {
                        guard let digit = next(), Self.isHexDigit(digit) else {
                            throw fault("a “\\u” escape needs four hexadecimal digits", back: 1)
                        }
                    }
                default:
                    throw fault("an unknown escape", back: 1)
                }
            case 0..<0x20:
                throw fault("a control character inside a string (escape it)", back: 1)
            default:
                continue
            }
        }
        throw fault("the message ends inside a string")
    }

    private mutating func number() throws(Fault) {
        if peek() == UInt8(ascii: "-") { index += 1 }
        if peek() == UInt8(ascii: "0") {
            index += 1
            if let digit = peek(), Self.isDigit(digit) { throw fault("a number with a leading zero") }
        } else {
            try digits()
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            try digits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            try digits()
        }
    }

    private mutating func digits() throws(Fault) {
        guard let first = peek(), Self.isDigit(first) else { throw fault("a malformed number") }
        while let digit = peek(), Self.isDigit(digit) { index += 1 }
    }

    private mutating func literal(_ word: StaticString) throws(Fault) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
              memcmp(bytes.baseAddress! + index, word.utf8Start, count) == 0 else {
            throw fault("unexpected word")
        }
        index += count
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func next() -> UInt8? {
        guard index < bytes.count else {
            index += 1
            return nil
        }
        defer { index += 1 }
        return bytes[index]
    }

    private func fault(_ problem: String, back: Int = 0) -> Fault {
        Fault(offset: max(0, min(index, bytes.count) - back), problem: problem)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
    }
}
