import Foundation

/// What a person reads when an operation fails: one sentence that says what happened,
/// and one that says what to do next.
public struct UserMessage: Sendable, Hashable, CustomStringConvertible {
    /// What happened, in one sentence.
    public var text: String
    /// What to do next, in one sentence; empty when there is nothing to do.
    public var hint: String

    /// The sentence and the hint, as one line.
    public var description: String { hint.isEmpty ? text : "\(text) \(hint)" }
}

/// Hints a front end gives in its own words instead of Core's, which name no command or
/// method: the REPL names its commands (“Run “mounts”…”), the JSON-RPC server its methods.
/// A kind a front end leaves out keeps Core's hint.
public struct MessageHints: Sendable {
    private let hints: [CofferError.Kind: LocalizedText]

    /// A front end's hints, by kind.
    public init(_ hints: [CofferError.Kind: LocalizedText] = [:]) { self.hints = hints }

    /// Core's hints only.
    public static let none = MessageHints()

    /// The front end's hint for `kind`, if it has one.
    public subscript(kind: CofferError.Kind) -> LocalizedText? { hints[kind] }
}

extension CofferError {
    /// The detail, when it is one of the identifiers the message catalog words for this kind
    /// (`folder-in-the-way`, `pattern-too-large`): stable, for programs to switch on, as the
    /// kind is. `nil` for a detail that is free text, or none.
    public var detailIdentifier: String? {
        guard let detail, MessageCatalog.shared.entry(for: kind).forDetail?[detail] != nil else { return nil }
        return detail
    }

    /// The message for this error in `language`, naming the virtual path (never a host
    /// path), with the hint for its detail, else the front end's hint for its kind where it
    /// gives one.
    ///
    /// The sentences are data, in `messages.json` (compiled in): per kind, a template for
    /// each of the facts an error may carry — `item+detail`, `item`, `detail`, `none` — of
    /// which the most specific one present is used, with `{item}` (the quoted virtual path),
    /// `{detail}` and, for names, `{reason}` filled in.
    public func userMessage(in language: Language, hints: MessageHints = .none) -> UserMessage {
        let entry = MessageCatalog.shared.entry(for: kind)
        let item = path.map { "“\($0.description)”" }
        var templates = entry.text
        if let detail, let special = entry.forDetail?[detail] { templates = special }
        let template: MessageCatalog.Phrase? = switch (item, detail) {
        case (.some, .some): templates["item+detail"] ?? templates["item"] ?? templates["none"]
        case (.some, nil): templates["item"] ?? templates["none"]
        case (nil, .some): templates["detail"] ?? templates["none"]
        case (nil, nil): templates["none"]
        }
        var text = template.map { $0(language) } ?? kind.identifier
        text = text.replacingOccurrences(of: "{item}", with: item ?? "")
            .replacingOccurrences(of: "{detail}", with: detail ?? "")
        if let reasons = entry.reasons {
            let reason = detail.flatMap { reasons[$0] } ?? reasons["*"]
            text = text.replacingOccurrences(of: "{reason}", with: reason.map { $0(language) } ?? "")
        }
        // A hint for the very case (the detail's) is more to the point than the front end's
        // for the whole kind, which is more to the point than Core's.
        let hint = detail.flatMap { entry.hintForDetail?[$0] }.map { $0(language) }
            ?? hints[kind]?(language) ?? entry.hint(language)
        return UserMessage(text: text, hint: hint)
    }
}

/// Every kind's sentences in every language, read once from `messages.json`.
///
/// A kind the file lacks (a test proves none does) gets its identifier as its message, never
/// a crash.
struct MessageCatalog: Sendable {
    /// One sentence in both languages.
    struct Phrase: Decodable, Sendable {
        var english: String
        var chinese: String

        private enum Keys: String, CodingKey {
            case english = "en"
            case chinese = "zh-Hans"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            english = try container.decode(String.self, forKey: .english)
            chinese = try container.decode(String.self, forKey: .chinese)
        }

        func callAsFunction(_ language: Language) -> String { LocalizedText(english, chinese)(language) }
    }

    struct Entry: Decodable, Sendable {
        /// Templates by the facts they use: `item+detail`, `item`, `detail`, `none`.
        var text: [String: Phrase]
        /// Other templates for particular details (`unsupported`'s `not-text`).
        var forDetail: [String: [String: Phrase]]?
        /// What `{reason}` says, by detail (`*` for any other).
        var reasons: [String: Phrase]?
        var hint: Phrase
        /// Other hints for particular details (`readOnly`'s `read-only-storage`).
        var hintForDetail: [String: Phrase]?
    }

    let entries: [String: Entry]

    static let shared = MessageCatalog(data: Data(PackageResources.messages_json))

    init(data: Data) {
        entries = (try? JSONDecoder().decode([String: Entry].self, from: data)) ?? [:]
    }

    func entry(for kind: CofferError.Kind) -> Entry {
        entries[kind.identifier] ?? Entry(text: [:], forDetail: nil, reasons: nil,
                                          hint: Phrase(english: "", chinese: ""), hintForDetail: nil)
    }
}

extension MessageCatalog.Phrase {
    init(english: String, chinese: String) {
        self.english = english
        self.chinese = chinese
    }
}
