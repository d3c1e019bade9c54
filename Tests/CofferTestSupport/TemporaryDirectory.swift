import Foundation

/// A fresh folder under the system's temporary directory, removed when released.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init(_ label: String = "coffer-test") {
        let template = NSTemporaryDirectory() + "/\(label)-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { fatalError("mkdtemp failed") }
        path = String(cString: made)
    }

    deinit {
        // Restore write permission first so read-only fixtures can be removed.
        _ = try? TestProcess.run(["/bin/chmod", "-R", "u+rwx", path], timeout: 60)
        try? FileManager.default.removeItem(atPath: path)
    }

    /// `path/relative`.
    public func url(_ relative: String = "") -> String {
        relative.isEmpty ? path : path + "/" + relative
    }

    /// A sparse file of `gigabytes` GiB at `relative`: large to copy, cheap to make.
    public func makeSparseFile(_ relative: String, gigabytes: Int) throws {
        let path = url(relative)
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(gigabytes) << 30)
        try handle.close()
    }

    /// Builds a fixture tree: `"a/b.txt": "text"` makes a file, a key ending in `/` a folder.
    @discardableResult
    public func make(_ entries: KeyValuePairs<String, String>) -> Self {
        for (relative, contents) in entries {
            let full = url(relative)
            if relative.hasSuffix("/") {
                try! FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
            } else {
                let parent = (full as NSString).deletingLastPathComponent
                try! FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
                try! Data(contents.utf8).write(to: URL(fileURLWithPath: full))
            }
        }
        return self
    }

    /// A symbolic link at `relative` pointing at `target` (as written).
    public func link(_ relative: String, to target: String) {
        try! FileManager.default.createSymbolicLink(atPath: url(relative), withDestinationPath: target)
    }

    public func contents(_ relative: String) -> String? {
        guard let data = FileManager.default.contents(atPath: url(relative)) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    public func exists(_ relative: String) -> Bool {
        var info = stat()
        return lstat(url(relative), &info) == 0
    }

    /// Names in a folder, sorted bytewise.
    public func names(_ relative: String = "") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url(relative))) ?? []).sorted()
    }
}
