import CCofferArchive
import CofferCore
import CofferRuntime

/// libarchive, as previews use it: an archive's table of contents, never its data. The
/// library is loaded the first time an archive is previewed.
enum ArchiveLibrary {
    struct Contents: Codable, Sendable {
        var format: String
        var compression: String?
        var entries: [ArchiveEntry]
        var count: Int
        var complete: Bool
        var declaredBytes: Int64
    }

    /// The most bytes decompressed to go past entries' data in a compressed archive (a
    /// tar.bz2 of 24 KB may hold 32 GiB of zeros): past it, the count stops as incomplete.
    static let decompressionBudget: Int64 = 64 << 20

    /// Reads the table of contents of the archive in `fd`: the first `listed` entries, and
    /// the count of up to `counted`. Stops early, with what was read, when `cancellation` is set
    /// or after ``decompressionBudget`` bytes decompressed.
    static func contents(of fd: Int32, listed: Int, counted: Int, cancellation: CancellationFlag,
                         path: VirtualPath) throws(CofferError) -> Contents {
        guard coffer_archive_available() == 1 else {
            throw CofferError(.unsupported, path: path, detail: "no-archive-library")
        }
        final class Collected {
            var entries: [ArchiveEntry] = []
            let cancellation: CancellationFlag
            init(_ cancellation: CancellationFlag) { self.cancellation = cancellation }
        }
        let collected = Collected(cancellation)
        var summary = coffer_archive_summary()
        var error = [CChar](repeating: 0, count: 512)
        let status = withExtendedLifetime(collected) {
            coffer_archive_contents(fd, Int64(listed), Int64(counted), decompressionBudget, { context, name, size, isFolder in
                let collected = Unmanaged<Collected>.fromOpaque(context!).takeUnretainedValue()
                collected.entries.append(ArchiveEntry(path: String(cString: name!), size: size >= 0 ? size : nil,
                                                      isFolder: isFolder != 0))
            }, { context in
                Unmanaged<Collected>.fromOpaque(context!).takeUnretainedValue().cancellation.isCancelled ? 1 : 0
            }, Unmanaged.passUnretained(collected).toOpaque(), &summary, &error, error.count)
        }
        guard status == 0 else {
            throw CofferError(.corruptFile, path: path, detail: "archive-damaged")
        }
        let format = withUnsafeBytes(of: summary.format) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let filter = withUnsafeBytes(of: summary.filter) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        // `raw` takes any bytes: only a compressed file is an archive of one entry.
        if format == "raw" && filter.isEmpty { throw CofferError(.corruptFile, path: path, detail: "archive-damaged") }
        return Contents(format: format, compression: filter.isEmpty ? nil : filter, entries: collected.entries,
                        count: Int(summary.count), complete: summary.complete != 0, declaredBytes: summary.declared_bytes)
    }
}
