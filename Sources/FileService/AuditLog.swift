import CofferCore
import Foundation
import Synchronization

/// `AppData/logs/audit.jsonl`: one JSON line per request that changed something, from any
/// front end (seed 004's afterword: every bridge call is logged).
///
/// A line is `{"frontEnd", "method", "outcome", "paths", "time"}` with virtual paths only
/// (never a host path of the container) and the outcome `ok` or the error kind, and
/// `trashed`, the trash IDs of what a replace moved to the trash, when it did. Lines are
/// appended with `O_APPEND`, one `write` each, so processes sharing a container do not
/// interleave them. Past `maxBytes` the file is rotated: `audit.jsonl` becomes
/// `audit.1.jsonl`, which becomes `audit.2.jsonl`, and so on up to `keep` old files.
public final class AuditLog: ServiceFeature {
    /// The log's host path (`…/logs/audit.jsonl`); its folder is made at the first line.
    public let path: String
    /// The size in bytes past which the log is rotated before the next line.
    public let maxBytes: Int
    /// How many rotated files are kept (`audit.1.jsonl` … `audit.<keep>.jsonl`); 0 keeps none.
    public let keep: Int
    private let lock = Mutex(())

    /// A log at the host path `path`, rotated past `maxBytes` (1 MiB by default), keeping
    /// `keep` old files.
    public init(path: String, maxBytes: Int = 1 << 20, keep: Int = 3) {
        self.path = path
        self.maxBytes = maxBytes
        self.keep = keep
    }

    /// Appends one entry. Logging never fails an operation: errors are dropped. Internal:
    /// only the session writes lines, once per operation, whichever front end asked.
    /// `extra` adds fields of its own (a share link's access: `share`, `client`, `bytes`).
    func record(frontEnd: String, method: String, paths: [String], outcome: String, trashed: [String] = [],
                       extra: [String: String] = [:], at time: Date = Date()) {
        var entry: [String: Any] = [
            "time": Timestamp.iso8601(time), "frontEnd": frontEnd, "method": method, "paths": paths, "outcome": outcome,
        ]
        for (key, value) in extra where entry[key] == nil { entry[key] = value }
        if !trashed.isEmpty { entry["trashed"] = trashed }
        guard var line = try? JSONSerialization.data(withJSONObject: entry, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        line.append(UInt8(ascii: "\n"))
        lock.withLock { _ in
            let folder = (path as NSString).deletingLastPathComponent
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            rotateIfNeeded()
            let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { return }
            defer { close(fd) }
            _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }
    }

    private func rotateIfNeeded() {
        var info = stat()
        guard lstat(path, &info) == 0, Int(info.st_size) >= maxBytes else { return }
        let base = String(path.dropLast(".jsonl".count))
        for index in stride(from: keep - 1, through: 1, by: -1) {
            _ = rename("\(base).\(index).jsonl", "\(base).\(index + 1).jsonl")
        }
        _ = rename(path, keep > 0 ? "\(base).1.jsonl" : path + ".old")
        if keep == 0 { _ = unlink(path + ".old") }
    }
}

extension FileService {
    /// Where sessions record the operations that changed something; `nil` records nothing.
    var audit: AuditLog? { features[AuditLog.self] }
}
