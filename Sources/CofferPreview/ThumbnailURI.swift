import CofferCore
import Foundation

/// The URI a thumbnail is named by: its MD5, in hexadecimal, is the thumbnail's file name.
enum ThumbnailURI {
    /// `file://` and the host path, percent-encoded as GLib's `g_filename_to_uri` does, so a
    /// file has the name other freedesktop tools give it.
    static func file(hostPath: String) -> String {
        let absolute = hostPath.hasPrefix("/") ? hostPath : FileManager.default.currentDirectoryPath + "/" + hostPath
        return "file://" + escaped(absolute)
    }

    /// A name for an item no host path names (an object in a bucket): `coffer://MOUNT/PATH`.
    static func virtual(_ path: VirtualPath) -> String {
        "coffer://" + escaped(path.mount) + escaped(path.absoluteString)
    }

    private static func escaped(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            if kept(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let digits = Array("0123456789ABCDEF")
                result += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0xF)])
            }
        }
        return result
    }

    /// Unreserved characters, the sub-delimiters and `:@/`: what a path segment may hold.
    private static func kept(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "-._~!$&'()*+,;=:@/".utf8.contains(byte)
        }
    }
}
