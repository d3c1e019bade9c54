public import Foundation

/// An application's document types, in one JSON file (`DocumentTypes.json`): what it opens
/// and the types it declares. The runtime registry reads it, `coffer open-files` decides by
/// it what to do with a file handed in, and the `generate-document-types` plugin turns it
/// into Info.plist entries and — for the application it describes — a freedesktop.org
/// desktop entry and shared-mime-info package, so all of them always agree.
///
/// The schema is documented in `Documentation/DocumentTypes.md`.
public struct DocumentTypesManifest: Codable, Sendable, Equatable {
    /// `LSSupportsOpeningDocumentsInPlace`: documents are opened where they are, not copied.
    public var supportsOpeningDocumentsInPlace: Bool?
    /// `UIFileSharingEnabled`: the application's documents appear in the Files app and Finder.
    public var fileSharingEnabled: Bool?
    /// `UISupportsDocumentBrowser`: the application opens with a document browser.
    public var supportsDocumentBrowser: Bool?
    /// The kinds of document the application opens.
    public var documentTypes: [DocumentType]
    /// Types the application declares as its own.
    public var exportedTypes: [DeclaredType]
    /// Types of others the application declares because the system may not know them.
    public var importedTypes: [DeclaredType]
    /// The application on a Linux desktop; without it no desktop entry or MIME package is made.
    public var application: Application?

    /// How the application appears on a freedesktop.org desktop: its `.desktop` entry, and
    /// the name of the shared-mime-info package for its exported types.
    public struct Application: Codable, Sendable, Equatable {
        /// The entry's and the package's file name (`coffer` → `coffer.desktop`, `coffer.xml`);
        /// a reverse-DNS name (`org.example.Notes`) is recommended.
        public var id: String
        /// `Name=`, and `Name[xx]=` per language in `localizedNames` (BCP 47 keys: `zh-Hans`).
        public var name: String
        /// `Name[xx]=` per language.
        public var localizedNames: [String: String]?
        /// `Comment=` and its translations.
        public var comment: String?
        /// `Comment[xx]=` per language.
        public var localizedComments: [String: String]?
        /// The command line `Exec=` starts with; ` %F` (the files) is added.
        public var exec: String
        /// `Categories=`: main and additional categories of the Desktop Menu specification.
        public var categories: [String]
        /// `Terminal=`: whether it runs in a terminal.
        public var terminal: Bool?
        /// `Icon=`.
        public var icon: String?

        /// A desktop entry.
        public init(id: String, name: String, localizedNames: [String: String]? = nil, comment: String? = nil,
                    localizedComments: [String: String]? = nil, exec: String, categories: [String],
                    terminal: Bool? = nil, icon: String? = nil) {
            self.id = id
            self.name = name
            self.localizedNames = localizedNames
            self.comment = comment
            self.localizedComments = localizedComments
            self.exec = exec
            self.categories = categories
            self.terminal = terminal
            self.icon = icon
        }
    }

    /// A kind of document the application opens (an entry of `CFBundleDocumentTypes`).
    public struct DocumentType: Codable, Sendable, Equatable {
        /// `CFBundleTypeName`: the kind's name, shown to people.
        public var name: String
        /// `Editor`, `Viewer`, `Shell`, `QLGenerator` or `None`.
        public var role: String
        /// `Owner`, `Default`, `Alternate` or `None`.
        public var rank: String
        /// `LSItemContentTypes`: the uniform types of the kind.
        public var contentTypes: [String]
        /// `LSTypeIsPackage`: whether a document of the kind is a folder shown as one file.
        public var isPackage: Bool?
        /// `CFBundleTypeIconFiles`: the kind's icons.
        public var iconFiles: [String]?

        /// A document type.
        public init(name: String, role: String, rank: String, contentTypes: [String], isPackage: Bool? = nil,
                    iconFiles: [String]? = nil) {
            self.name = name
            self.role = role
            self.rank = rank
            self.contentTypes = contentTypes
            self.isPackage = isPackage
            self.iconFiles = iconFiles
        }
    }

    /// A uniform type the application declares: its own (exported) or another's (imported).
    public struct DeclaredType: Codable, Sendable, Equatable {
        /// `UTTypeIdentifier`: `org.example.notes`.
        public var identifier: String
        /// `UTTypeDescription`: the type's name, shown to people.
        public var description: String
        /// `UTTypeConformsTo`: the types it refines (`public.data`, `public.text`).
        public var conformsTo: [String]
        /// Extensions without the dot.
        public var extensions: [String]
        /// MIME types.
        public var mimeTypes: [String]
        /// `UTTypeIconFiles`.
        public var iconFiles: [String]?
        /// `UTTypeReferenceURL`: where the format is described.
        public var referenceURL: String?
        /// `description` in other languages (BCP 47 keys: `zh-Hans`): the MIME package's comments.
        public var localizedDescriptions: [String: String]?
        /// How to recognise a file of this type by its content (the MIME package's `magic`).
        public var magic: [ContentMagic]?

        /// A declared type.
        public init(identifier: String, description: String, conformsTo: [String], extensions: [String] = [],
                    mimeTypes: [String] = [], iconFiles: [String]? = nil, referenceURL: String? = nil,
                    localizedDescriptions: [String: String]? = nil, magic: [ContentMagic]? = nil) {
            self.identifier = identifier
            self.description = description
            self.conformsTo = conformsTo
            self.extensions = extensions
            self.mimeTypes = mimeTypes
            self.iconFiles = iconFiles
            self.referenceURL = referenceURL
            self.localizedDescriptions = localizedDescriptions
            self.magic = magic
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            identifier = try container.decode(String.self, forKey: .identifier)
            description = try container.decode(String.self, forKey: .description)
            conformsTo = try container.decodeIfPresent([String].self, forKey: .conformsTo) ?? []
            extensions = try container.decodeIfPresent([String].self, forKey: .extensions) ?? []
            mimeTypes = try container.decodeIfPresent([String].self, forKey: .mimeTypes) ?? []
            iconFiles = try container.decodeIfPresent([String].self, forKey: .iconFiles)
            referenceURL = try container.decodeIfPresent(String.self, forKey: .referenceURL)
            localizedDescriptions = try container.decodeIfPresent([String: String].self, forKey: .localizedDescriptions)
            magic = try container.decodeIfPresent([ContentMagic].self, forKey: .magic)
        }
    }

    /// A manifest.
    public init(supportsOpeningDocumentsInPlace: Bool? = nil, fileSharingEnabled: Bool? = nil,
                supportsDocumentBrowser: Bool? = nil, documentTypes: [DocumentType] = [],
                exportedTypes: [DeclaredType] = [], importedTypes: [DeclaredType] = [], application: Application? = nil) {
        self.supportsOpeningDocumentsInPlace = supportsOpeningDocumentsInPlace
        self.fileSharingEnabled = fileSharingEnabled
        self.supportsDocumentBrowser = supportsDocumentBrowser
        self.documentTypes = documentTypes
        self.exportedTypes = exportedTypes
        self.importedTypes = importedTypes
        self.application = application
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        supportsOpeningDocumentsInPlace = try container.decodeIfPresent(Bool.self, forKey: .supportsOpeningDocumentsInPlace)
        fileSharingEnabled = try container.decodeIfPresent(Bool.self, forKey: .fileSharingEnabled)
        supportsDocumentBrowser = try container.decodeIfPresent(Bool.self, forKey: .supportsDocumentBrowser)
        documentTypes = try container.decodeIfPresent([DocumentType].self, forKey: .documentTypes) ?? []
        exportedTypes = try container.decodeIfPresent([DeclaredType].self, forKey: .exportedTypes) ?? []
        importedTypes = try container.decodeIfPresent([DeclaredType].self, forKey: .importedTypes) ?? []
        application = try container.decodeIfPresent(Application.self, forKey: .application)
    }

    /// Reads a manifest. A JSON or shape error names where it is.
    public init(jsonData: Data) throws(CofferError) {
        do {
            self = try JSONDecoder().decode(Self.self, from: jsonData)
        } catch let error as DecodingError {
            throw CofferError(.corruptFile, detail: Self.describe(error))
        } catch {
            throw CofferError(.corruptFile, detail: "\(error)")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        /// `documentTypes[0].name: what is wrong` (no place for the document as a whole).
        func at(_ path: [any CodingKey], _ problem: String) -> String {
            let place = path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingPrefix(".")
            let reason = problem.hasSuffix(".") ? String(problem.dropLast()) : problem
            return place.isEmpty ? reason : "\(place): \(reason)"
        }
        switch error {
        case .keyNotFound(let key, let context): return at(context.codingPath + [key], "missing")
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return at(context.codingPath, context.debugDescription)
        @unknown default: return "\(error)"
        }
    }

    /// The declared types as registry entries, exported ones first.
    public var declaredFileTypes: [FileType] {
        (exportedTypes + importedTypes).map { declared in
            FileType(id: declared.identifier, conformsTo: declared.conformsTo, extensions: declared.extensions,
                     mimeTypes: declared.mimeTypes, englishName: declared.description, magic: declared.magic ?? [])
        }
    }

    /// `registry` with this manifest's types added (they win lookups by extension and MIME
    /// type). A type the registry already knows keeps its Chinese name.
    public func registry(extending registry: TypeRegistry = .standard) -> TypeRegistry {
        registry.adding(declaredFileTypes.map { declared in
            var type = declared
            if let known = registry.type(withIdentifier: declared.id) { type.chineseName = known.chineseName }
            return type
        })
    }
}
