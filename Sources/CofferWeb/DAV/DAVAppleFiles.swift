import CofferCore
import CofferHTTPServer
import CofferRuntime
import FileService
import Foundation
import Synchronization

/// What Finder writes beside a person's files over WebDAV — `.DS_Store` (a folder's window
/// layout) and `._NAME` (AppleDouble: the extended attributes and resource fork of `NAME`) —
/// kept apart from them: never in the mount, so no listing, search, trash or front end shows
/// them, yet served back to WebDAV clients as they were written.
///
/// They are kept under `AppData/dav-apple/MOUNT/PATH` (``Container/davAppleFilesPath``), or in
/// memory when the server is given no folder. A name in this store shadows a file of the same
/// name in the mount for writing; reading falls back to the mount's file when the store has
/// none, so a `._` file made by another front end is still reachable.
final class DAVAppleFiles: Sendable {
    /// The largest such file kept: AppleDouble files are a few kilobytes (a large resource fork
    /// is refused, with `413`).
    static let sizeLimit = 16 << 20

    /// Whether `path` names something Finder keeps beside a file.
    static func holds(_ path: VirtualPath?) -> Bool {
        guard let path, !path.isRoot else { return false }
        let name = path.name
        return name == ".DS_Store" || (name.hasPrefix("._") && name.utf8.count > 2)
    }

    /// Whether a client is Finder (its WebDAV file system, `WebDAVFS/… Darwin/…`): the one
    /// shown these files in its listings.
    static func isFinder(userAgent: String?) -> Bool {
        guard let userAgent else { return false }
        return userAgent.hasPrefix("WebDAVFS/") || userAgent.hasPrefix("WebDAVLib/")
    }

    struct Entry: Sendable {
        var bytes: [UInt8]
        var modified: Date
    }

    private let root: String?
    private let memory = Mutex<[VirtualPath: Entry]>([:])
    private let writing = Mutex<Void>(())

    init(root: String?) { self.root = root }

    /// The file that keeps `path`: its mount's folder, then its path's names, each checked by
    /// ``VirtualPath`` (no `..`, no `/`), so nothing is read or written outside `root`.
    private func file(_ path: VirtualPath) -> String? {
        root.map { root in ([root, path.mount] + path.components).joined(separator: "/") }
    }

    /// What is kept for `path`, as a node a listing or `PROPFIND` shows.
    func node(_ path: VirtualPath) -> FileNode? {
        let facts: (size: Int64, modified: Date)?
        if let file = file(path) {
            guard let found = try? FileManager.default.attributesOfItem(atPath: file),
                  found[.type] as? FileAttributeType == .typeRegular,
                  let size = (found[.size] as? NSNumber)?.int64Value, let modified = found[.modificationDate] as? Date else { return nil }
            facts = (size, modified)
        } else {
            facts = memory.withLock { $0[path].map { (Int64($0.bytes.count), $0.modified) } }
        }
        guard let facts else { return nil }
        return FileNode(path: path, kind: .file, size: facts.size, modificationDate: facts.modified, isHidden: true,
                        typeIdentifier: FileType.Identifier.data)
    }

    func read(_ path: VirtualPath) -> [UInt8]? {
        if let file = file(path) {
            guard node(path) != nil, let data = FileManager.default.contents(atPath: file) else { return nil }
            return [UInt8](data)
        }
        return memory.withLock { $0[path]?.bytes }
    }

    /// Keeps `bytes` for `path`, replacing what was kept: written beside and renamed into place,
    /// so a reader sees the old file or the new one.
    func write(_ bytes: [UInt8], for path: VirtualPath) -> Bool {
        guard let file = file(path) else {
            memory.withLock { $0[path] = Entry(bytes: bytes, modified: Date()) }
            return true
        }
        return writing.withLock { _ in
            let folder = (file as NSString).deletingLastPathComponent
            guard (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil else { return false }
            return (try? Data(bytes).write(to: URL(fileURLWithPath: file), options: .atomic)) != nil
        }
    }

    /// Forgets what is kept for `path`; whether there was something.
    func remove(_ path: VirtualPath) -> Bool {
        guard let file = file(path) else { return memory.withLock { $0.removeValue(forKey: path) != nil } }
        return writing.withLock { _ in unlink(file) == 0 }
    }

    /// What is kept inside `folder` goes with it to `destination` (a folder moved or, with
    /// `copying`, copied), or is forgotten (`destination` nil: the folder was deleted), so that
    /// Finder finds its files where the folder now is.
    func follow(_ folder: VirtualPath, to destination: VirtualPath?, copying: Bool = false) {
        guard let root else {
            memory.withLock { kept in
                for path in kept.keys.filter({ folder.contains($0) && $0 != folder }) {
                    if let destination {
                        let moved = VirtualPath(mount: destination.mount,
                                                trustedComponents: destination.components + path.components.dropFirst(folder.components.count))
                        kept[moved] = kept[path]
                    }
                    if !copying { kept[path] = nil }
                }
            }
            return
        }
        let from = ([root, folder.mount] + folder.components).joined(separator: "/")
        guard FileManager.default.fileExists(atPath: from) else { return }
        writing.withLock { _ in
            if let destination {
                let to = ([root, destination.mount] + destination.components).joined(separator: "/")
                try? FileManager.default.removeItem(atPath: to)
                try? FileManager.default.createDirectory(atPath: (to as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                if copying { try? FileManager.default.copyItem(atPath: from, toPath: to) } else { try? FileManager.default.moveItem(atPath: from, toPath: to) }
            } else {
                try? FileManager.default.removeItem(atPath: from)
            }
        }
    }

    /// What is kept for the members of `folder`.
    func members(of folder: VirtualPath) -> [FileNode] {
        guard let root else {
            return memory.withLock { kept in kept.keys.filter { $0.parent == folder } }.sorted { $0.name < $1.name }.compactMap(node)
        }
        let directory = ([root, folder.mount] + folder.components).joined(separator: "/")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().compactMap { name in
            guard let path = try? folder.appending(name), Self.holds(path) else { return nil }
            return node(path)
        }
    }
}

extension DAVRoutes {
    /// A request for one of Finder's files (``DAVAppleFiles``); `nil` when it goes to the mount
    /// as any other does (reading or removing a name the store does not keep).
    func appleAnswer(_ exchange: HTTPExchange, _ sent: VirtualPath, tokens: Set<String>) -> Int? {
        // (Kept under the composed name: macOS sends names decomposed.)
        let item = DAVPath.composed(sent)
        let kept = apple.node(item)
        switch exchange.method {
        case "GET", "HEAD":
            guard let kept, let bytes = apple.read(item) else { return nil }
            let headers = "Content-Type: application/octet-stream\r\nETag: \(DAVAppleFiles.etag(of: kept))\r\n"
                + "Last-Modified: \(DAVProperties.httpDate(kept.modificationDate))\r\nCache-Control: no-store\r\n"
            exchange.respond(200, headers: headers, length: Int64(bytes.count))
            if exchange.method == "GET" { exchange.write(bytes) }
            return 200
        case "PROPFIND":
            guard let kept else { return nil }
            let request: PropertyRequest
            switch propertyRequest(exchange) {
            case .failure(let refused): return refused.status
            case .success(let read): request = read
            }
            var answer = DAVMultistatus()
            add(kept, request, attributes: [:], to: &answer)
            return xml(exchange, 207, answer.finish())
        case "PUT":
            if let status = locked(exchange, item, creating: kept == nil, tokens: tokens) { return status }
            if exchange.header("If-None-Match")?.trimmingCharacters(in: .whitespaces) == "*", kept != nil {
                return reply(exchange, 412, text: "Something is there, and If-None-Match: * asks for a new file.")
            }
            if let refused = appleRefusal(exchange, item) { return refused }
            let bytes: [UInt8]
            switch exchange.readBody(limit: DAVAppleFiles.sizeLimit) {
            case .failure: return reply(exchange, 413, text: "Finder's \(item.name) is kept up to \(DAVAppleFiles.sizeLimit >> 20) MiB.")
            case .success(let read): bytes = read
            }
            guard apple.write(bytes, for: item) else { return reply(exchange, 507, text: "Finder's \(item.name) could not be kept.") }
            return reply(exchange, kept == nil ? 201 : 204, text: "", headers: apple.node(item).map { "ETag: \(DAVAppleFiles.etag(of: $0))\r\n" } ?? "")
        case "DELETE":
            guard kept != nil else { return nil }
            guard web.service.mounts.first(where: { $0.name == item.mount })?.isWritable == true else {
                return reply(exchange, 403, text: "The mount \(item.mount) is read-only.")
            }
            if let status = locked(exchange, item, creating: true, tokens: tokens) { return status }
            _ = apple.remove(item)
            locks.forget(within: item)
            return reply(exchange, 204, text: "")
        case "PROPPATCH":
            guard kept != nil else { return nil }
            return reply(exchange, 403, text: "Finder's \(item.name) is kept apart from your files and has no properties to change.")
        case "COPY", "MOVE":
            guard kept != nil else { return nil }
            return appleCopyOrMove(exchange, item, moving: exchange.method == "MOVE", tokens: tokens)
        default:
            return nil
        }
    }

    /// Why Finder's file `item` may not be kept (answered here), or `nil`: its mount must be
    /// writable and its folder a folder, as for any file.
    func appleRefusal(_ exchange: HTTPExchange, _ item: VirtualPath) -> Int? {
        guard web.service.mounts.first(where: { $0.name == item.mount })?.isWritable == true else {
            return reply(exchange, 403, text: "The mount \(item.mount) is read-only.")
        }
        guard let parent = item.parent else { return reply(exchange, 409, text: "Finder's files are kept in folders.") }
        switch stat(parent) {
        case .failure(let error): return failure(exchange, error, missingParentIsConflict: true)
        case .success(let node) where node.kind == .file: return reply(exchange, 409, text: "\(parent) is a file, not a folder.")
        case .success: return nil
        }
    }

    /// `COPY` and `MOVE` of one of Finder's files: only to another such name (Finder renames
    /// `._a` to `._b` when it renames `a`).
    private func appleCopyOrMove(_ exchange: HTTPExchange, _ source: VirtualPath, moving: Bool, tokens: Set<String>) -> Int {
        let target: VirtualPath
        do throws(DAVPath.Problem) {
            guard let named = try DAVPath.destination(exchange.header("Destination"), isServed: destinationIsServed(exchange)) else {
                return reply(exchange, 403, text: "The Destination is the collection of mounts.")
            }
            target = DAVPath.composed(named)
        } catch {
            return reply(exchange, error == .elsewhere ? 502 : 400, text: "Destination: \(error)")
        }
        guard DAVAppleFiles.holds(target) else {
            return reply(exchange, 403, text: "Finder's \(source.name) is kept apart from your files: it moves only to another such name.")
        }
        guard let overwrite = DAVHeaders.overwrite(exchange.header("Overwrite")) else { return reply(exchange, 400, text: "Overwrite is T or F.") }
        if target == source { return reply(exchange, 403, text: "The Destination is the item itself.") }
        let existed = apple.node(target) != nil
        if existed && !overwrite { return reply(exchange, 412, text: "Something is at the Destination, and Overwrite is F.") }
        if moving, let status = locked(exchange, source, creating: true, tokens: tokens) { return status }
        if let status = locked(exchange, target, creating: !existed, tokens: tokens) { return status }
        if let refused = appleRefusal(exchange, target) { return refused }
        guard let bytes = apple.read(source), apple.write(bytes, for: target) else {
            return reply(exchange, 507, text: "Finder's \(target.name) could not be kept.")
        }
        if moving {
            _ = apple.remove(source)
            locks.forget(within: source)
        }
        return reply(exchange, existed ? 204 : 201, text: "")
    }
}

extension DAVAppleFiles {
    /// An entity tag from the kept file's size and time (it has no version).
    static func etag(of node: FileNode) -> String {
        "\"apple-\(node.size)-\(Int64((node.modificationDate.timeIntervalSince1970 * 1e6).rounded()))\""
    }
}
