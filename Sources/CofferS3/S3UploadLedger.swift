import CofferCore
import CofferRuntime
import Foundation
import Synchronization

/// The uploads in parts this process has started and not yet finished or dropped, kept on
/// disk so that the next start can drop them if the process is killed: S3 keeps the parts
/// of an unfinished upload (and bills them) until someone aborts it.
///
/// One file per backend, `<folder>/<bucket digest>-<owner>-<serial>.uploads`, held under
/// an exclusive `flock` for the process's life (the kernel drops it when the process dies,
/// `kill -9` included): a ledger that can be locked belongs to a process that is gone. Each
/// line is `+ ID KEY` when an upload starts and `- ID` when it is finished or dropped.
/// Recording is best effort: without a writable folder uploads still work, without the
/// clean-up after a kill.
final class S3UploadLedger: Sendable {
    let folder: String
    /// Names this bucket on this endpoint among the ledgers of the folder.
    private let scope: String
    /// This ledger's file name, without the folder.
    private let name: String
    private let file = Mutex<Int32>(-1)
    private static let serial = Atomic<Int>(0)

    init(folder: String, endpoint: URL, bucket: String) {
        self.folder = folder
        let digest = (try? Digest.sha256(Array("\(endpoint.absoluteString) \(bucket)".utf8))) ?? []
        self.scope = Digest.hex(digest).prefix(16) + ""
        self.name = scope + "-" + PartialName.owner + "-\(Self.serial.add(1, ordering: .relaxed).newValue)" + Self.suffix
    }

    deinit {
        let fd = file.withLock { $0 }
        if fd >= 0 {
            unlink(folder + "/" + name)
            close(fd)
        }
    }

    func started(_ upload: S3Upload) { append("+ \(upload.id) \(upload.key)\n") }

    func ended(_ upload: S3Upload) { append("- \(upload.id)\n") }

    private func append(_ line: String) {
        file.withLock { fd in
            if fd < 0 { fd = openOwn() }
            guard fd >= 0 else { return }
            let bytes = Array(line.utf8)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }
    }

    /// Creates this process's ledger locked under a name no one recovers, then renames it:
    /// a live process's ledger is never seen unlocked.
    private func openOwn() -> Int32 {
        mkdir(folder, 0o700)
        let making = folder + "/." + name
        let fd = open(making, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return -1 }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0, rename(making, folder + "/" + name) == 0 else {
            close(fd)
            unlink(making)
            return -1
        }
        return fd
    }

    static let suffix = ".uploads"

    /// Drops, with `abandon`, every upload left unfinished in the ledgers of processes that
    /// are gone (for this bucket), then removes those ledgers; a ledger whose uploads could
    /// not all be dropped (the server unreachable) is kept for next time.
    /// - Returns: how many uploads were dropped.
    @discardableResult
    func recover(abandon: (S3Upload) throws(CofferError) -> Void) -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return 0 }
        var dropped = 0
        // Ledgers of this process are locked too (a lock is held by an open file, not a
        // process), so only those of processes that are gone can be taken.
        for name in names where name.hasPrefix(scope + "-") && name.hasSuffix(Self.suffix) {
            let path = folder + "/" + name
            let fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }  // its process is running
            var left = false
            for upload in Self.unfinished(in: Self.read(fd)) {
                do throws(CofferError) {
                    try abandon(upload)
                    dropped += 1
                } catch {
                    left = true
                }
            }
            if !left { unlink(path) }
        }
        return dropped
    }

    static func unfinished(in text: String) -> [S3Upload] {
        var open: [String: S3Upload] = [:]
        var order: [String] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count >= 2 else { continue }
            let id = String(fields[1])
            if fields[0] == "+", fields.count == 3 {
                open[id] = S3Upload(key: String(fields[2]), id: id)
                order.append(id)
            } else if fields[0] == "-" {
                open[id] = nil
            }
        }
        return order.compactMap { open[$0] }
    }

    private static func read(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while bytes.count < 16 << 20 {
            let got = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard got > 0 else { break }
            bytes += buffer[..<got]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
