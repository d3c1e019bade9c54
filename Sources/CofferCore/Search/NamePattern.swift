import Foundation

/// What a name search looks for: a substring, ignoring case, accents and width.
///
/// `report` matches `Q3-Report.pdf`, `resume` matches `Résumé.docx`, `报告` matches
/// `年度报告.txt`. Names and the pattern are folded the same way (lowercased, accents and
/// width variants removed, then NFC) and compared as UTF-8 bytes, so an NFD name on disk
/// matches an NFC pattern. Both search engines use this one test, so they agree.
public struct NamePattern: Sendable, Hashable {
    /// The pattern as the user typed it.
    public let text: String
    /// The folded pattern, as UTF-8.
    public let folded: [UInt8]
    /// Characters (Unicode scalars) in the folded pattern; the index needs three for its
    /// trigram lookup.
    public let foldedLength: Int

    /// `*` alone matches every name (a search that narrows by type, tag, date or size only).
    /// - Throws: ``CofferError/Kind/invalidArgument`` for an empty pattern.
    public init(_ text: String) throws(CofferError) {
        if text == Self.everything {
            (self.text, self.folded, self.foldedLength) = (text, [], 0)
            return
        }
        let folded = Self.fold(text)
        guard !folded.isEmpty else { throw CofferError(.invalidArgument, detail: "empty-pattern") }
        self.text = text
        self.folded = Array(folded.utf8)
        self.foldedLength = folded.unicodeScalars.count
    }

    /// A name in the form patterns are compared with.
    public static func fold(_ name: String) -> String {
        if name.unicodeScalars.allSatisfy(Self.foldsAsItself) {
            return String(String.UnicodeScalarView(name.unicodeScalars.map { scalar in
                (0x41...0x5A).contains(scalar.value) ? Unicode.Scalar(scalar.value + 0x20)! : scalar
            }))
        }
        return name.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .precomposedStringWithCanonicalMapping
    }

    /// Characters that folding leaves alone apart from ASCII case: ASCII, and the CJK
    /// ideographs and punctuation most Chinese names are made of (no case, no accents, no
    /// width variants, already NFC). Names of only these skip Foundation, which costs
    /// microseconds a name; a test checks the shortcut against Foundation.
    @inline(__always)
    static func foldsAsItself(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x80 || (0x4E00...0x9FFF).contains(value) || (0x3400...0x4DBF).contains(value)
            || (0x3001...0x3003).contains(value) || (0x3008...0x3011).contains(value)
    }

    /// The pattern that matches every name.
    public static let everything = "*"

    /// Whether `name` contains the pattern.
    public func matches(_ name: String) -> Bool {
        if folded.isEmpty { return true }
        var name = name
        let simple = name.utf8.allSatisfy { $0 < 0x80 } || name.unicodeScalars.allSatisfy(Self.foldsAsItself)
        let quickMatch: Bool? = name.withUTF8 { bytes in
            guard simple else { return nil }
            // The common case: lowercase ASCII into a scratch buffer (other bytes are kept),
            // no allocation for short names.
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(bytes.count, 1)) { scratch in
                for (index, byte) in bytes.enumerated() {
                    scratch[index] = byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
                }
                return Self.contains(UnsafeBufferPointer(rebasing: scratch[..<bytes.count]), folded)
            }
        }
        if let quickMatch { return quickMatch }
        var foldedName = Self.fold(name)
        return foldedName.withUTF8 { Self.contains($0, folded) }
    }

    /// Whether an already folded name contains the pattern.
    public func matches(foldedName: String) -> Bool {
        if folded.isEmpty { return true }
        var foldedName = foldedName
        return foldedName.withUTF8 { Self.contains($0, folded) }
    }

    private static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        // Names are short: find each occurrence of the first byte, then compare the rest.
        return needle.withUnsafeBufferPointer { needle in
            let first = needle[0]
            var index = 0
            let last = haystack.count - needle.count
            while index <= last {
                if haystack[index] == first,
                   memcmp(haystack.baseAddress! + index, needle.baseAddress!, needle.count) == 0 {
                    return true
                }
                index += 1
            }
            return false
        }
    }
}
