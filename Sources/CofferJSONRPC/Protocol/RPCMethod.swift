public import CofferCore
import FileService
import Foundation

/// One request type of the protocol: its name, its params, its result, and what it does.
///
/// A method is one type conforming to this protocol, registered in an
/// ``RPCMethodRegistry``: Coffer's own are in ``RPCMethodRegistry/standard``, and an
/// application adds its own the way it adds mounts (`CofferApplication(extraMethods:)`).
/// Params are decoded from the request's `params` object (a missing or mistyped field is
/// `-32602` naming it); the result is encoded as the response's `result`. A `CofferError`
/// thrown by `run` becomes `-32803` with its kind and the user message; an ``RPCError`` is
/// sent as it is. A method turns params into an operation, performs it in the request's
/// session (``RequestContext/session``) and shapes the answer; it holds no file logic, and
/// the session writes the audit entry.
public protocol RPCMethod: Sendable {
    associatedtype Params: Decodable & Sendable
    associatedtype Result: Encodable & Sendable

    /// The method name on the wire (`files/list`).
    static var name: String { get }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result
}

/// A method that can often be answered at once, on the thread that read the request: a
/// read of metadata from storage that answers without waiting. The server tries
/// ``runImmediately(_:_:)`` first and falls back to ``RPCMethod/run(_:_:)`` when it returns
/// `nil`. It must never block for long: the connection reads nothing else meanwhile.
public protocol ImmediateRPCMethod: RPCMethod {
    static func runImmediately(_ params: Params, _ context: RequestContext) throws -> Result?
}

/// How Coffer's own ``ImmediateRPCMethod``s are answered: the default below is compiled for
/// each of them, where an application's method goes through the generic path, which looks
/// up its types at run time (a few microseconds a request, on the path `files/stat` takes).
protocol ImmediateAnswering: Sendable {
    /// The whole response, or `nil` to run the request as a task after all.
    static func answerImmediately(params: Data?, id: RequestID, context: RequestContext) throws -> Data?
}

extension ImmediateAnswering where Self: ImmediateRPCMethod {
    static func answerImmediately(params: Data?, id: RequestID, context: RequestContext) throws -> Data? {
        guard let result = try runImmediately(try RPCConnection.params(of: Self.self, from: params), context) else { return nil }
        return try RPCConnection.response(encoding: result, id: id)
    }
}

/// The limits announced by `initialize`.
public struct RPCLimits: Sendable {
    /// The longest message accepted; longer ones are refused and skipped.
    public var maxMessageBytes = 16 << 20
    /// The most bytes one `files/upload/append` may carry (decoded).
    public var maxChunkBytes = 4 << 20
    /// The most requests of one connection that run at once; others wait their turn in
    /// order of arrival (and can be cancelled while they wait).
    public var maxRequestsInFlight = 64
    /// The most requests of one connection read and not yet answered; past it the server
    /// reads no more from that connection until answers have gone out.
    public var maxQueuedRequests = 1024
    /// The most bytes of requests and their answers one connection may have pending; a
    /// client that leaves more than this unread behind a stalled write, or twice it at all,
    /// has its connection closed (``UnsentBound``).
    public var maxPendingBytes = 64 << 20
    /// The most requests of one connection that build a large answer at once (`files/read`,
    /// `files/thumbnail`, MCP's reads); the others wait their turn.
    public var maxLargeAnswersInFlight = 2

    public init() {}
}

/// The methods a server answers, by name.
public struct RPCMethodRegistry: Sendable {
    /// A method, and the same method when it may be answered at once (cast once here
    /// rather than for every request).
    struct Entry: Sendable {
        var method: any RPCMethod.Type
        var immediate: (any ImmediateRPCMethod.Type)?
        /// Coffer's own immediate methods: their answer compiled for each of them.
        var answering: (any ImmediateAnswering.Type)?
    }

    private let entries: [String: Entry]

    /// Coffer's own methods.
    public static let standard = RPCMethodRegistry(uniqueMethods: [
        Initialize.self, Shutdown.self,
        FilesList.self, FilesStat.self, FilesCreateDirectory.self, FilesRename.self, FilesMove.self, FilesCopy.self,
        FilesTrash.self, FilesVersions.self, FilesRestoreVersion.self, SessionChangesMethod.self, SessionUndoMethod.self,
        FilesRead.self, FilesFetch.self, FilesWrite.self, FilesSearch.self, FilesWatch.self, FilesUnwatch.self,
        UploadBegin.self, UploadAppend.self, UploadCommit.self, UploadAbort.self,
        TrashList.self, TrashRestore.self, TrashEmpty.self,
        HostImport.self, HostExport.self, HostOpen.self, BookmarksList.self,
        TypesDescribe.self, TransfersDownload.self, TransfersList.self, TransfersClear.self, TransfersUpload.self,
        FilesPreview.self, FilesThumbnail.self, FilesTagsSet.self, FilesTagsGet.self, FilesTagsList.self,
        FavouritesList.self, FavouritesAdd.self, FavouritesRemove.self, FilesRecent.self,
        SharesCreate.self, SharesList.self, SharesRevoke.self, FilesApplications.self, FilesOpenWith.self,
    ])

    /// Only these methods: a front end that speaks another protocol over JSON-RPC (MCP).
    /// - Throws: `invalidArgument` for a name given twice.
    public init(_ methods: [any RPCMethod.Type]) throws(CofferError) {
        var names = Set<String>()
        for method in methods where !names.insert(method.name).inserted {
            throw CofferError(.invalidArgument, detail: "the method “\(method.name)” is given twice")
        }
        self.init(uniqueMethods: methods)
    }

    private init(uniqueMethods: [any RPCMethod.Type]) {
        entries = Dictionary(uniqueKeysWithValues: uniqueMethods.map {
            ($0.name, Entry(method: $0, immediate: $0 as? any ImmediateRPCMethod.Type, answering: $0 as? any ImmediateAnswering.Type))
        })
    }

    /// These methods as well, for an application's own.
    /// - Throws: `invalidArgument` for a name already taken, or one the protocol keeps for
    ///   itself (`exit`, `$/…`, `rpc.…`).
    public func adding(_ added: [any RPCMethod.Type]) throws(CofferError) -> RPCMethodRegistry {
        var all = entries.values.map(\.method)
        var names = Set(entries.keys)
        for method in added {
            let name = method.name
            guard !name.isEmpty, name != "exit", !name.hasPrefix("$/"), !name.hasPrefix("rpc.") else {
                throw CofferError(.invalidArgument, detail: "the method name “\(name)” is kept for the protocol")
            }
            guard names.insert(name).inserted else {
                throw CofferError(.invalidArgument, detail: "the method “\(name)” is already defined")
            }
            all.append(method)
        }
        return RPCMethodRegistry(uniqueMethods: all)
    }

    /// The method called `name`.
    public func method(named name: String) -> (any RPCMethod.Type)? { entries[name]?.method }

    /// The method called `name`, with whether it may be answered at once.
    func entry(named name: String) -> Entry? { entries[name] }

    /// Every method's name, sorted.
    public var names: [String] { entries.keys.sorted() }
}
