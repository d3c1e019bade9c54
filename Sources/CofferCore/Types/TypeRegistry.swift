public import Foundation

/// The uniform type identifiers Coffer knows, with their conformance graph.
///
/// The standard registry is read from `types.json`, a data file compiled into the
/// module; applications may extend it with their own declarations (the same ones
/// the Info.plist generator reads), which take precedence for lookups.
public struct TypeRegistry: Sendable {
    private var types: [String: FileType] = [:]
    private var byExtension: [String: String] = [:]
    private var byMIMEType: [String: String] = [:]
    /// Every identifier each type conforms to, itself included (transitive closure).
    private var closure: [String: Set<String>] = [:]
    /// The types with content rules, the last declared first (declarations win).
    private var magicTypes: [String] = []

    /// The system-declared types shipped with Coffer.
    public static let standard: TypeRegistry = {
        do {
            return try TypeRegistry(jsonData: Data(PackageResources.types_json))
        } catch {
            preconditionFailure("types.json in CofferCore is malformed: \(error)")
        }
    }()

    /// A registry from a JSON document shaped like `types.json` (`{"types": [...]}`).
    public init(jsonData: Data) throws {
        struct Document: Decodable { var types: [FileType] }
        let document = try JSONDecoder().decode(Document.self, from: jsonData)
        self.init(types: document.types)
    }

    /// A registry of these types; for a shared extension or MIME type the first one wins.
    public init(types: [FileType]) {
        for type in types { insert(type, overriding: false) }
        rebuildClosure()
    }

    /// This registry plus `declared` types, which win lookups by extension and MIME type.
    public func adding(_ declared: [FileType]) -> TypeRegistry {
        var copy = self
        for type in declared { copy.insert(type, overriding: true) }
        copy.rebuildClosure()
        return copy
    }

    private mutating func insert(_ type: FileType, overriding: Bool) {
        types[type.id] = type
        magicTypes.removeAll { $0 == type.id }
        if !type.magic.isEmpty { magicTypes.insert(type.id, at: 0) }
        for ext in type.extensions where overriding || byExtension[ext] == nil { byExtension[ext] = type.id }
        for mime in type.mimeTypes where overriding || byMIMEType[mime] == nil { byMIMEType[mime] = type.id }
    }

    private mutating func rebuildClosure() {
        var closure: [String: Set<String>] = [:]
        func visit(_ id: String, _ seen: inout Set<String>) {
            guard seen.insert(id).inserted, let type = types[id] else { return }
            for parent in type.conformsTo { visit(parent, &seen) }
        }
        for id in types.keys {
            var seen = Set<String>()
            visit(id, &seen)
            closure[id] = seen
        }
        self.closure = closure
    }

    /// How many leading bytes of a file the content rules of declared types look at; 0 when
    /// no type has any.
    public var magicReach: Int {
        magicTypes.lazy.compactMap { self.types[$0] }.flatMap(\.magic).map(\.reach).max() ?? 0
    }

    /// The MIME type of the declared type whose content rules the file starting with `sample`
    /// matches, or `nil` when none does (or no type declares any).
    public func mimeType(matchingDeclaredMagicIn sample: [UInt8]) -> String? {
        for id in magicTypes {
            guard let type = types[id], let mime = type.mimeTypes.first else { continue }
            if type.magic.contains(where: { $0.matches(sample) }) { return mime }
        }
        return nil
    }

    /// Every known type.
    public var allTypes: [FileType] { types.values.sorted { $0.id < $1.id } }

    /// The type with this identifier.
    public func type(withIdentifier id: String) -> FileType? { types[id] }

    /// The type for a file extension (case-insensitive, without the dot).
    public func type(forExtension ext: String) -> FileType? {
        byExtension[Self.lowercased(Substring(ext))].flatMap { types[$0] }
    }

    /// The type for a MIME type (case-insensitive; parameters such as `; charset=` are ignored).
    /// The MIME type a file of type `id` is sent as: the type's first, else `text/plain` for
    /// text and `application/octet-stream` for anything else.
    public func mimeType(of id: String) -> String {
        if let mime = type(withIdentifier: id)?.mimeTypes.first { return mime }
        return conforms(id, to: "public.text") ? "text/plain" : "application/octet-stream"
    }

    /// The type a MIME type stands for (parameters such as `; charset=utf-8` ignored), if one
    /// is registered.
    public func type(forMIMEType mime: String) -> FileType? {
        let bare = mime.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return byMIMEType[bare].flatMap { types[$0] }
    }

    /// The MIME types a type stands for: its own; for an abstract type without any
    /// (`public.image`), those of the registered types that conform to it, in identifier order.
    public func mimeTypes(standingFor id: String) -> [String] {
        if let own = type(withIdentifier: id)?.mimeTypes, !own.isEmpty { return own }
        var found: [String] = []
        for type in allTypes where type.id != id && conforms(type.id, to: id) {
            for mime in type.mimeTypes where !found.contains(mime) { found.append(mime) }
        }
        return found
    }

    /// Whether `id` is `parent` or conforms to it, directly or through others.
    public func conforms(_ id: String, to parent: String) -> Bool {
        if id == parent { return true }
        return closure[id]?.contains(parent) ?? false
    }

    /// Every identifier `id` conforms to, itself included.
    public func supertypes(of id: String) -> Set<String> { closure[id] ?? [id] }

    /// The type of a file named `name`, from its last extension; `public.data` when unknown.
    public func typeIdentifier(forFileNamed name: String) -> String {
        guard let ext = Self.lastExtension(of: name), let id = byExtension[Self.lowercased(ext)], types[id] != nil else {
            return FileType.Identifier.data
        }
        return id
    }

    /// An extension in lower case: by bytes when it is ASCII (nearly always; asked for every
    /// file of a listing), else as `String.lowercased()` does.
    private static func lowercased(_ ext: Substring) -> String {
        // Most extensions are lower-case ASCII already: a short one becomes a small string
        // without any allocation.
        if ext.utf8.allSatisfy({ $0 < 0x80 && !($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) }) { return String(ext) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(ext.utf8.count)
        for byte in ext.utf8 {
            guard byte < 0x80 else { return ext.lowercased() }
            bytes.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The type of a folder named `name`: a package type when its extension declares one,
    /// else `public.folder`.
    public func typeIdentifier(forFolderNamed name: String) -> String {
        guard let ext = Self.lastExtension(of: name), let type = type(forExtension: String(ext)), isPackageType(type.id) else {
            return FileType.Identifier.folder
        }
        return type.id
    }

    /// Whether folders of this type are shown as single documents (packages and bundles).
    public func isPackageType(_ id: String) -> Bool {
        conforms(id, to: FileType.Identifier.package) || conforms(id, to: FileType.Identifier.bundle)
    }

    /// Whether a folder with this name is a package (`Photos.app`, `Notes.rtfd`).
    public func isPackage(folderNamed name: String) -> Bool {
        typeIdentifier(forFolderNamed: name) != FileType.Identifier.folder
    }

    static func lastExtension(of name: String) -> Substring? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        return ext.isEmpty ? nil : ext
    }
}

extension FileType {
    /// Whether this type conforms to `parent` in the standard registry.
    public func conforms(to parent: String, in registry: TypeRegistry = .standard) -> Bool {
        registry.conforms(id, to: parent)
    }
}
