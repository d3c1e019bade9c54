import CCofferVips
public import CofferCore
import CofferRuntime
import FileService
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a thumbnail records of its file, to tell when it is out of date.
public struct SourceStamp: Sendable, Hashable {
    /// The modification time, in whole seconds since 1970 (`Thumb::MTime`).
    public var modified: Int64
    /// The size in bytes (`Thumb::Size`).
    public var size: Int64

    public init(modified: Int64, size: Int64) {
        self.modified = modified
        self.size = size
    }

    public init(_ node: FileNode) {
        self.init(modified: Int64(node.modificationDate.timeIntervalSince1970.rounded(.down)), size: node.size)
    }
}

/// Thumbnails as the freedesktop.org Thumbnail Managing Standard lays them out, in a folder
/// of the container (`Library/Caches/Thumbnails`, tagged CACHEDIR.TAG): `normal/`, `large/`,
/// `x-large/` and `xx-large/` hold PNGs named by the MD5 of their file's URI, carrying the
/// URI, modification time and size of the file they show; `fail/coffer-1.0/` remembers the
/// files no thumbnail could be made of, so they are not tried on every listing.
///
/// The cache may be deleted at any time. Thumbnails are written under a temporary name and
/// renamed into place, so a reader never sees half of one.
public struct ThumbnailStore: Sendable {
    /// The cache's folder.
    public let root: String

    static let failFolder = ThumbnailCacheLayout.failFolder

    public init(root: String) { self.root = root }

    /// The file name of `uri`'s thumbnails: the MD5 of the URI, in lowercase hexadecimal.
    static func fileName(for uri: String) throws(CofferError) -> String {
        var digest = [CChar](repeating: 0, count: 33)
        guard coffer_md5_hex(uri, &digest) == 1 else { throw CofferError(.unsupported, detail: "no-image-library") }
        return String(cBuffer: digest) + ".png"
    }

    /// Where the thumbnail of `uri` at `size` is (or would be).
    public func path(for uri: String, size: ThumbnailSize) throws(CofferError) -> String {
        "\(root)/\(size.folderName)/\(try Self.fileName(for: uri))"
    }

    func failurePath(for uri: String) throws(CofferError) -> String {
        "\(root)/\(Self.failFolder)/\(try Self.fileName(for: uri))"
    }

    /// The path of a thumbnail of `uri` at `size` made from the file as `stamp` describes
    /// it, or `nil` when there is none or it shows an older version of the file.
    public func current(uri: String, size: ThumbnailSize, stamp: SourceStamp) throws(CofferError) -> String? {
        let path = try path(for: uri, size: size)
        return Self.matches(path, uri: uri, stamp: stamp) ? path : nil
    }

    /// Why making a thumbnail of `uri` failed for the file as `stamp` describes it (the
    /// detail of the error it met: `image-too-large`, `thumbnail-failed`), or `nil`.
    public func failure(uri: String, stamp: SourceStamp) throws(CofferError) -> String? {
        guard let texts = Self.texts(try failurePath(for: uri), uri: uri, stamp: stamp) else { return nil }
        return texts[Self.reasonKey] ?? "thumbnail-failed"
    }

    static let reasonKey = "Coffer::Failure"

    /// Whether the PNG at `path` was made from `uri` as `stamp` describes it. Reads its
    /// first bytes only: the `Thumb::` chunks come right after the header.
    static func matches(_ path: String, uri: String, stamp: SourceStamp) -> Bool {
        texts(path, uri: uri, stamp: stamp) != nil
    }

    /// Checks many files' thumbnails at one size, with the folders opened once (a listing's).
    final class Checker: @unchecked Sendable {
        private let sizeFolder: Int32
        private let failFolder: Int32

        init(_ store: ThumbnailStore, size: ThumbnailSize) {
            sizeFolder = open("\(store.root)/\(size.folderName)", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            failFolder = open("\(store.root)/\(ThumbnailStore.failFolder)", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }

        deinit {
            if sizeFolder >= 0 { close(sizeFolder) }
            if failFolder >= 0 { close(failFolder) }
        }

        /// `true` when a current thumbnail of `uri` is there, `nil` when making one failed
        /// for this version of the file, `false` when one is to be made.
        func state(uri: String, stamp: SourceStamp) throws(CofferError) -> Bool? {
            let name = try ThumbnailStore.fileName(for: uri)
            if sizeFolder >= 0, ThumbnailStore.texts(name, in: sizeFolder, uri: uri, stamp: stamp) != nil { return true }
            if failFolder >= 0, ThumbnailStore.texts(name, in: failFolder, uri: uri, stamp: stamp) != nil { return nil }
            return false
        }
    }

    /// The text chunks of the PNG at `path` when it was made from `uri` as `stamp` describes it.
    private static func texts(_ path: String, uri: String, stamp: SourceStamp) -> [String: String]? {
        texts(path, in: AT_FDCWD, uri: uri, stamp: stamp)
    }

    /// The same for the PNG `name` in the folder open as `folder`.
    private static func texts(_ name: String, in folder: Int32, uri: String, stamp: SourceStamp) -> [String: String]? {
        let fd = openat(folder, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // The chunks come right after the header: 1 KiB holds them unless the URI is long.
        var texts: [String: String]?
        for size in [1 << 10, 64 << 10] where texts == nil {
            withUnsafeTemporaryAllocation(byteCount: size, alignment: 1) { buffer in
                let got = pread(fd, buffer.baseAddress, size, 0)
                guard got > 0 else { texts = [:]; return }
                let (found, complete) = PNGText.chunks(in: UnsafeRawBufferPointer(rebasing: buffer[0..<got]))
                if complete || got < size || size > 1 << 10 { texts = found }
            }
        }
        guard let texts, texts["Thumb::URI"] == uri, texts["Thumb::MTime"] == String(stamp.modified) else { return nil }
        // The size is optional in the standard; when present it must agree.
        if let size = texts["Thumb::Size"], size != String(stamp.size) { return nil }
        return texts
    }

    /// The text chunks a thumbnail of `uri` carries.
    static func labels(uri: String, stamp: SourceStamp) -> [(String, String)] {
        [("Thumb::URI", uri), ("Thumb::MTime", String(stamp.modified)), ("Thumb::Size", String(stamp.size)),
         ("Software", "Coffer")]
    }

    /// Puts `png` in place at `path`, atomically: written under a temporary name in the same
    /// folder, readable by its owner only (as the standard asks), then renamed.
    func store(_ png: [UInt8], at path: String) throws(CofferError) {
        let folder = String(path[..<path.lastIndex(of: "/")!])
        try Self.makeFolders(folder, below: root)
        let temporary = "\(path).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw CofferError.lastSystemError("open", path: nil) }
        var written = 0
        while written < png.count {
            let wrote = png.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if wrote < 0 {
                if errno == EINTR { continue }
                let error = CofferError.lastSystemError("write", path: nil)
                close(fd)
                unlink(temporary)
                throw error
            }
            written += wrote
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = CofferError.lastSystemError("rename", path: nil)
            unlink(temporary)
            throw error
        }
    }

    /// Notes that no thumbnail could be made of `uri` as `stamp` describes it, and why (the
    /// error's detail): a 1 × 1 PNG with the same `Thumb::` chunks, in `fail/coffer-1.0/`.
    func recordFailure(uri: String, stamp: SourceStamp, reason: String) throws(CofferError) {
        let path = try failurePath(for: uri)
        let png = try ImageLibrary.labelled(ImageLibrary.onePixelPNG,
                                            with: Self.labels(uri: uri, stamp: stamp) + [(Self.reasonKey, reason)])
        try store(png, at: path)
    }

    /// Creates the folders of `folder` below `root` (and `root`), at mode 0700.
    private static func makeFolders(_ folder: String, below root: String) throws(CofferError) {
        var made = root
        if mkdir(made, 0o700) != 0 && errno != EEXIST { throw CofferError.lastSystemError("mkdir", path: nil) }
        for part in folder.dropFirst(root.count).split(separator: "/") {
            made += "/" + part
            if mkdir(made, 0o700) != 0 && errno != EEXIST { throw CofferError.lastSystemError("mkdir", path: nil) }
        }
    }
}
