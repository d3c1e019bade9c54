import CofferCore
import FileService
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the thumbnails of one folder at one size were made from, in one small file beside
/// them (`normal/.coffer-folders/…`): a second listing with thumbnails reads it and knows at
/// once which files are unchanged, with no read per thumbnail. It only saves work: a file
/// not in it, or changed since, is checked against its thumbnail as the standard says, and
/// a thumbnail asked for is always checked. Deleting the size's folder deletes it too.
struct FolderManifest {
    /// How each file looked when its thumbnail was made (or failed), by name.
    struct Entry: Equatable {
        /// The modification time's bits (exact, as listings report it) and the size.
        var modified: UInt64
        var size: Int64
        /// Whether making it failed (then it is not tried again while unchanged).
        var failed: Bool

        init(_ node: FileNode, failed: Bool) {
            modified = node.modificationDate.timeIntervalSince1970.bitPattern
            size = node.size
            self.failed = failed
        }

        init(modified: UInt64, size: Int64, failed: Bool) {
            self.modified = modified
            self.size = size
            self.failed = failed
        }

        func describes(_ node: FileNode) -> Bool {
            modified == node.modificationDate.timeIntervalSince1970.bitPattern && size == node.size
        }
    }

    let folder: VirtualPath
    var entries: [String: Entry]

    static let header = "coffer-thumbnails 1"

    /// The file of `folder`'s manifest at `size`.
    static func path(of folder: VirtualPath, size: ThumbnailSize, in store: ThumbnailStore) -> String {
        // FNV-1a: a stable name for a cache file (the folder is written inside it as well).
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in folder.description.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        let name = String(hash, radix: 16)
        let folder = "\(store.root)/\(size.folderName)/\(ThumbnailCacheLayout.manifestFolder)"
        return "\(folder)/\(String(repeating: "0", count: 16 - name.count))\(name)"
    }

    /// The manifest of `folder`, or an empty one when there is none or it is not `folder`'s.
    static func read(_ folder: VirtualPath, size: ThumbnailSize, in store: ThumbnailStore) -> FolderManifest {
        var manifest = FolderManifest(folder: folder, entries: [:])
        let fd = open(path(of: folder, size: size, in: store), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return manifest }
        defer { close(fd) }
        // Read at its size in one call (a folder of 200 photos makes some 8 KiB): a one-off
        // `ls --thumbnails` spends more on touching fresh memory than on parsing.
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_size > 0, status.st_size <= 64 << 20 else { return manifest }
        let expected = Int(status.st_size)
        let bytes = [UInt8](unsafeUninitializedCapacity: expected) { buffer, count in
            while count < expected {
                let got = Glibc.read(fd, buffer.baseAddress! + count, expected - count)
                guard got > 0 else { break }
                count += got
            }
        }
        guard bytes.count == expected else { return manifest }
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard lines.count >= 2, String(decoding: lines[0], as: UTF8.self) == header,
              String(decoding: lines[1], as: UTF8.self) == escaped(folder.description) else { return manifest }
        manifest.entries.reserveCapacity(lines.count - 2)
        for line in lines.dropFirst(2) where !line.isEmpty {
            let fields = line.split(separator: UInt8(ascii: "\t"), maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count == 4, let modified = number(fields[1], radix: 16), let size = number(fields[2], radix: 10)
            else { continue }
            // Names are written escaped only when they hold a backslash, tab or line break.
            let name = fields[3].contains(UInt8(ascii: "\\")) ? unescaped(String(decoding: fields[3], as: UTF8.self))
                                                              : String(decoding: fields[3], as: UTF8.self)
            manifest.entries[name] = Entry(modified: modified, size: Int64(bitPattern: size),
                                           failed: fields[0].first == UInt8(ascii: "f"))
        }
        return manifest
    }

    /// A number written in `radix` (16 or 10) without a sign, read from its bytes.
    private static func number(_ digits: ArraySlice<UInt8>, radix: UInt64) -> UInt64? {
        guard !digits.isEmpty, digits.count <= 20 else { return nil }
        var value: UInt64 = 0
        for digit in digits {
            let figure: UInt64
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): figure = UInt64(digit - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: figure = UInt64(digit - UInt8(ascii: "a") + 10)
            default: return nil
            }
            let (scaled, over) = value.multipliedReportingOverflow(by: radix)
            let (sum, carry) = scaled.addingReportingOverflow(figure)
            if over || carry { return nil }
            value = sum
        }
        return value
    }

    /// Writes it in place of the last one, atomically (a temporary name, then a rename).
    func write(size: ThumbnailSize, in store: ThumbnailStore) throws(CofferError) {
        var text = "\(Self.header)\n\(Self.escaped(folder.description))\n"
        for (name, entry) in entries.sorted(by: { $0.key < $1.key }) {
            text += "\(entry.failed ? "fail" : "ok")\t\(String(entry.modified, radix: 16))\t\(entry.size)\t\(Self.escaped(name))\n"
        }
        try store.store(Array(text.utf8), at: Self.path(of: folder, size: size, in: store))
    }

    /// Names and paths on one line: backslash, tab, newline and carriage return escaped.
    static func escaped(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result.append(contentsOf: "\\\\".unicodeScalars)
            case "\t": result.append(contentsOf: "\\t".unicodeScalars)
            case "\n": result.append(contentsOf: "\\n".unicodeScalars)
            case "\r": result.append(contentsOf: "\\r".unicodeScalars)
            default: result.append(scalar)
            }
        }
        return String(result)
    }

    static func unescaped(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        var escaping = false
        for scalar in text.unicodeScalars {
            if escaping {
                switch scalar {
                case "t": result.append("\t")
                case "n": result.append("\n")
                case "r": result.append("\r")
                default: result.append(scalar)
                }
                escaping = false
            } else if scalar == "\\" {
                escaping = true
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }
}
