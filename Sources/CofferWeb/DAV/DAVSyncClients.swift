import CofferCore
import CofferRuntime
import FileService
import Foundation

/// What sync clients (rclone with `vendor = nextcloud`, Nextcloud's and ownCloud's own) expect of
/// a WebDAV server beyond RFC 4918, as Nextcloud serves it: the modification time a `PUT` sends
/// in `X-OC-Mtime`, and the checksums of `OC-Checksum`, kept and shown as `oc:checksums`.
enum DAVSyncClients {
    static let ownCloudNamespace = "http://owncloud.org/ns"
    static let checksumsProperty = QualifiedName(ownCloudNamespace, "checksums")
    /// Where a file's checksums are kept: `SIZE MICROSECONDS SHA1:… MD5:…`, valid while the
    /// file has that size and modification time.
    static let attribute = "user.coffer.checksums"

    /// The time `X-OC-Mtime` gives (seconds since 1970, maybe with a fraction); `nil` for none
    /// or one that is not a time.
    static func modificationDate(_ header: String?) -> Date? {
        guard let header, let seconds = Double(header.trimmingCharacters(in: .whitespaces)), seconds.isFinite,
              seconds >= 0, seconds < 1e11 else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// The checksums an `OC-Checksum` header names (`SHA1:hex`, several separated by spaces),
    /// by algorithm, in lower case; those of other algorithms are passed over.
    static func checksums(_ header: String?) -> [StreamingDigest.Algorithm: String] {
        var named: [StreamingDigest.Algorithm: String] = [:]
        for part in (header ?? "").split(separator: " ") {
            guard let colon = part.firstIndex(of: ":") else { continue }
            let value = part[part.index(after: colon)...].lowercased()
            switch part[..<colon].uppercased() {
            case "SHA1": named[.sha1] = value
            case "MD5": named[.md5] = value
            default: continue
            }
        }
        return named
    }

    /// What the attribute keeps for `node` with these digests.
    static func stored(_ digests: [StreamingDigest.Algorithm: String], for node: FileNode) -> [UInt8] {
        let names = digests.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.name):\($0.value)" }
        return Array(([String(node.size), String(microseconds(node.modificationDate))] + names).joined(separator: " ").utf8)
    }

    /// The `oc:checksums` value for `node`, when its attributes keep checksums of its present content.
    static func property(of node: FileNode, attributes: UserAttributes) -> String? {
        guard let kept = attributes[attribute] else { return nil }
        let parts = String(decoding: kept, as: UTF8.self).split(separator: " ")
        guard parts.count > 2, parts[0] == String(node.size), parts[1] == String(microseconds(node.modificationDate)) else { return nil }
        return "<x:checksum xmlns:x=\"\(ownCloudNamespace)\">\(DAVXML.escaped(parts.dropFirst(2).joined(separator: " ")))</x:checksum>"
    }

    private static func microseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1e6).rounded()) }
}

/// A request's body, hashed with SHA-1 (and MD5) as it passes to the upload. The hashing runs on
/// a queue of its own, a few pieces behind the reading, so a large `PUT` is not slowed by it
/// (one core writes while the other hashes); at most ``depth`` pieces wait, copied, and the
/// reading waits when they do. Unchecked: it is read on one thread and finished after the
/// reading ends, as ``AppendUploadStream`` reads; the pieces and the digests are the queue's.
final class HashingBody: IncomingBytes, @unchecked Sendable {
    /// How many pieces may wait to be hashed.
    static let depth = 4
    private let body: RequestBody
    private let digests: [StreamingDigest]
    private let queue = DispatchQueue(label: "coffer.dav.hashing")
    private let room = DispatchSemaphore(value: HashingBody.depth)
    /// Buffers the queue has finished with, for the next pieces (guarded by `lock`).
    private var spare: [UnsafeMutableRawBufferPointer] = []
    private let lock = NSLock()

    /// Hashes with SHA-1, and with MD5 too when `withMD5`; `nil` without libcrypto.
    init?(_ body: RequestBody, withMD5: Bool) {
        guard let sha1 = try? StreamingDigest(.sha1) else { return nil }
        var digests = [sha1]
        if withMD5 {
            guard let md5 = try? StreamingDigest(.md5) else { return nil }
            digests.append(md5)
        }
        self.body = body
        self.digests = digests
    }

    deinit {
        // Every queued piece holds this object, so none is left when it goes.
        for buffer in spare { buffer.deallocate() }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = body.read(into: buffer)
        guard count > 0 else { return count }
        room.wait()  // bounded: the queue only hashes, and each piece frees a place
        var piece = lock.withLock { spare.popLast() }
        if let small = piece, small.count < count {
            small.deallocate()
            piece = nil
        }
        nonisolated(unsafe) let copy = piece ?? .allocate(byteCount: max(count, 1 << 20), alignment: 16)
        copy.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        queue.async { [self] in
            for digest in digests { digest.update(UnsafeRawBufferPointer(rebasing: copy[..<count])) }
            lock.withLock { spare.append(copy) }
            room.signal()
        }
        return count
    }

    /// The digests of everything read, by algorithm, once the pieces still queued are hashed.
    func finish() -> [StreamingDigest.Algorithm: String] {
        queue.sync { [digests] in
            var found: [StreamingDigest.Algorithm: String] = [:]
            for digest in digests { found[digest.algorithm] = try? digest.finish() }
            return found
        }
    }
}

/// Names Windows cannot hold (its Explorer and WebDAV redirector refuse or misread them): they are
/// served as they are, never changed, and a Windows client's listing reports them.
enum WindowsNames {
    /// Why Windows cannot hold `name`; `nil` when it can.
    static func problem(_ name: String) -> String? {
        if name.unicodeScalars.contains(where: { $0.value < 32 }) { return "it holds a control character" }
        if let character = name.first(where: { "<>:\"\\|?*".contains($0) }) { return "it holds “\(character)”" }
        if name.hasSuffix(".") || name.hasSuffix(" ") { return "it ends with a dot or a space" }
        let stem = name.split(separator: ".", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).uppercased() } ?? ""
        if reserved.contains(stem) { return "\(stem) is a device's name there" }
        return nil
    }

    private static let reserved = Set(["CON", "PRN", "AUX", "NUL"] + (1...9).flatMap { ["COM\($0)", "LPT\($0)"] })

    /// Whether the request comes from Windows' WebDAV redirector (Explorer's network folders).
    static func isWindows(userAgent: String?) -> Bool {
        userAgent?.contains("Microsoft-WebDAV-MiniRedir") == true
    }
}
