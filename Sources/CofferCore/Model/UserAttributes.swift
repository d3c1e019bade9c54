import Synchronization

/// An item's `user.` extended attributes — its tags (`user.xdg.tags`), where it came from
/// (`user.xdg.origin.url`), its comment (`user.xdg.comment`), any other program's — as they
/// travel with a copy, a move across mounts, an import or an export: full names to values.
public typealias UserAttributes = [String: [UInt8]]

/// An attribute a copy could not keep, and why.
public struct LostAttribute: Sendable, Hashable {
    /// Why an attribute was not kept.
    public enum Reason: String, Sendable, Hashable, Codable {
        /// The target keeps no extended attributes (a file system without them, a backend
        /// without them, a folder on S3, which is only a prefix).
        case unsupported
        /// Beyond the target's room for them: S3's 2 KB of metadata, a file system's limit.
        case tooLarge
        /// The name cannot be one of the target's: S3 metadata names are lowercase letters,
        /// digits, dots and underscores.
        case unnamable
    }

    /// The attribute's full name (`user.xdg.tags`).
    public var name: String
    /// Why it was not kept.
    public var reason: Reason

    /// `name`, lost for `reason`.
    public init(_ name: String, _ reason: Reason) {
        self.name = name
        self.reason = reason
    }

    /// Every one of `attributes`, lost for `reason`.
    public static func all(_ attributes: UserAttributes, _ reason: Reason) -> [LostAttribute] {
        attributes.keys.sorted().map { LostAttribute($0, reason) }
    }
}

/// A backend whose folders (and files) carry `user.` attributes of their own, so that a
/// folder copied into it or out of it keeps them. Files' attributes travel with their
/// content, through ``ReadableFile/userAttributes()`` and ``PendingWrite/setUserAttributes(_:)``.
///
/// With it, copies, imports and exports keep a folder's attributes (its tags, its comment)
/// instead of reporting them as not kept (``OperationWarning``).
public protocol AttributeKeepingBackend: StorageBackend {
    /// The `user.` attributes of the item at `path`.
    /// - Throws: `noSuchFile` when there is no such item; `noPermission`, `ioError` from the store.
    func userAttributes(at path: VirtualPath) async throws -> UserAttributes
    /// Gives the item at `path` these attributes, beside those it has; returns those it could
    /// not keep (all of them, ``LostAttribute/Reason/unsupported``, on storage without any).
    /// - Throws: `noSuchFile` when there is no such item; `readOnly` for a backend that is not
    ///   writable; `noPermission`, `ioError` from the store.
    func setUserAttributes(_ attributes: UserAttributes, at path: VirtualPath) async throws -> [LostAttribute]
    /// Takes the attributes `names` from the item at `path`; a name it does not carry is
    /// passed over. (A backend written before this requirement inherits one that throws
    /// `unsupported`.)
    /// - Throws: `noSuchFile` when there is no such item; `readOnly` for a backend that is not
    ///   writable; `noPermission`, `ioError` from the store.
    func removeUserAttributes(_ names: [String], at path: VirtualPath) async throws
    /// The `user.` attributes of the items `names` in `folder`, by name, as a listing asks for
    /// them; items with none, and names that are gone, are left out. The default asks
    /// ``userAttributes(at:)`` item by item; a backend that can open the folder once does better.
    /// - Throws: `noSuchFile` when the folder is missing; `noPermission`, `ioError` from the store.
    func userAttributes(ofItemsNamed names: [String], in folder: VirtualPath) async throws -> [String: UserAttributes]
}

extension AttributeKeepingBackend {
    public func userAttributes(ofItemsNamed names: [String], in folder: VirtualPath) async throws -> [String: UserAttributes] {
        var found: [String: UserAttributes] = [:]
        for name in names {
            if let attributes = try? await userAttributes(at: folder.appending(name)), !attributes.isEmpty { found[name] = attributes }
        }
        return found
    }

    /// Throws `unsupported`: the backend keeps attributes but cannot take one away.
    public func removeUserAttributes(_ names: [String], at path: VirtualPath) async throws {
        throw CofferError(.unsupported, path: path, detail: "attributes cannot be removed here")
    }
}

extension StorageBackend {
    /// Gives the item at `path` these attributes where the backend keeps any
    /// (``AttributeKeepingBackend``), and returns those it did not keep: all of them elsewhere,
    /// or when setting them failed.
    public func keep(_ attributes: UserAttributes, at path: VirtualPath) async -> [LostAttribute] {
        guard !attributes.isEmpty else { return [] }
        guard let keeping = self as? any AttributeKeepingBackend,
              let lost = try? await keeping.setUserAttributes(attributes, at: path)
        else { return LostAttribute.all(attributes, .unsupported) }
        return lost
    }
}

/// Something an operation could not do that did not make it fail, told beside its answer
/// in every front end: today, attributes a copy could not keep (never dropped in silence).
public struct OperationWarning: Sendable, Hashable, Encodable {
    /// What a warning is about.
    public enum Kind: String, Sendable, Hashable, Encodable {
        /// A copy, move, import or export did not keep some of an item's `user.` attributes.
        case attributesNotKept
    }

    /// What it is about.
    public var kind: Kind
    /// The item copied, as the caller named it: a virtual path, or a host path on import.
    public var path: String
    /// The attributes' full names (`user.xdg.tags`).
    public var attributes: [String]
    /// Why they were not kept.
    public var reason: LostAttribute.Reason

    /// A warning that the copy of `path` did not keep `attributes`, for `reason`.
    public init(attributesOf path: String, notKept attributes: [String], because reason: LostAttribute.Reason) {
        self.kind = .attributesNotKept
        self.path = path
        self.attributes = attributes
        self.reason = reason
    }

    /// One warning per reason for the attributes of `path` that were lost.
    public static func attributes(of path: String, _ lost: [LostAttribute]) -> [OperationWarning] {
        var byReason: [LostAttribute.Reason: [String]] = [:]
        for attribute in lost { byReason[attribute.reason, default: []].append(attribute.name) }
        return byReason.sorted { $0.key.rawValue < $1.key.rawValue }.map {
            OperationWarning(attributesOf: path, notKept: $0.value.sorted(), because: $0.key)
        }
    }

    /// In words for people.
    public func message(_ language: Language) -> String {
        let names = attributes.joined(separator: ", ")
        let why: LocalizedText = switch reason {
        case .unsupported: LocalizedText("the destination keeps no extended attributes", "目标不保存扩展属性")
        case .tooLarge: LocalizedText("they do not fit in the destination's room for attributes (S3 metadata: 2 KB)",
                                      "超出目标可存放的属性大小（S3 元数据上限 2 KB）")
        case .unnamable: LocalizedText("the destination cannot name them (S3 metadata names are lowercase letters, digits, dots and underscores)",
                                       "目标无法使用这些名称（S3 元数据名称只能含小写字母、数字、点和下划线）")
        }
        return LocalizedText("“\(path)”: the copy did not keep \(names): \(why.english)",
                             "“\(path)”：副本未保留 \(names)：\(why.chinese)")(language)
    }

    private enum CodingKeys: String, CodingKey { case kind, path, attributes, reason }
}

/// The warnings of the operation running in this task, collected where it runs and handed
/// to its front end: the REPL prints them, RPC and the web page answer them in `warnings`
/// beside the result, MCP in the tool's text.
///
/// Whatever reports one (``report(_:)``) needs no path back to the caller; blocking work
/// on Dispatch threads reports into the same collector (`BlockingIO` carries it over).
public final class OperationWarnings: Sendable {
    /// The collector of the operation running in this task, if its front end listens.
    @TaskLocal public static var current: OperationWarnings?

    private let warnings = Mutex<[OperationWarning]>([])

    /// An empty collector.
    public init() {}

    /// The warnings collected, in the order they came, each once.
    public var all: [OperationWarning] { warnings.withLock { $0 } }

    /// Adds `warning`, unless it is there already.
    public func add(_ warning: OperationWarning) {
        warnings.withLock { if !$0.contains(warning) { $0.append(warning) } }
    }

    /// Tells the running operation's front end, if one is listening.
    public static func report(_ warning: OperationWarning) { current?.add(warning) }

    /// Reports the attributes of `path` a copy lost, if any.
    public static func report(attributesOf path: String, lost: [LostAttribute]) {
        guard !lost.isEmpty, let current else { return }
        for warning in OperationWarning.attributes(of: path, lost) { current.add(warning) }
    }

    /// Runs `body` with a collector of its own, and returns what it returned with what it reported.
    public static func collect<T>(_ body: () async -> T,
                                  isolation: isolated (any Actor)? = #isolation) async -> (T, [OperationWarning]) {
        let collector = OperationWarnings()
        let outcome = await $current.withValue(collector) { await body() }
        return (outcome, collector.all)
    }
}
