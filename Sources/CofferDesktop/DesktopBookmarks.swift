public import CofferCore
public import CofferRuntime
import Foundation

/// GTK's bookmarks of favourite folders, one `file://` URI a line with an optional label,
/// which GTK's file chooser, Nautilus, Thunar and Caja share. Lines of other programs are
/// kept as they are; the file is replaced atomically.
public struct DesktopBookmarks: Sendable {
    public let path: String

    public init(directories: BaseDirectories) { path = directories.configHome + "/gtk-3.0/bookmarks" }

    /// The `file://` URI GTK writes for a folder.
    public static func uri(_ hostPath: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: " %")
        return "file://" + (hostPath.addingPercentEncoding(withAllowedCharacters: allowed) ?? hostPath)
    }

    public func add(_ hostPath: String) throws(CofferError) {
        try change { lines in
            let uri = Self.uri(hostPath)
            if !lines.contains(where: { $0 == uri || $0.hasPrefix(uri + " ") }) { lines.append(uri) }
        }
    }

    public func remove(_ hostPath: String) throws(CofferError) {
        try change { lines in
            let uri = Self.uri(hostPath)
            lines.removeAll { $0 == uri || $0.hasPrefix(uri + " ") }
        }
    }

    private func change(_ body: (inout [String]) -> Void) throws(CofferError) {
        let folder = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        let before = lines
        body(&lines)
        guard lines != before else { return }
        do {
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CofferError(.ioError, detail: "gtk-3.0/bookmarks", underlying: error)
        }
    }
}
