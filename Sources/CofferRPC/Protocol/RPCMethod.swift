import CofferCore
import FileService
import Foundation

/// One request type of the protocol: its name, its params, its result, and what it does.
///
/// A method is one file: a type conforming to this protocol, plus one line in
/// ``RPCMethods/all``. Params are decoded from the request's `params` object (a missing or
/// mistyped field is `-32602` naming it); the result is encoded as the response's `result`.
/// A `CofferError` thrown by `run` becomes `-32803` with its kind and the user message.
/// Methods call `FileService` and shape its answers; they hold no file logic.
protocol RPCMethod: Sendable {
    associatedtype Params: Decodable & Sendable
    associatedtype Result: Encodable & Sendable

    /// The method name on the wire (`files/list`).
    static var name: String { get }
    /// Whether a successful call changes something; such calls go to the audit log.
    static var changesFiles: Bool { get }
    /// The virtual paths the audit log records for a call.
    static func auditedPaths(_ params: Params) -> [String]

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result
}

extension RPCMethod {
    static var changesFiles: Bool { false }
    static func auditedPaths(_ params: Params) -> [String] { [] }
}

/// What a method may use while it runs.
struct RequestContext: Sendable {
    let service: FileService
    /// The session's language, for messages that methods build themselves.
    let language: Language
    let limits: RPCLimits
    /// Reports to `$/progress` when the request carried a `workDoneToken`; discards otherwise.
    let progress: ProgressReporter
    /// The host folders `--allow-host` named.
    let allowedHostFolders: [String]
    /// The server's own state, for the lifecycle methods.
    let session: RPCSessionInfo
    /// The session's watches (`files/watch`).
    let watches: WatchRegistry
}

/// What `initialize` reports about the server.
struct RPCSessionInfo: Sendable {
    var name: String
    var version: String
}

/// The limits announced by `initialize`.
public struct RPCLimits: Sendable {
    /// The longest message accepted; longer ones are refused and skipped.
    public var maxMessageBytes = 16 << 20
    /// The most bytes `files/read` returns and `files/write` accepts at once (decoded).
    public var maxInlineBytes = 8 << 20
    /// The most bytes one `files/upload/append` may carry (decoded).
    public var maxChunkBytes = 4 << 20

    public init() {}
}

/// Every method the server answers. Adding a method: write its type, add it here.
enum RPCMethods {
    static let all: [any RPCMethod.Type] = [
        Initialize.self, Shutdown.self,
        FilesList.self, FilesStat.self, FilesCreateDirectory.self, FilesRename.self, FilesMove.self, FilesCopy.self,
        FilesTrash.self, FilesRead.self, FilesWrite.self, FilesSearch.self, FilesWatch.self, FilesUnwatch.self,
        UploadBegin.self, UploadAppend.self, UploadCommit.self, UploadAbort.self,
        TrashList.self, TrashRestore.self, TrashEmpty.self,
        HostImport.self, HostExport.self, HostOpen.self, BookmarksList.self,
        TypesDescribe.self,
    ]

    static let byName: [String: any RPCMethod.Type] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
}
