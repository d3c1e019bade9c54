import CofferCore
import FileService
import Foundation

/// The live properties Coffer gives each item (RFC 4918, 15), written as an answer carries them.
enum DAVProperties {
    /// `DAV:resourcetype`, `getcontentlength`, `getlastmodified`, `getetag`, `getcontenttype`
    /// and `displayname` of `node`, each with its value as XML.
    static func live(of node: FileNode, registry: TypeRegistry) -> [(name: QualifiedName, value: String)] {
        let isCollection = node.kind != .file
        var properties: [(name: QualifiedName, value: String)] = [
            (.dav("resourcetype"), isCollection ? "<D:collection/>" : ""),
            (.dav("displayname"), DAVXML.escaped(node.path.isRoot ? node.path.mount : node.name)),
        ]
        if node.modificationDate != .distantPast {
            properties.append((.dav("getlastmodified"), httpDate(node.modificationDate)))
        }
        if !isCollection {
            properties.append((.dav("getcontentlength"), String(node.size)))
            properties.append((.dav("getcontenttype"), DAVXML.escaped(registry.mimeType(of: node.typeIdentifier))))
            if let etag = etag(of: node) { properties.append((.dav("getetag"), DAVXML.escaped(etag))) }
        }
        return properties
    }

    /// The properties of `/dav/`, the collection of mounts.
    static func rootCollection() -> [(name: QualifiedName, value: String)] {
        [(.dav("resourcetype"), "<D:collection/>"), (.dav("displayname"), "Coffer")]
    }

    /// The file's version as a strong entity tag (`"…"`), where it has one.
    static func etag(of node: FileNode) -> String? {
        node.version.map { "\"\($0.token)\"" }
    }

    /// An HTTP date (RFC 9110's IMF-fixdate), as `getlastmodified` and `Last-Modified` carry it.
    static func httpDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}

extension PropertyRequest {
    /// Whether an answer to this request carries the property `name` when the item has it.
    func wants(_ name: QualifiedName) -> Bool {
        switch self {
        case .all, .names: true
        case .some(let names): names.contains(name)
        }
    }

    /// The properties asked for that the item does not have (`404` in the answer).
    func missing(from properties: [(name: QualifiedName, value: String)]) -> [QualifiedName] {
        let held = Set(properties.map(\.name))
        switch self {
        case .some(let names): return names.filter { !held.contains($0) }
        case .all(let included): return included.filter { !held.contains($0) }
        case .names: return []
        }
    }
}

/// RFC 4331's quota properties of a collection: what its files hold (`quota-used-bytes`, its
/// folder's disk usage) and what can still be written (`quota-available-bytes`, the mount's
/// report, where its storage gives one).
enum DAVQuota {
    static let names: Set<QualifiedName> = [.dav("quota-available-bytes"), .dav("quota-used-bytes")]

    static func properties(of folder: VirtualPath, in session: Session) async -> [(name: QualifiedName, value: String)] {
        var found: [(name: QualifiedName, value: String)] = []
        if let space = try? await session.perform(MeasureSpace(mount: folder.mount)), let available = space.availableBytes {
            found.append((.dav("quota-available-bytes"), String(available)))
            if folder.isRoot { found.append((.dav("quota-used-bytes"), String(space.usedBytes))) }
        }
        if !folder.isRoot, let usage = try? await session.perform(MeasureDiskUsage(folder)) {
            found.append((.dav("quota-used-bytes"), String(usage.bytes)))
        }
        return found
    }
}
