public import CofferCore
public import CofferRuntime
public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The desktop's list of recently used files, `$XDG_DATA_HOME/recently-used.xbel`: the XBEL
/// file GLib's `GBookmarkFile` and GTK's `GtkRecentManager` read and write, and file
/// managers show as "Recent".
///
/// Coffer adds its entries without disturbing anyone else's: the file is read, each
/// `<bookmark>` element kept as the text it was, Coffer's own application entry added to
/// (or updated in) the bookmark of the file it used — another program's registration for
/// the same file stays beside it — and the whole written to a temporary file (mode 0600)
/// renamed over the old one. Coffer processes take turns under a lock
/// (`recently-used.xbel.coffer-lock`); programs that do not lock write atomically, as GLib
/// does, so a reader never sees half a file.
public struct RecentFiles: Sendable {
    /// The application name Coffer's entries are registered under.
    public static let applicationName = "coffer"

    public let path: String
    /// The command line the desktop runs to open such a file with Coffer (`%u`: its URI).
    public let exec: String

    public init(directories: BaseDirectories = BaseDirectories(), exec: String = "coffer open-files %u") {
        path = directories.dataHome + "/recently-used.xbel"
        self.exec = exec
    }

    /// One file Coffer used: its URI, when, and its MIME type.
    public struct Entry: Sendable, Hashable {
        public var uri: String
        public var used: Date
        public var mimeType: String?
        public var count: Int
    }

    /// Records that Coffer used the host file at `hostPath` (of type `mimeType`) now.
    public func record(hostPath: String, mimeType: String?, at date: Date = Date()) throws(CofferError) {
        try update { document in document.record(uri: Self.uri(hostPath), mimeType: mimeType, date: date, exec: exec) }
    }

    /// The files Coffer used, newest first.
    public func coffersEntries() -> [Entry] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return XBELDocument(text).entries(of: Self.applicationName).sorted { $0.used > $1.used }
    }

    /// The `file://` URI of a host path, escaped as GLib escapes it.
    public static func uri(_ hostPath: String) -> String {
        var allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~/!$&'()*+,;=:@"))
        allowed.remove(charactersIn: "%")
        // Only ASCII stays as it is; every other byte is escaped.
        allowed = allowed.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        return "file://" + (hostPath.addingPercentEncoding(withAllowedCharacters: allowed) ?? hostPath)
    }

    /// The host path of a `file://` URI; `nil` for another kind of URI.
    public static func hostPath(ofURI uri: String) -> String? {
        guard uri.hasPrefix("file://") else { return nil }
        return String(uri.dropFirst("file://".count)).removingPercentEncoding
    }

    private func update(_ change: (inout XBELDocument) -> Void) throws(CofferError) {
        let folder = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let lock = open(path + ".coffer-lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if lock >= 0 { while flock(lock, LOCK_EX) != 0 && errno == EINTR {} }
        defer { if lock >= 0 { close(lock) } }
        var document = XBELDocument((try? String(contentsOfFile: path, encoding: .utf8)) ?? "")
        change(&document)
        let temporary = folder + "/." + PartialName.make()
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CofferError.lastSystemError("open", path: nil) }
        do {
            try WriteAll.bytes(Array(document.text.utf8), to: fd, path: nil)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        _ = fsync(fd)
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = CofferError.lastSystemError("rename", path: nil)
            unlink(temporary)
            throw error
        }
    }
}

/// An XBEL file as text: its `<bookmark>` elements, each kept as it was written except the
/// ones Coffer changes.
struct XBELDocument {
    private var head: String
    private var bookmarks: [String]
    private var tail: String

    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <xbel version="1.0"
              xmlns:bookmark="http://www.freedesktop.org/standards/desktop-bookmarks"
              xmlns:mime="http://www.freedesktop.org/standards/shared-mime-info"
        >

        """

    init(_ text: String) {
        guard let close = text.range(of: "</xbel>", options: .backwards), text.contains("<xbel") else {
            (head, bookmarks, tail) = (Self.header, [], "</xbel>\n")
            return
        }
        var bookmarks: [String] = []
        var cursor = text.startIndex
        var head: String?
        while let start = text.range(of: "<bookmark ", range: cursor..<close.lowerBound),
              let end = text.range(of: "</bookmark>", range: start.upperBound..<close.lowerBound) {
            if head == nil { head = String(text[..<start.lowerBound]) }
            bookmarks.append(String(text[start.lowerBound..<end.upperBound]))
            cursor = end.upperBound
        }
        self.head = head ?? String(text[..<close.lowerBound])
        self.bookmarks = bookmarks
        self.tail = head == nil ? String(text[close.lowerBound...]) : String(text[cursor...])
    }

    var text: String {
        var text = head
        for bookmark in bookmarks {
            if !text.hasSuffix("\n") && !text.hasSuffix(" ") { text += "\n" }
            // A bookmark read back starts at its tag: it gets its indentation again.
            if text.hasSuffix("\n") && !bookmark.hasPrefix(" ") { text += "  " }
            text += bookmark
        }
        if !tail.hasPrefix("\n") { text += "\n" }
        text += tail
        return text.hasSuffix("\n") ? text : text + "\n"
    }

    /// Adds Coffer's use of `uri` now: a new bookmark, or Coffer's application entry in the
    /// existing one (its count one more), the bookmark's times brought up to date.
    mutating func record(uri: String, mimeType: String?, date: Date, exec: String) {
        let stamp = Self.stamp(date)
        let href = Self.escaped(uri)
        if let index = bookmarks.firstIndex(where: { Self.attribute("href", in: Self.startTag(of: $0)) == href }) {
            var bookmark = bookmarks[index]
            bookmark = Self.setting("modified", to: stamp, inStartTagOf: bookmark)
            bookmark = Self.setting("visited", to: stamp, inStartTagOf: bookmark)
            let name = "<bookmark:application name=\"\(RecentFiles.applicationName)\""
            if let start = bookmark.range(of: name), let end = bookmark.range(of: "/>", range: start.upperBound..<bookmark.endIndex) {
                let old = String(bookmark[start.lowerBound..<end.upperBound])
                let count = (Self.attribute("count", in: old).flatMap(Int.init) ?? 0) + 1
                bookmark.replaceSubrange(start.lowerBound..<end.upperBound, with: Self.application(exec: exec, stamp: stamp, count: count))
            } else if let end = bookmark.range(of: "</bookmark:applications>") {
                // After the last application, on a line of its own.
                let lineStart = bookmark[..<end.lowerBound].lastIndex(of: "\n").map { bookmark.index(after: $0) } ?? end.lowerBound
                bookmark.insert(contentsOf: "          " + Self.application(exec: exec, stamp: stamp, count: 1) + "\n", at: lineStart)
            } else if let end = bookmark.range(of: "</metadata>") {
                bookmark.insert(contentsOf: "  <bookmark:applications>\n          "
                    + Self.application(exec: exec, stamp: stamp, count: 1) + "\n        </bookmark:applications>\n      ",
                                at: end.lowerBound)
            } else if let end = bookmark.range(of: "</bookmark>", options: .backwards) {
                bookmark.insert(contentsOf: Self.info(mimeType: mimeType, exec: exec, stamp: stamp) + "\n  ", at: end.lowerBound)
            }
            bookmarks[index] = bookmark
            return
        }
        bookmarks.append("  <bookmark href=\"\(href)\" added=\"\(stamp)\" modified=\"\(stamp)\" visited=\"\(stamp)\">\n"
            + "    " + Self.info(mimeType: mimeType, exec: exec, stamp: stamp) + "\n  </bookmark>")
    }

    /// The files registered by `application`, with when it last used each.
    func entries(of application: String) -> [RecentFiles.Entry] {
        bookmarks.compactMap { bookmark -> RecentFiles.Entry? in
            let name = "<bookmark:application name=\"\(application)\""
            guard let href = Self.attribute("href", in: Self.startTag(of: bookmark)),
                  let start = bookmark.range(of: name),
                  let end = bookmark.range(of: "/>", range: start.upperBound..<bookmark.endIndex)
            else { return nil }
            let tag = String(bookmark[start.lowerBound..<end.upperBound])
            let used = Self.attribute("modified", in: tag).flatMap(Self.date) ?? .distantPast
            var mimeType: String?
            if let mime = bookmark.range(of: "<mime:mime-type "),
               let close = bookmark.range(of: "/>", range: mime.upperBound..<bookmark.endIndex) {
                mimeType = Self.attribute("type", in: String(bookmark[mime.lowerBound..<close.upperBound])).map(Self.unescaped)
            }
            return RecentFiles.Entry(uri: Self.unescaped(href), used: used, mimeType: mimeType,
                                     count: Self.attribute("count", in: tag).flatMap(Int.init) ?? 1)
        }
    }

    /// An `<info>` element as GLib writes it, indented for its place in a bookmark.
    private static func info(mimeType: String?, exec: String, stamp: String) -> String {
        var lines = ["<info>", "      <metadata owner=\"http://freedesktop.org\">"]
        if let mimeType { lines.append("        <mime:mime-type type=\"\(escaped(mimeType))\"/>") }
        lines += ["        <bookmark:applications>", "          " + application(exec: exec, stamp: stamp, count: 1),
                  "        </bookmark:applications>", "      </metadata>", "    </info>"]
        return lines.joined(separator: "\n")
    }

    private static func application(exec: String, stamp: String, count: Int) -> String {
        "<bookmark:application name=\"\(RecentFiles.applicationName)\" exec=\"\(escaped("'" + exec + "'"))\" "
            + "modified=\"\(stamp)\" count=\"\(count)\"/>"
    }

    private static func startTag(of bookmark: String) -> String {
        String(bookmark[..<(bookmark.firstIndex(of: ">") ?? bookmark.endIndex)])
    }

    /// The raw (escaped) value of `name="…"` in a tag.
    static func attribute(_ name: String, in tag: String) -> String? {
        guard let start = tag.range(of: " " + name + "=\"") else { return nil }
        guard let end = tag[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return String(tag[start.upperBound..<end])
    }

    private static func setting(_ name: String, to value: String, inStartTagOf bookmark: String) -> String {
        let tagEnd = bookmark.firstIndex(of: ">") ?? bookmark.endIndex
        var tag = String(bookmark[..<tagEnd])
        if let start = tag.range(of: " " + name + "=\""), let end = tag[start.upperBound...].firstIndex(of: "\"") {
            tag.replaceSubrange(start.upperBound..<end, with: value)
        } else {
            tag += " \(name)=\"\(value)\""
        }
        return tag + bookmark[tagEnd...]
    }

    /// GLib's time stamps: ISO 8601 in UTC with microseconds.
    static func stamp(_ date: Date) -> String {
        let millis = Timestamp.iso8601(date)  // …T12:34:56.789Z
        return String(millis.dropLast()) + "000Z"
    }

    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        // Microseconds: ISO8601DateFormatter takes up to milliseconds.
        if let dot = text.firstIndex(of: "."), text.hasSuffix("Z") {
            let fraction = text[text.index(after: dot)..<text.index(before: text.endIndex)]
            return formatter.date(from: String(text[..<dot]) + "." + fraction.prefix(3) + "Z")
        }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&apos;")
    }

    static func unescaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
