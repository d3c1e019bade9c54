/// What a file is by its name, what it is by its content, and what Coffer takes it to be.
///
/// Names can lie (seed 001 §5.3: a text file called `photo.png`), so the content has the
/// last word, but content sniffing is coarse where names are precise: libmagic says
/// `text/plain` for Markdown and `application/zip` for formats built on zip. The rules:
/// - content that says nothing (an empty file, no sniffer) leaves the name's type;
/// - content that is a broader type of the name's (`public.plain-text` for `notes.md`)
///   confirms the name, and the name's more precise type is kept;
/// - content that is a narrower type of the name's (a Word document in `x.zip`) wins;
/// - any two text types agree: the name decides which kind of text it is;
/// - unrecognised binary content (`application/octet-stream`) confirms any binary type
///   but contradicts a text type;
/// - otherwise the two disagree, and the content's type is used.
public struct TypeAssessment: Sendable, Hashable {
    /// The type from the file's extension.
    public var byName: String
    /// The type libmagic saw, mapped to the registry; `nil` when the content says nothing.
    public var byContent: String?
    /// The MIME type libmagic reported.
    public var contentMIMEType: String?
    /// The type Coffer uses when filtering by type.
    public var effective: String
    /// Whether the content contradicts the name.
    public var isMismatch: Bool

    /// An assessment by name alone (folders, links, backends that cannot be read).
    public init(byName: String) {
        self.init(byName: byName, byContent: nil, contentMIMEType: nil, effective: byName, isMismatch: false)
    }

    init(byName: String, byContent: String?, contentMIMEType: String?, effective: String, isMismatch: Bool) {
        self.byName = byName
        self.byContent = byContent
        self.contentMIMEType = contentMIMEType
        self.effective = effective
        self.isMismatch = isMismatch
    }
}

extension TypeRegistry {
    /// The registry type for a MIME type reported by content sniffing, falling back on
    /// the family (`text/…` is plain text, `image/…` an image); `nil` for “empty”.
    public func typeIdentifier(forContentMIMEType mime: String?) -> String? {
        guard let mime = mime?.lowercased(), !mime.isEmpty else { return nil }
        if mime == "inode/x-empty" || mime == "application/x-empty" { return nil }
        if let type = type(forMIMEType: mime) { return type.id }
        let family = mime.split(separator: "/").first.map(String.init) ?? ""
        switch family {
        case "text": return FileType.Identifier.plainText
        case "image": return "public.image"
        case "audio": return "public.audio"
        case "video": return "public.movie"
        case "font": return "public.font"
        case "inode": return mime == "inode/directory" ? FileType.Identifier.folder : FileType.Identifier.item
        default: return FileType.Identifier.data
        }
    }

    /// Weighs a file's name against what its content was sniffed as.
    public func assess(fileNamed name: String, contentMIMEType mime: String?) -> TypeAssessment {
        let byName = typeIdentifier(forFileNamed: name)
        let byContent = typeIdentifier(forContentMIMEType: mime)
        var assessment = TypeAssessment(byName: byName, byContent: byContent, contentMIMEType: mime,
                                        effective: byName, isMismatch: false)
        guard let byContent, byContent != byName else { return assessment }
        let text = FileType.Identifier.text
        let nameIsText = conforms(byName, to: text)
        if byContent == FileType.Identifier.data {
            // Unrecognised binary: fine for binary formats, not for a text file.
            if nameIsText {
                assessment.effective = byContent
                assessment.isMismatch = true
            }
        } else if conforms(byName, to: byContent) || (nameIsText && conforms(byContent, to: text)) {
            // The content confirms the name, which is more precise.
        } else if conforms(byContent, to: byName) {
            assessment.effective = byContent
        } else {
            assessment.effective = byContent
            assessment.isMismatch = true
        }
        return assessment
    }

    /// Whether a file of type `id` may pass a filter of `allowed` types (conformance: an
    /// allowed `public.image` admits `public.png`). An empty filter admits everything.
    public func admits(_ id: String, allowed: [String]) -> Bool {
        allowed.isEmpty || allowed.contains { conforms(id, to: $0) }
    }
}
