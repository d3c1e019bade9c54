/// A uniform type identifier as Coffer knows it: conformance, extensions, MIME types.
public struct FileType: Sendable, Hashable, Codable, Identifiable {
    /// `public.jpeg`, `com.adobe.pdf`…
    public var id: String
    /// Identifiers this type directly conforms to.
    public var conformsTo: [String]
    /// Lowercased extensions without the dot; the first is the preferred one.
    public var extensions: [String]
    /// Lowercased MIME types; the first is the preferred one.
    public var mimeTypes: [String]
    /// The name a person reads in English (`JPEG image`).
    public var englishName: String
    /// The name in Chinese.
    public var chineseName: String
    /// Declared by the operating systems (Apple's core types). Applications must not
    /// declare these again; the others (Markdown, say) they import themselves.
    public var isSystem: Bool
    /// Rules that recognise the type by content, declared by an application (the system's
    /// types are left to libmagic).
    public var magic: [ContentMagic]

    /// A type; its Chinese name defaults to the English one.
    public init(id: String, conformsTo: [String] = [], extensions: [String] = [], mimeTypes: [String] = [],
                englishName: String, chineseName: String? = nil, isSystem: Bool = false, magic: [ContentMagic] = []) {
        self.id = id
        self.conformsTo = conformsTo
        self.extensions = extensions.map { $0.lowercased() }
        self.mimeTypes = mimeTypes.map { $0.lowercased() }
        self.englishName = englishName
        self.chineseName = chineseName ?? englishName
        self.isSystem = isSystem
        self.magic = magic
    }

    /// The name a person reads, in `language`.
    public func name(in language: Language) -> String {
        language == .english ? englishName : chineseName
    }

    private enum CodingKeys: String, CodingKey {
        case id, conformsTo, extensions = "ext", mimeTypes = "mime", englishName = "en", chineseName = "zh"
        case isSystem = "system", magic
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try container.decode(String.self, forKey: .id),
                  conformsTo: try container.decodeIfPresent([String].self, forKey: .conformsTo) ?? [],
                  extensions: try container.decodeIfPresent([String].self, forKey: .extensions) ?? [],
                  mimeTypes: try container.decodeIfPresent([String].self, forKey: .mimeTypes) ?? [],
                  englishName: try container.decode(String.self, forKey: .englishName),
                  chineseName: try container.decodeIfPresent(String.self, forKey: .chineseName),
                  // In types.json every type is a system type unless marked otherwise.
                  isSystem: try container.decodeIfPresent(Bool.self, forKey: .isSystem) ?? true,
                  magic: try container.decodeIfPresent([ContentMagic].self, forKey: .magic) ?? [])
    }
}

extension FileType {
    /// Identifiers used by Coffer itself.
    public enum Identifier {
        /// Anything.
        public static let item = "public.item"
        /// Any file of bytes.
        public static let data = "public.data"
        /// A folder shown to the user.
        public static let folder = "public.folder"
        /// A directory of the file system: folders and packages.
        public static let directory = "public.directory"
        /// A folder shown as one document.
        public static let package = "com.apple.package"
        /// A folder of an application's code and resources.
        public static let bundle = "com.apple.bundle"
        /// A symbolic link.
        public static let symbolicLink = "public.symlink"
        /// Any text.
        public static let text = "public.text"
        /// Text without markup.
        public static let plainText = "public.plain-text"
    }
}
