import CCofferSystem
public import CofferCore
public import CofferHTTP
import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One download as it is kept between attempts, and between processes: where it comes
/// from, how much of it is safely on disk, and what the server said it is.
public struct DownloadRecord: Codable, Sendable, Hashable {
    public enum State: String, Codable, Sendable { case queued, running, paused, failed, done }

    public var id: String
    public var url: String
    public var state: State
    /// Bytes of the partial file known to be on disk (synced): a resume starts here, or from
    /// the file's length when the machine has not restarted since (``boot``).
    public var received: Int64 = 0
    /// The boot of the machine (``BootIdentity``) the partial file was last written in: bytes
    /// written but not yet synced survive a killed process in the page cache, not a restart.
    public var boot: String?
    /// The whole size, once the server has said it.
    public var total: Int64?
    /// What identifies the version being downloaded, for `If-Range`.
    public var etag: String?
    public var lastModified: String?
    public var contentDisposition: String?
    /// Where the data came from, after redirects.
    public var effectiveURL: String?
    /// Why the last attempt failed, for the user, and the status the server answered then.
    public var failure: String?
    public var status: Int?
    /// Whether that failure will not pass by trying again (a 404, a name that does not
    /// resolve): `download --resume` without IDs leaves such a download alone.
    public var failedForGood: Bool?
    /// Where it goes (a folder's virtual path), under which name when the user chose one,
    /// and where it went once done.
    public var folder: String?
    public var fileName: String?
    public var result: String?

    public init(id: String, url: String) {
        self.id = id
        self.url = url
        self.state = .queued
    }

    /// Whether a resume of every unfinished download takes it: one paused, cut off or failed
    /// for a reason that may pass, not one the server refused or that cannot be reached by name.
    public var isWorthResuming: Bool { state != .done && failedForGood != true }

    /// Whether all of it is on disk (its placing may still be to do).
    public var isComplete: Bool { total.map { $0 == received } ?? false && (state == .done || state == .failed) }

    /// The name the download is saved under, unless the user chose one.
    public var suggestedName: String {
        DownloadName.suggested(contentDisposition: contentDisposition, url: effectiveURL ?? url)
    }
}

/// Fetches what is missing of a download into its partial file, resuming with `Range` and
/// `If-Range` (the ETag when it is a strong one, else the Last-Modified date) from the last
/// synced byte. A server that ignores the range, or whose file changed since, answers the
/// whole file, and the partial file starts again from zero. A connection that breaks is
/// tried again from where it stopped, a bounded number of times; a cancel stops at once and
/// keeps what came, synced, for a later resume. The partial file gets the origin in
/// `user.xdg.origin.url`, as browsers and wget set it.
public struct DownloadEngine: Sendable {
    public var caFile: String?
    public var timeouts = HTTPTimeouts()
    /// Redirects followed at most (to `http` and `https` only).
    public var maxRedirects = 10
    /// A download larger than this fails as `tooLarge`.
    public var maxSize: Int64?
    /// Tries of one fetch when the connection breaks, each resuming.
    public var attempts = 4
    /// How often what came is synced and the record saved (`checkpoint`).
    public var checkpointBytes: Int64 = 32 << 20
    private let sessions = HTTPSessionPool()

    public init(caFile: String? = nil) { self.caFile = caFile }

    /// Fetches the rest of `record` into `file` (its partial data, from the downloads cache:
    /// ``FileService/openDownloadData(_:)``), blocking the thread.
    /// `checkpoint` is called with the record each time what came is synced (to save it);
    /// the record returned is `done`, with `received` the whole size.
    /// - Throws: `cancelled` when `cancellation` says so (the partial data kept); `ioError`
    ///   for a server that could not be reached or answered an error; `tooLarge` past `maxSize`.
    public func fetch(_ record: DownloadRecord, into file: any OutputFile, progress: ProgressReporter = .none,
                      cancellation: @escaping @Sendable () -> Bool = { false },
                      checkpoint: @escaping (DownloadRecord) -> Void = { _ in }) throws(CofferError) -> DownloadRecord {
        // One process at a time per download: another that resumes it too waits its turn elsewhere.
        guard file.lockExclusively() else {
            throw CofferError(.invalidOperation, detail: "another process is downloading it")
        }
        var record = record
        record.state = .running
        // What is on disk beyond the last checkpoint was written, but maybe not synced: it
        // counts when the machine has not restarted since (the page cache still holds it, as
        // after a killed process), else the resume starts at the last synced byte.
        let onDisk = try file.size()
        let canResume = record.etag.map { !$0.hasPrefix("W/") } ?? false || record.lastModified != nil
        let sameBoot = record.boot != nil && record.boot == BootIdentity.current
        let start = canResume ? (sameBoot ? onDisk : min(onDisk, record.received)) : 0
        record.boot = BootIdentity.current
        try file.truncate(to: start)
        record.received = start
        progress.expect(bytes: record.total ?? 0, items: 1)
        progress.advance(bytes: start)
        // All of it was written before the process was killed: nothing is left to ask for
        // (a range from the end would be answered 416).
        if let total = record.total, total > 0, start == total {
            return try finish(&record, file: file, progress: progress, checkpoint: checkpoint)
        }
        var tries = 0
        while true {
            tries += 1
            let outcome = try attempt(&record, file: file, progress: progress, cancellation: cancellation, checkpoint: checkpoint)
            switch outcome {
            case .complete:
                return try finish(&record, file: file, progress: progress, checkpoint: checkpoint)
            case .interrupted where tries < attempts:
                sync(file, &record, checkpoint)
                continue
            case .interrupted(let error), .failed(let error):
                sync(file, &record, checkpoint)
                record.state = error.kind == .cancelled ? .paused : .failed
                throw error
            }
        }
    }

    /// All of it is on disk: made durable, its origin noted (`user.xdg.origin.url`), and done.
    /// The checkpoint records it whole but not yet done: it is done once it is in place (its
    /// caller saves that), so no list says "done" of a file not there yet, and a process killed
    /// in between leaves it to be placed by a resume.
    private func finish(_ record: inout DownloadRecord, file: any OutputFile, progress: ProgressReporter,
                        checkpoint: (DownloadRecord) -> Void) throws(CofferError) -> DownloadRecord {
        try file.synchronize()
        record.failure = nil
        record.total = record.received
        let origin = Array(Self.originWithoutCredentials(record.url).utf8)
        file.setAttribute("user.xdg.origin.url", to: origin)
        progress.advance(items: 1)
        checkpoint(record)
        record.state = .done
        return record
    }

    private enum Outcome {
        case complete
        /// The connection broke: trying again may work.
        case interrupted(CofferError)
        case failed(CofferError)
    }

    private func sync(_ file: any OutputFile, _ record: inout DownloadRecord, _ checkpoint: (DownloadRecord) -> Void) {
        if file.synchronizeData(), let size = try? file.size() {
            record.received = size
        }
        checkpoint(record)
    }

    /// The address as the file's origin keeps it: without a user name or password
    /// (`https://me:secret@host/f` → `https://host/f`), which other programs read.
    static func originWithoutCredentials(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.user != nil || components.password != nil else { return url }
        components.user = nil
        components.password = nil
        return components.string ?? url
    }

    /// Whether a 206 is a range of the version the first part came from: the same strong
    /// ETag when one was recorded, else the same Last-Modified (and no other ETag). An answer
    /// without a validator cannot be vouched for, and is not taken.
    static func sameVersion(_ recorded: (etag: String?, lastModified: String?), _ response: HTTPResponse) -> Bool {
        let etag = response.header("ETag"), modified = response.header("Last-Modified")
        if let strong = recorded.etag, !strong.hasPrefix("W/") { return etag == strong }
        guard let date = recorded.lastModified, modified == date else { return false }
        return etag == nil || recorded.etag == nil || etag == recorded.etag
    }

    /// One request: from `record.received` on when it can resume, else from zero.
    private func attempt(_ saved: inout DownloadRecord, file: any OutputFile, progress: ProgressReporter,
                         cancellation: @escaping @Sendable () -> Bool,
                         checkpoint: @escaping (DownloadRecord) -> Void) throws(CofferError) -> Outcome {
        var record = saved
        defer { saved = record }
        var offset = record.received
        var headers: [(name: String, value: String)] = [("Accept-Encoding", "identity")]
        let validator = record.etag.flatMap { $0.hasPrefix("W/") ? nil : $0 } ?? record.lastModified
        if offset > 0, let validator {
            headers.append(("Range", "bytes=\(offset)-"))
            headers.append(("If-Range", validator))
        } else if offset > 0 {
            offset = 0
            try? file.truncate(to: 0)
        }
        let asked = offset
        let recorded = (etag: record.etag, lastModified: record.lastModified)
        var otherVersion = false
        var sinceCheckpoint: Int64 = 0
        var writeError: CofferError?
        var limitError: CofferError?
        let onHead: (HTTPResponse) -> Bool = { response in
            // What the progress expects so far: the size known before this answer (one item,
            // counted once when the download began).
            let expected = record.total ?? 0
            // A range of another version (a server that ignored If-Range) is never spliced on.
            if response.status == 206, asked > 0, !Self.sameVersion(recorded, response) {
                otherVersion = true
                return false
            }
            record.etag = response.header("ETag")
            record.lastModified = response.header("Last-Modified")
            record.contentDisposition = response.header("Content-Disposition") ?? record.contentDisposition
            let length = response.header("Content-Length").flatMap { Int64($0) }
            if response.status == 206, let range = response.header("Content-Range"), let first = Self.rangeStart(range),
               first == asked {
                record.total = Self.rangeTotal(range) ?? length.map { asked + $0 }
            } else {
                // The whole file: the range was ignored, or the file changed (`If-Range`).
                if offset > 0 {
                    offset = 0
                    try? file.truncate(to: 0)
                    progress.advance(bytes: -asked)
                }
                record.total = response.status == 206 ? nil : length
            }
            // The size as this answer tells it replaces what was expected, never adds to it.
            progress.expect(bytes: (record.total ?? 0) - expected, items: 0)
            // Saved now, with what identifies the version: a process killed before the first
            // sync can still be resumed from what it wrote.
            checkpoint(record)
            if let maxSize, let total = record.total, total > maxSize {
                limitError = CofferError(.tooLarge, detail: "download-too-large")
                return false
            }
            return true
        }
        let onBody: (UnsafeRawBufferPointer) -> Bool = { piece in
            guard !cancellation() else { return false }
            do throws(CofferError) {
                try file.write(piece, at: offset)
            } catch {
                writeError = error
                return false
            }
            offset += Int64(piece.count)
            progress.advance(bytes: Int64(piece.count))
            if let maxSize, offset > maxSize {
                limitError = CofferError(.tooLarge, detail: "download-too-large")
                return false
            }
            sinceCheckpoint += Int64(piece.count)
            if sinceCheckpoint >= checkpointBytes, file.synchronizeData() {
                sinceCheckpoint = 0
                record.received = offset
                checkpoint(record)
            }
            return true
        }
        let outcome = try sessions.withSession { (session) throws(HTTPFailure) -> HTTPResponse in
            try session.perform(method: "GET", url: record.url, headers: headers, body: .none, timeouts: timeouts,
                                caFile: caFile, maxRedirects: maxRedirects, onHead: onHead, onBody: onBody)
        }
        if let writeError { return .failed(writeError) }
        if let limitError { return .failed(limitError) }
        if otherVersion {
            // Start again from zero, for the version the server has now.
            try? file.truncate(to: 0)
            progress.advance(bytes: -asked)
            record.received = 0
            record.etag = nil
            record.lastModified = nil
            return .interrupted(CofferError(.ioError, detail: "transfer-broken"))
        }
        switch outcome {
        case .success(let response):
            record.effectiveURL = response.effectiveURL ?? record.effectiveURL
            record.status = response.status
            switch response.status {
            case 200, 206:
                record.received = offset
                if let total = record.total, offset < total { return .interrupted(CofferError(.ioError, detail: "transfer-broken")) }
                return .complete
            case 416 where asked > 0:
                // The range is past the end: the file shrank or changed. Start again.
                try? file.truncate(to: 0)
                record.received = 0
                record.etag = nil
                record.lastModified = nil
                return .interrupted(CofferError(.ioError, detail: "transfer-broken"))
            default:
                return .failed(TransferError.status(response.status))
            }
        case .failure(let failure):
            record.received = offset
            if failure.stoppedByCaller && cancellation() { return .failed(CofferError(.cancelled)) }
            let error = TransferError.failure(failure)
            return failure.isTransient ? .interrupted(error) : .failed(error)
        }
    }

    /// `bytes 100-199/1000` → 100.
    static func rangeStart(_ header: String) -> Int64? {
        guard let unit = header.range(of: "bytes ") else { return nil }
        return header[unit.upperBound...].split(separator: "-").first.flatMap { Int64($0) }
    }

    /// `bytes 100-199/1000` → 1000 (`*` → nil).
    static func rangeTotal(_ header: String) -> Int64? {
        header.split(separator: "/").last.flatMap { Int64($0) }
    }
}

/// What transfers' failures mean for the user, each worded in `messages.json` in both
/// languages: one place for downloads and uploads alike.
public enum TransferError {
    /// A URL a transfer may use: `http` or `https`.
    static func requireWeb(_ url: String) throws(CofferError) {
        guard let scheme = URL(string: url)?.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw CofferError(.invalidArgument, detail: "only http and https URLs can be used")
        }
    }

    /// Whether trying again cannot help: the server refused (a 4xx status but 408 and 429),
    /// the name does not resolve, the certificate is not trusted, the URL cannot be used, or
    /// the file is over the limit.
    public static func isFinal(_ error: CofferError) -> Bool {
        if error.kind == .tooLarge { return true }
        return ["transfer-not-found", "transfer-denied", "transfer-refused", "transfer-name-unresolved",
                "transfer-certificate", "transfer-redirects", "only http and https URLs can be used"].contains(error.detail ?? "")
    }

    /// A status that is not a success.
    static func status(_ status: Int) -> CofferError {
        switch status {
        case 404, 410: CofferError(.noSuchFile, detail: "transfer-not-found")
        case 401, 403, 407: CofferError(.noPermission, detail: "transfer-denied")
        case 408, 429, 500...599: CofferError(.ioError, detail: "transfer-server-error")
        default: CofferError(.ioError, detail: "transfer-refused")
        }
    }

    /// A request that got no answer.
    static func failure(_ failure: HTTPFailure) -> CofferError {
        switch failure.code {
        case HTTPFailure.nameUnresolved: CofferError(.ioError, detail: "transfer-name-unresolved")
        case HTTPFailure.unreachable: CofferError(.ioError, detail: "transfer-unreachable")
        case HTTPFailure.timedOut: CofferError(.ioError, detail: "transfer-timeout")
        case HTTPFailure.certificate, HTTPFailure.tls: CofferError(.ioError, detail: "transfer-certificate")
        case HTTPFailure.unsupportedProtocol: CofferError(.invalidArgument, detail: "only http and https URLs can be used")
        case HTTPFailure.tooManyRedirects: CofferError(.ioError, detail: "transfer-redirects")
        // Anything else is the transfer's, never the disk's: said as such, in words of the catalog.
        default: CofferError(.ioError, detail: failure.isTransient ? "transfer-broken" : "transfer-failed")
        }
    }
}
