/// The languages Coffer speaks to people in.
public enum Language: String, Sendable, CaseIterable, Codable {
    /// English.
    case english = "en"
    /// Chinese in simplified characters.
    case simplifiedChinese = "zh-Hans"

    /// Parses `en`, `zh-Hans`, `zh_CN.UTF-8` and similar spellings.
    public init?(code: String) {
        let lowered = code.lowercased()
        if lowered.hasPrefix("zh") {
            self = .simplifiedChinese
        } else if lowered.hasPrefix("en") || lowered == "c" || lowered == "posix" || lowered.hasPrefix("c.") {
            self = .english
        } else {
            return nil
        }
    }

    /// The language the POSIX locale variables ask for (`LC_ALL`, then `LC_MESSAGES`, then `LANG`),
    /// English when none of them names a language Coffer has.
    public static func preferred(environment: [String: String]) -> Language {
        for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            guard let value = environment[key], !value.isEmpty else { continue }
            return Language(code: value) ?? .english
        }
        return .english
    }
}

/// A short text in every language Coffer speaks.
public struct LocalizedText: Sendable, Hashable {
    /// The English text.
    public var english: String
    /// The Chinese text, in simplified characters.
    public var chinese: String

    /// A text in English and in Chinese.
    public init(_ english: String, _ chinese: String) {
        self.english = english
        self.chinese = chinese
    }

    /// The text in `language`.
    public func callAsFunction(_ language: Language) -> String {
        switch language {
        case .english: english
        case .simplifiedChinese: chinese
        }
    }
}
