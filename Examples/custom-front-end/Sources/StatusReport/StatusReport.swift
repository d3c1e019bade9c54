// What `custom-front-end-example status` says: for each mount, its items and how full it is,
// and what the trash holds. Everything is read through a session, as every front end reads:
// the front end never sees a backend.
import CofferCore
import FileService
import Foundation

/// How the container's mounts stand, at one moment.
public struct StatusReport: Sendable, Encodable, Equatable {
    /// One mount's line.
    public struct MountStatus: Sendable, Encodable, Equatable {
        /// The mount's name (`files`).
        public var name: String
        /// What the mount is, in the user's language, when the application described it.
        public var description: String?
        /// Items directly in the mount's root, hidden ones not counted.
        public var items: Int
        /// What the backend reports of its space; `nil` when it does not say.
        public var space: StorageSpace?
    }

    public var mounts: [MountStatus]
    /// Items in the trash, from every mount that keeps one.
    public var trashed: Int

    /// Reads the report in `session`: a listing of each visible mount's root, its space
    /// where the backend reports one, and the trash.
    ///
    /// - Throws: the `CofferError` of a listing that failed (a mount's server that is down).
    public static func make(in session: Session) async throws(CofferError) -> StatusReport {
        var mounts: [MountStatus] = []
        for mount in session.service.mounts where mount.isVisible {
            let listing = try await session.perform(ListFolder(.root(of: mount.name)))
            let space: StorageSpace?
            do {
                space = try await session.perform(MeasureSpace(mount: mount.name))
            } catch where error.kind == .unsupported {
                space = nil
            }
            mounts.append(MountStatus(name: mount.name, description: mount.description?(session.language),
                                      items: listing.items.filter { !$0.isHidden }.count, space: space))
        }
        let trashed = try await session.perform(ListTrash()).items.count
        return StatusReport(mounts: mounts, trashed: trashed)
    }

    /// The report as lines for a person, in `language`.
    public func lines(in language: Language) -> [String] {
        let width = mounts.map(\.name.count).max() ?? 0
        var lines = mounts.map { mount in
            let name = (mount.name + ":").padding(toLength: width + 1, withPad: " ", startingAt: 0)
            var line = "\(name)  " + Self.items(mount.items)(language)
            if let space = mount.space {
                let used = ByteCountFormatter.string(fromByteCount: space.usedBytes, countStyle: .file)
                if let total = space.totalBytes {
                    let all = ByteCountFormatter.string(fromByteCount: total, countStyle: .file)
                    line += LocalizedText(", \(used) of \(all) used", "，已用 \(used)，共 \(all)")(language)
                } else {
                    line += LocalizedText(", \(used) used", "，已用 \(used)")(language)
                }
            }
            if let description = mount.description { line += " — \(description)" }
            return line
        }
        let trash = Self.items(trashed)
        lines.append(LocalizedText("In the trash, from every mount: \(trash.english)", "废纸篓中（所有挂载点）：\(trash.chinese)")(language))
        return lines
    }

    static func items(_ count: Int) -> LocalizedText {
        LocalizedText(count == 1 ? "1 item" : "\(count) items", "\(count) 项")
    }

    /// The report as one line of JSON, for programs.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(self), as: UTF8.self)) ?? "{}"
    }
}
