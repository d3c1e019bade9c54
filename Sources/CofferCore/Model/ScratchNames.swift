/// The names of scratch files: what editors and office suites make beside a document while
/// they work on it — a lock, a swap file, a backup, a half-written download. A front end whose
/// programs make them by the hundred (`coffer mount`) deletes them for good, so they never
/// fill the trash or the versions (`FrontEndDefaults` in `FileService` says which do).
public struct ScratchNames: Sendable {
    /// The patterns, in `fnmatch` syntax (a `*` also matches a leading dot).
    public let patterns: [String]
    private let globs: [Glob]

    /// LibreOffice's locks (`.~lock.report.odt#`), Vim's swap files and its write test
    /// (`4913`), backups (`notes.txt~`), GNOME's half-saved files (`.goutputstream-XXXXXX`),
    /// downloads in progress (`*.part`, `*.crdownload`), Emacs' locks and autosaves, Kate's swap.
    public static let standard: [String] = [
        ".~lock.*#", "*.swp", "*.swo", "*.swx", "4913", "*~", ".goutputstream-*", "*.part", "*.crdownload",
        ".#*", "#*#", ".*.kate-swp",
    ]

    /// Names matching any of `patterns`.
    /// - Throws: `invalidArgument` for a pattern that is not one (``Glob``'s limits).
    public init(_ patterns: [String] = ScratchNames.standard) throws(CofferError) {
        var globs: [Glob] = []
        for pattern in patterns { globs.append(try Glob(pattern, syntax: .fnmatch)) }
        self.patterns = patterns
        self.globs = globs
    }

    /// Whether `name` (one item's name, not a path) is a scratch file's.
    public func contains(_ name: String) -> Bool { globs.contains { $0.matches(name) } }

    /// The endings SQLite gives the files it keeps beside a database while it writes it: the
    /// rollback journal, the write-ahead log and its shared index (`notes.db-wal`).
    public static let databaseCompanionEndings = ["-journal", "-wal", "-shm"]

    /// The name of the database `name` would be a companion file of (`notes.db` for
    /// `notes.db-wal`), or `nil`. A name ending so is a scratch file's only when that database is
    /// beside it: `travel-journal` alone is a document.
    public static func database(ofCompanion name: String) -> String? {
        for ending in databaseCompanionEndings where name.hasSuffix(ending) && name.count > ending.count {
            return String(name.dropLast(ending.count))
        }
        return nil
    }
}
