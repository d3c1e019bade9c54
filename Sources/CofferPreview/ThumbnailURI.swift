import CCofferVips
import CofferCore
import Foundation

/// The URI a thumbnail is named by: its MD5, in hexadecimal, is the thumbnail's file name.
/// Made by GLib, as the desktops that share the standard's cache make theirs.
enum ThumbnailURI {
    /// `file://` and the absolute host path, escaped by `g_filename_to_uri`.
    static func file(hostPath: String) throws(CofferError) -> String {
        let absolute = hostPath.hasPrefix("/") ? hostPath : FileManager.default.currentDirectoryPath + "/" + hostPath
        return try taking(coffer_file_uri(absolute))
    }

    /// A name for an item no host path names (an object in a bucket): `coffer://MOUNT/PATH`,
    /// the path escaped as a URI's path is.
    static func virtual(_ path: VirtualPath) throws(CofferError) -> String {
        "coffer://" + (try taking(coffer_uri_escape(path.mount, "")))
            + (try taking(coffer_uri_escape(path.absoluteString, "!$&'()*+,;=:@/")))
    }

    private static func taking(_ text: UnsafeMutablePointer<CChar>?) throws(CofferError) -> String {
        guard let text else { throw CofferError(.unsupported, detail: "no-image-library") }
        defer { coffer_glib_free(text) }
        return String(cString: text)
    }
}
