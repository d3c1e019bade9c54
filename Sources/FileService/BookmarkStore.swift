import CofferBackends
import CofferCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Bookmarks of host files opened in place, kept as JSON in `AppData/bookmarks.json`.
///
/// Dates are seconds since 1970 with their fractions, so a file's creation time compares
/// exactly after a round trip. The file is read before every change and replaced atomically (a temporary file, then a
/// rename), so a REPL and an RPC server on the same container never leave it half-written.
/// A missing or unreadable file is an empty list: bookmarks are a convenience, never a
/// reason for Coffer not to start.
struct BookmarkStore: Sendable {
    let path: String

    func load() -> [HostBookmark] {
        guard let data = FileManager.default.contents(atPath: path),
              let bookmarks = try? Self.decoder.decode([HostBookmark].self, from: data)
        else { return [] }
        return bookmarks
    }

    func save(_ bookmarks: [HostBookmark]) throws(CofferError) {
        do {
            let data = try Self.encoder.encode(bookmarks.sorted { $0.id < $1.id })
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CofferError(.ioError, detail: "bookmarks", underlying: error)
        }
    }

    /// Loads, lets `change` edit the list, and saves when it changed, holding an exclusive
    /// `flock` on `bookmarks.json.lock` throughout, so two processes never lose each other's
    /// changes.
    func update<T>(_ change: (inout [HostBookmark]) throws(CofferError) -> T) throws(CofferError) -> T {
        let lock = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if lock >= 0 {
            while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        }
        defer { if lock >= 0 { close(lock) } }
        var bookmarks = load()
        let before = bookmarks
        let result = try change(&bookmarks)
        if bookmarks != before { try save(bookmarks) }
        return result
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }()

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()
}
