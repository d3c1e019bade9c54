import CCofferSystem
import CofferCore
#if canImport(Glibc)
import Glibc
#endif

/// The `directorysizes` cache of the Trash specification 1.0: one line per trashed folder,
/// `<bytes> <mtime of its info file> <percent-encoded name>`, rewritten through a
/// temporary file and a rename so readers never see half of it.
struct DirectorySizes: Equatable {
    struct Entry: Equatable {
        var size: Int64
        var infoModified: Int64
    }

    var entries: [String: Entry] = [:]

    static let fileName = "directorysizes"

    /// The cache in `trash`; empty when missing or unreadable. Bad lines are dropped.
    static func load(from trash: Descriptor) -> DirectorySizes {
        var sizes = DirectorySizes()
        guard let text = readSmallFile(named: fileName, in: trash) else { return sizes }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count == 3, let size = Int64(fields[0]), let modified = Int64(fields[1]),
                  let name = TrashInfo.percentDecoded(String(fields[2])) else { continue }
            sizes.entries[name] = Entry(size: size, infoModified: modified)
        }
        return sizes
    }

    /// Writes the cache into `trash` atomically. Failures are ignored: it is a cache.
    func write(to trash: Descriptor) {
        let text = entries.sorted { $0.key < $1.key }
            .map { "\($0.value.size) \($0.value.infoModified) \(TrashInfo.percentEncoded($0.key))\n" }.joined()
        let temporary = "\(Self.fileName).\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        let fd = openat(trash.raw, temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        Glibc.close(fd)
        if written != bytes.count || renameat(trash.raw, temporary, trash.raw, Self.fileName) != 0 {
            unlinkat(trash.raw, temporary, 0)
        }
    }

    /// Disk usage of the folder `name` in `parent`, as `du -B1` counts it: allocated
    /// blocks of the folder and everything below, links not followed.
    static func diskUsage(of name: String, in parent: Descriptor) -> Int64 {
        var info = stat()
        guard fstatat(parent.raw, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return 0 }
        var total = Int64(info.st_blocks) * 512
        guard info.st_mode & S_IFMT == S_IFDIR,
              let folder = try? parent.openFolder(named: name, reporting: nil),
              let names = try? folder.entryNames(reporting: nil) else { return total }
        for child in names { total += diskUsage(of: child, in: folder) }
        return total
    }
}

/// The text of a small regular file (at most `limit` bytes) in `folder`, never following links.
func readSmallFile(named name: String, in folder: Descriptor, limit: Int = 1 << 20) -> String? {
    guard let (fd, info) = try? LocalSandboxBackend.openRegularFile(in: folder, name: name, path: .root()),
          info.size <= UInt64(limit) else { return nil }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16384)
    while bytes.count <= limit {
        let count = Glibc.read(fd.raw, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += buffer[..<count]
    }
    guard bytes.count <= limit else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}
