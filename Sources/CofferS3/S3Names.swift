import CofferCore
import CofferRuntime
import Foundation
import Synchronization

/// Keys whose names Coffer cannot show as they are — a control character, more than 255
/// bytes —, shown under a safe name and still reachable by it.
///
/// A name with a problem is shown with each control character and `%` escaped as `%XX`
/// (`bad%01name.txt`); one still too long is cut to fit, keeping its extension, with a
/// digest of the whole name (`xxxx…-1a2b3c4d.txt`). The backend remembers, for each such
/// name it has listed, the key it stands for, so `rm`, `cp` and `mv` reach the right
/// object; a path not met in a listing yet is looked for in a listing of its folder.
final class S3Names: Sendable {
    /// Shown name → the key's name, by folder key.
    private let escaped = Mutex<[String: [String: String]]>([:])

    /// The name to show for `raw` (a key's name one level down), remembering the key's name
    /// when it is not `raw` itself; `nil` for a name nothing can show (empty, `.`, `..`).
    func shown(_ raw: String, in folder: String) -> String? {
        guard !raw.isEmpty, !raw.contains("/") else { return nil }
        if FileName.problem(with: raw) == nil { return raw }
        guard let name = Self.escape(raw), FileName.problem(with: name) == nil else { return nil }
        escaped.withLock { $0[folder, default: [:]][name] = raw }
        return name
    }

    /// The key's name that the shown `name` in `folder` stands for (itself, unless it was
    /// escaped in a listing).
    func raw(_ name: String, in folder: String) -> String {
        escaped.withLock { $0[folder]?[name] } ?? name
    }

    /// Whether `name` in `folder` has been seen standing for another key's name.
    func knows(_ name: String, in folder: String) -> Bool {
        escaped.withLock { $0[folder]?[name] != nil }
    }

    static func escape(_ raw: String) -> String? {
        var text = ""
        for scalar in raw.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F || scalar == "%" {
                for byte in String(scalar).utf8 { text += String(format: "%%%02X", byte) }
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        guard text.utf8.count > FileName.maximumByteCount else { return text }
        // Too long: the start, cut on a character, then a digest of the whole name, then the extension.
        let digest = ((try? Digest.sha256(Array(raw.utf8))).map { Digest.hex($0).prefix(8) }).map(String.init) ?? "long"
        let dot = text.lastIndex(of: ".").map { String(text[$0...]) } ?? ""
        let tail = "…-" + digest + (dot.utf8.count <= 16 ? dot : "")
        return FileName.prefix(of: text, fittingIn: FileName.maximumByteCount - tail.utf8.count) + tail
    }
}
