import Foundation

/// An application's document types, in one JSON file (`DocumentTypes.json`): what it opens
/// and the types it declares. The runtime registry reads it, and the
/// `generate-document-types` plugin turns it into Info.plist entries, so both always agree.
///
/// The schema is documented in `Documentation/DocumentTypes.md`.
public struct DocumentTypesManifest: Codable, Sendable, Equatable {
    public var supportsOpeningDocumentsInPlace: Bool?
    public var fileSharingEnabled: Bool?
    public var supportsDocumentBrowser: Bool?
    public var documentTypes: [DocumentType]
    public var exportedTypes: [DeclaredType]
    public var importedTypes: [DeclaredType]

    /// A kind of document the application opens (an entry of `CFBundleDocumentTypes`).
    public struct DocumentType: Codable, Sendable, Equatable {
        public var name: String
        /// `Editor`, `Viewer`, `Shell`, `QLGenerator` or `None`.
        public var role: String
        /// `Owner`, `Default`, `Alternate` or `None`.
        public var rank: String
        public var contentTypes: [String]
        public var isPackage: Bool?
        public var iconFiles: [String]?

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
        public var identifier: String
        public var description: String
        public var conformsTo: [String]
        public var extensions: [String]
        public var mimeTypes: [String]
        public var iconFiles: [String]?
        public var referenceURL: String?

        public init(identifier: String, description: String, conformsTo: [String], extensions: [String] = [],
                    mimeTypes: [String] = [], iconFiles: [String]? = nil, referenceURL: String? = nil) {
            self.identifier = identifier
            self.description = description
            self.conformsTo = conformsTo
            self.extensions = extensions
            self.mimeTypes = mimeTypes
            self.iconFiles = iconFiles
            self.referenceURL = referenceURL
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
        }
    }

    public init(supportsOpeningDocumentsInPlace: Bool? = nil, fileSharingEnabled: Bool? = nil,
                supportsDocumentBrowser: Bool? = nil, documentTypes: [DocumentType] = [],
                exportedTypes: [DeclaredType] = [], importedTypes: [DeclaredType] = []) {
        self.supportsOpeningDocumentsInPlace = supportsOpeningDocumentsInPlace
        self.fileSharingEnabled = fileSharingEnabled
        self.supportsDocumentBrowser = supportsDocumentBrowser
        self.documentTypes = documentTypes
        self.exportedTypes = exportedTypes
        self.importedTypes = importedTypes
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        supportsOpeningDocumentsInPlace = try container.decodeIfPresent(Bool.self, forKey: .supportsOpeningDocumentsInPlace)
        fileSharingEnabled = try container.decodeIfPresent(Bool.self, forKey: .fileSharingEnabled)
        supportsDocumentBrowser = try container.decodeIfPresent(Bool.self, forKey: .supportsDocumentBrowser)
        documentTypes = try container.decodeIfPresent([DocumentType].self, forKey: .documentTypes) ?? []
        exportedTypes = try container.decodeIfPresent([DeclaredType].self, forKey: .exportedTypes) ?? []
        importedTypes = try container.decodeIfPresent([DeclaredType].self, forKey: .importedTypes) ?? []
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
        func at(_ path: [any CodingKey]) -> String {
            path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingPrefix(".").description
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(at(context.codingPath + [key])): missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(at(context.codingPath)): \(context.debugDescription)"
        case .dataCorrupted(let context): return "\(at(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    /// The declared types as registry entries, exported ones first.
    public var declaredFileTypes: [FileType] {
        (exportedTypes + importedTypes).map { declared in
            FileType(id: declared.identifier, conformsTo: declared.conformsTo, extensions: declared.extensions,
                     mimeTypes: declared.mimeTypes, englishName: declared.description)
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
