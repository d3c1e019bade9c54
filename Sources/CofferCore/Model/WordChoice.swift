/// A value that is one of a few words (a conflict policy, a sort field, an encoding): decoded
/// from its word, and refused with the words it may be rather than a decoder's own wording
/// (“Cannot initialize Sort from invalid String value bogus”).
public protocol WordChoice: RawRepresentable, CaseIterable, Decodable where RawValue == String {}

extension WordChoice {
    /// The value named by the decoded word.
    /// - Throws: `DecodingError.dataCorrupted` naming the words it may be, for any other word.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let word = try container.decode(String.self)
        guard let value = Self(rawValue: word) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: Self.refusal)
        }
        self = value
    }

    /// `must be one of name, modified, size or kind`: what a refusal says, after the value's name.
    public static var refusal: String {
        let words = allCases.map(\.rawValue)
        guard let last = words.last, words.count > 1 else { return "must be " + (words.first ?? "") }
        return "must be one of " + words.dropLast().joined(separator: ", ") + " or " + last
    }
}
