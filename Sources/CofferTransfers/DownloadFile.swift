public import CofferCore
import CofferRuntime
@_spi(Engine) public import FileService
public import Foundation

/// Where downloads are remembered between processes: one JSON record each, written whole
/// (to a temporary name, then renamed), so a killed process leaves the last one saved.
/// Finished ones move to `done/`, so that what a start looks through for work left over
/// stays as small as that work.
public struct TransferStore: Sendable {
    public let folder: String

    public init(folder: String) { self.folder = folder }

    /// The service's own: its container's (``Container/transfersPath``).
    /// - Throws: `unsupported` for a service made for no container.
    public init(of service: FileService) throws(CofferError) {
        guard let container = service.feature(ContainerFeature.self)?.container else {
            throw CofferError(.unsupported, detail: "downloads")
        }
        self.folder = container.transfersPath
    }

    private var doneFolder: String { folder + "/done" }

    private func path(_ id: String, done: Bool) -> String { (done ? doneFolder : folder) + "/" + id + ".json" }

    public func save(_ record: DownloadRecord) {
        let done = record.state == .done
        try? FileManager.default.createDirectory(atPath: done ? doneFolder : folder, withIntermediateDirectories: true)
        guard let data = try? JSONEncoder().encode(record) else { return }
        try? data.write(to: URL(fileURLWithPath: path(record.id, done: done)), options: .atomic)
        // One record per download: the one in the other folder is out of date.
        try? FileManager.default.removeItem(atPath: path(record.id, done: !done))
    }

    public func load(_ id: String) -> DownloadRecord? {
        guard FileName.problem(with: id) == nil else { return nil }
        let data = FileManager.default.contents(atPath: path(id, done: false)) ?? FileManager.default.contents(atPath: path(id, done: true))
        return data.flatMap { try? JSONDecoder().decode(DownloadRecord.self, from: $0) }
    }

    /// Every download remembered, oldest first.
    public func all() -> [DownloadRecord] { (unfinished() + records(in: doneFolder)).sorted { $0.id < $1.id } }

    /// Those that did not finish, oldest first.
    public func unfinished() -> [DownloadRecord] { records(in: folder).sorted { $0.id < $1.id } }

    /// How long a download that did not finish is kept without being touched.
    public static let keepUnfinished: TimeInterval = 30 * 86_400

    /// Forgets `record`, and removes its partial data from the downloads cache `cache`.
    public func forget(_ record: DownloadRecord, cache: String?) {
        guard FileName.problem(with: record.id) == nil else { return }
        for done in [false, true] { try? FileManager.default.removeItem(atPath: path(record.id, done: done)) }
        if let cache { try? FileManager.default.removeItem(atPath: cache + "/" + record.id + ".download") }
    }

    /// Forgets the downloads that did not finish and were not touched for ``keepUnfinished``
    /// (one interrupted by a process still running is touched as it goes); returns how many.
    @discardableResult
    public func dropStale(cache: String?, now: Date = Date()) -> Int {
        var dropped = 0
        for record in unfinished() where record.state != .queued {
            let saved = (try? FileManager.default.attributesOfItem(atPath: path(record.id, done: false))[.modificationDate]) as? Date
            guard let saved, now.timeIntervalSince(saved) > Self.keepUnfinished else { continue }
            forget(record, cache: cache)
            dropped += 1
        }
        return dropped
    }

    private func records(in folder: String) -> [DownloadRecord] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".json") }.compactMap { name in
            FileManager.default.contents(atPath: folder + "/" + name).flatMap { try? JSONDecoder().decode(DownloadRecord.self, from: $0) }
        }
    }
}

/// Downloads a URL into a folder of Coffer's (`files:/Download` by default): the data goes
/// to the downloads cache first (``FileService/downloadsCachePath``) and appears in the
/// folder only when complete, under the name the server suggests or the URL's (or the one
/// given), a new one when it is taken. The record in the ``TransferStore`` says how far it
/// came, so a download that was cancelled, failed or killed resumes from there (`resuming`).
public struct DownloadFile: FileOperation {
    public static let name = "download"
    public static let changesFiles = true
    public static let defaultFolder = VirtualPath(mount: VirtualPath.defaultMount, trustedComponents: ["Download"])

    public var url: String
    public var folder: VirtualPath
    public var fileName: String?
    /// Where it is remembered: the service's own (``TransferStore/init(of:)``) unless given.
    public var store: TransferStore?
    public var engine: DownloadEngine
    /// The id of a download to resume instead of starting one.
    public var resuming: String?

    public init(_ url: String, into folder: VirtualPath = DownloadFile.defaultFolder, as fileName: String? = nil,
                store: TransferStore? = nil, engine: DownloadEngine = DownloadEngine(), resuming: String? = nil) {
        (self.url, self.folder, self.fileName, self.store, self.engine, self.resuming) = (url, folder, fileName, store, engine, resuming)
    }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        guard let cache = context.service.downloadsCachePath else { throw CofferError(.unsupported, detail: "downloads") }
        let store: TransferStore
        if let given = self.store { store = given } else { store = try TransferStore(of: context.service) }
        var record: DownloadRecord
        if let resuming {
            guard let saved = store.load(resuming) else { throw CofferError(.invalidArgument, detail: "no download “\(resuming)”") }
            record = saved
        } else {
            try TransferError.requireWeb(url)
            // The folder is checked before a byte is fetched: a missing one fails at once, not
            // after the whole download (`files:/Download`, the default, is made again).
            do throws(CofferError) {
                try await Destination.into(folder).check(in: context.service)
            } catch where error.kind == .noSuchFile && folder == Self.defaultFolder {
                _ = try await context.service.createFolder(at: folder, intermediates: true)
            }
            record = DownloadRecord(id: Self.newID(), url: url)
            record.folder = folder.description
            record.fileName = fileName.map(DownloadName.sanitized)
        }
        store.save(record)
        let partialName = record.id + ".download"
        let (engine, started) = (self.engine, record)
        let fetched: DownloadRecord
        do {
            // All of it came before (its placing failed): it is only placed again.
            if record.isComplete, Self.size(of: cache + "/" + partialName) == record.total {
                fetched = record
            } else {
                fetched = try await context.withProgress { (progress) throws(CofferError) -> DownloadRecord in
                    let service = context.service
                    return try await BlockingIO.run(waitingOnNetwork: true) { (flag) throws(CofferError) -> DownloadRecord in
                        try engine.fetch(started, into: try service.openDownloadData(partialName), progress: progress,
                                         cancellation: { flag.isCancelled }, checkpoint: { store.save($0) })
                    }
                }
            }
        } catch {
            // The checkpoint saved how far it came; the state and the reason are added here.
            var stopped = store.load(record.id) ?? record
            stopped.state = error.kind == .cancelled ? .paused : .failed
            stopped.failure = error.kind == .cancelled ? nil : error.userMessage(in: context.language).text
            stopped.failedForGood = error.kind == .cancelled ? nil : TransferError.isFinal(error)
            if error.kind == .tooLarge {
                // Over the limit: nothing of it is kept.
                try? FileManager.default.removeItem(atPath: cache + "/" + partialName)
                stopped.received = 0
            }
            store.save(stopped)
            throw error
        }
        let node: FileNode
        do {
            let target = try VirtualPath(parsing: fetched.folder ?? folder.description)
            node = try await context.service.placeDownload(partialName, into: target, as: fetched.fileName ?? fetched.suggestedName)
            await context.service.noteUse(.item(node.path))
        } catch {
            // Complete but not placed (its folder is gone, say): the data stays for a resume.
            var unplaced = fetched
            unplaced.state = .failed
            unplaced.failure = error.userMessage(in: context.language).text
            store.save(unplaced)
            throw error
        }
        var done = fetched
        done.state = .done
        done.failure = nil
        done.result = node.path.description
        store.save(done)
        return node
    }

    public func auditedPaths(for outcome: Result<FileNode, CofferError>) -> [String] {
        [((try? outcome.get())?.path ?? folder).description]
    }

    private static func size(of path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }

    /// Sortable by when it began: the store lists downloads oldest first.
    static func newID() -> String {
        let millis = UInt64(Date().timeIntervalSince1970 * 1000)
        return String(millis, radix: 36) + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
    }
}
