import CofferBackends
import CofferCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A list kept as JSON in the container's `AppData` (bookmarks of files opened in place,
/// favourites), shared by every Coffer process on the container.
///
/// Dates are seconds since 1970 with their fractions, so a file's creation time compares
/// exactly after a round trip. The file is read before every change and replaced atomically (a temporary file, then a
/// rename), so a REPL and an RPC server on the same container never leave it half-written.
/// A missing or unreadable file is an empty list: these lists are a convenience, never a
/// reason for Coffer not to start.
struct JSONListStore<Element: Codable & Equatable & Sendable>: Sendable {
    let path: String
    /// What a failure to save names (`bookmarks`).
    let label: String
    /// Whether only its owner may read it (mode 0600): it holds secrets (share passwords' hashes).
    var isPrivate = false

    func load() -> [Element] {
        guard let data = FileManager.default.contents(atPath: path),
              let elements = try? Self.decoder.decode([Element].self, from: data)
        else { return [] }
        return elements
    }

    func save(_ elements: [Element]) throws(CofferError) {
        do {
            let data = try Self.encoder.encode(elements)
            guard isPrivate else { return try data.write(to: URL(fileURLWithPath: path), options: .atomic) }
            // Made 0600 from the first byte, then renamed over the old one.
            let temporary = path + ".new"
            unlink(temporary)
            guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]),
                  rename(temporary, path) == 0
            else { throw CofferError(.ioError, detail: label, errno: errno) }
        } catch let error as CofferError {
            throw error
        } catch {
            throw CofferError(.ioError, detail: label, underlying: error)
        }
    }

    /// Loads, lets `change` edit the list, and saves when it changed, holding an exclusive
    /// `flock` on `PATH.lock` throughout, so two processes never lose each other's changes.
    func update<T>(_ change: (inout [Element]) throws(CofferError) -> T) throws(CofferError) -> T {
        let lock = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if lock >= 0 {
            while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        }
        defer { if lock >= 0 { close(lock) } }
        var elements = load()
        let before = elements
        let result = try change(&elements)
        if elements != before { try save(elements) }
        return result
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }
}

/// Bookmarks of host files opened in place, in `AppData/bookmarks.json`.
typealias BookmarkStore = JSONListStore<HostBookmark>

extension JSONListStore where Element == HostBookmark {
    init(path: String) { self.init(path: path, label: "bookmarks") }
}
