import CofferBackends
import CofferCore
import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What "Open with" hands an application, and where it came from.
public struct HandOver: Sendable, Encodable {
    /// The application it was opened in.
    public var application: DesktopApplications.Application
    /// The host path the application was given: a read-only copy, the file itself.
    public var hostPath: String
    /// Whether the application got the file itself (`--in-place`, or a host file).
    public var inPlace: Bool
}

/// "Open with": the desktop's applications for a file's type, and a file handed to one.
extension FileService {
    /// The folder a file is copied to for an application to read (`tmp/OpenWith` in a container).
    nonisolated var handOverPath: String? { draftsPath.map { $0 + "/OpenWith" } }
    /// A hand-over is kept this long, for the application to read it, then swept.
    static let handOverLifetime: TimeInterval = 24 * 3600

    /// The MIME type of the item at `path`, as the desktop names it.
    func mimeType(of path: VirtualPath) async throws(CofferError) -> String {
        let node = try await stat(path)
        guard node.kind == .file else { throw CofferError(.isADirectory, path: path) }
        return registry.mimeType(of: node.typeIdentifier)
    }

    /// The MIME type of a host file (by its name, as the registry knows types).
    nonisolated func mimeType(ofHostFile hostPath: String) -> String {
        registry.mimeType(of: registry.typeIdentifier(forFileNamed: (hostPath as NSString).lastPathComponent))
    }

    /// Hands the item at `path` to `application`: a read-only copy (mode 0400, in a folder of
    /// its own), or with `inPlace` the file itself, where the mount keeps it on this machine.
    func handOver(_ path: VirtualPath, to application: DesktopApplications.Application,
                  inPlace: Bool) async throws(CofferError) -> HandOver {
        let node = try await stat(path)
        guard node.kind == .file else { throw CofferError(.isADirectory, path: path) }
        let hostPath: String
        if inPlace {
            guard let local = try mount(for: path).backend as? any HostPathNaming else {
                throw CofferError(.unsupported, path: path, detail: "this mount keeps no file on this machine to hand over")
            }
            hostPath = local.hostPath(of: path)
        } else {
            guard let folder = handOverPath else { throw CofferError(.unsupported, path: path) }
            sweepHandOvers(in: folder)
            let own = folder + "/" + UUID().uuidString
            do {
                try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw CofferError(.ioError, detail: "the hand-over folder", underlying: error)
            }
            hostPath = own + "/" + node.name
            let bytes = try await readAll(path, size: node.size)
            try await BlockingIO.run { _ throws(CofferError) in
                let fd = Glibc.open(hostPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
                guard fd >= 0 else { throw CofferError.lastSystemError("open", path: path) }
                defer { Glibc.close(fd) }
                var offset = 0
                while offset < bytes.count {
                    let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                    if written < 0 { if errno == EINTR { continue }; throw CofferError.lastSystemError("write", path: path) }
                    offset += written
                }
                // Read-only: what the application saves goes elsewhere, never silently lost here.
                _ = fchmod(fd, 0o400)
            }
        }
        try launch(application, file: hostPath)
        await noteRecent(path)
        return HandOver(application: application, hostPath: hostPath, inPlace: inPlace)
    }

    /// Where the host file of bookmark `id` is now (it follows the file when it moved).
    func hostPath(ofBookmark id: Int, policy: HostAccessPolicy) async throws(CofferError) -> String {
        try await updatingBookmarks(policy) { bookmarks, policy throws(CofferError) -> String in
            guard let index = bookmarks.firstIndex(where: { $0.id == id }) else {
                throw CofferError(.noSuchFile, detail: "bookmark \(id)")
            }
            let item = try bookmarks[index].locate(using: policy)
            bookmarks[index] = bookmarks[index].updated(with: item)
            return item.path
        }
    }

    /// Opens a host file where it is in `application`, through the session's host access.
    func handOver(hostPath: String, to application: DesktopApplications.Application,
                  policy: HostAccessPolicy) async throws(CofferError) -> HandOver {
        let item = try await BlockingIO.run { _ throws(CofferError) in try policy.open(hostPath) }
        guard !item.isFolder else { throw CofferError(.isADirectory, detail: item.name) }
        try launch(application, file: item.path)
        await noteRecent(hostPath: item.path)
        return HandOver(application: application, hostPath: item.path, inPlace: true)
    }

    private func readAll(_ path: VirtualPath, size: Int64) async throws(CofferError) -> [UInt8] {
        guard size <= 1 << 30 else { throw CofferError(.tooLarge, path: path, detail: "1 GiB") }
        return try await readBytes(path, offset: 0, length: Int(size)).bytes
    }

    /// Starts the application on its own, with nothing of Coffer's (no pipe, no terminal).
    private nonisolated func launch(_ application: DesktopApplications.Application, file: String) throws(CofferError) {
        var command = ExecLine.command(application.exec, file: file, name: application.name)
        if application.inTerminal {
            guard DesktopApplications().programExists("x-terminal-emulator") else {
                throw CofferError(.unsupported, detail: "\(application.id) runs in a terminal, and there is no x-terminal-emulator")
            }
            command = ["x-terminal-emulator", "-e"] + command
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["--"] + command
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw CofferError(.ioError, detail: "\(application.id) could not be started", underlying: error)
        }
    }

    /// Removes hand-overs older than a day (an application has read them by then).
    private nonisolated func sweepHandOvers(in folder: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        let cutoff = Date().addingTimeInterval(-Self.handOverLifetime)
        for name in names {
            let path = folder + "/" + name
            guard let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                  modified < cutoff else { continue }
            try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}
