import CCofferSystem
import CofferCore
import CofferRuntime
#if canImport(Glibc)
import Glibc
#endif

/// Opening and reading folders relative to an open folder, never following a link.
extension Descriptor {
    /// Opens the folder `name` inside this folder (`O_NOFOLLOW`: a link there is refused).
    func openFolder(named name: String, reporting path: VirtualPath?) throws(CofferError) -> Descriptor {
        try Self.folder(openat(raw, name, Self.folderFlags), reporting: path)
    }

    /// The same for a raw name, as read by ``rawEntryNames(reporting:)``.
    func openFolder(rawName name: UnsafePointer<CChar>, reporting path: VirtualPath?) throws(CofferError) -> Descriptor {
        try Self.folder(openat(raw, name, Self.folderFlags), reporting: path)
    }

    private static let folderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC

    private static func folder(_ fd: Int32, reporting path: VirtualPath?) throws(CofferError) -> Descriptor {
        guard fd >= 0 else { throw CofferError.lastSystemError("openat", path: path) }
        return Descriptor(fd)
    }

    /// The raw (NUL-terminated) names in this folder, without `.` and `..`, read once.
    /// Raw bytes keep names that are not valid UTF-8 addressable.
    func rawEntryNames(reporting path: VirtualPath?) throws(CofferError) -> [[CChar]] {
        try readEntries(reporting: path) { name, _ in Array(UnsafeBufferPointer(start: name, count: strlen(name) + 1)) }
    }

    /// The names in this folder as strings, without `.` and `..`.
    func entryNames(reporting path: VirtualPath?) throws(CofferError) -> [String] {
        try readEntries(reporting: path) { name, _ in String(cString: name) }
    }

    /// One pass of `readdir` over this folder, each name and its `d_type` hint turned into
    /// an element by `make`, which returns `nil` to leave an entry out.
    func readEntries<Element>(reporting path: VirtualPath?,
                              _ make: (UnsafePointer<CChar>, UInt8) -> Element?) throws(CofferError) -> [Element] {
        guard let stream = coffer_opendir(raw) else { throw CofferError.lastSystemError("opendir", path: path) }
        defer { coffer_closedir(stream) }
        var entries: [Element] = []
        var type: UInt8 = 0
        while let entry = coffer_readdir(stream, &type) {
            if let element = make(entry, type) { entries.append(element) }
        }
        if errno != 0 { throw CofferError.lastSystemError("readdir", path: path) }
        return entries
    }
}
