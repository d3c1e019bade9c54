public import CofferDesktop
import CofferBackends
@_spi(Engine) import CofferCore
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

/// The types of items and host files as the desktop names them, for "Open with".
extension FileService {
    /// The MIME type of the item at `path`, as the desktop names it.
    func mimeType(of path: VirtualPath) async throws(CofferError) -> String {
        let node = try await stat(path)
        guard node.kind == .file else { throw CofferError(.isADirectory, path: path) }
        return registry.mimeType(of: node.typeIdentifier)
    }

    /// The MIME type of a host file (by its name, as the registry knows types).
    func mimeType(ofHostFile hostPath: String) -> String {
        registry.mimeType(of: registry.typeIdentifier(forFileNamed: (hostPath as NSString).lastPathComponent))
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
}

/// "Open with": a file handed to one of the desktop's applications — a read-only copy, or the
/// file itself — and the application started on its own. A service has it when its
/// composition root registers it.
public final class OpenWithLauncher: ServiceFeature {
    /// Hand-overs are stages of their own kind in the staging mount (`Documents/ExportTemp/open-…`).
    static let handOverKind = "open"
    /// A hand-over is kept this long, for the application to read it, then swept.
    static let handOverLifetime: TimeInterval = 24 * 3600

    /// The launcher; it starts applications as the desktop names them.
    public init() {}

    /// Hands the item at `path` to `application`: a read-only copy (mode 0400, in a stage of its
    /// own, copied as exports copy), or with `inPlace` the file itself, where the mount keeps it
    /// on this machine.
    func handOver(_ path: VirtualPath, of service: FileService, to application: DesktopApplications.Application,
                  inPlace: Bool) async throws(CofferError) -> HandOver {
        let node = try await service.stat(path)
        guard node.kind == .file else { throw CofferError(.isADirectory, path: path) }
        let hostPath: String
        if inPlace {
            guard let local = try service.mount(for: path).backend as? any HostPathNaming else {
                throw CofferError(.unsupported, path: path, detail: "this mount keeps no file on this machine to hand over")
            }
            hostPath = local.hostPath(of: path)
        } else {
            guard let staging = service.stagingBackend else { throw CofferError(.unsupported, path: path) }
            _ = try? await staging.removeStages(olderThan: Date().addingTimeInterval(-Self.handOverLifetime), kind: Self.handOverKind)
            let stage = try await staging.makeStage(kind: Self.handOverKind)
            let staged = stage.appending(trustedName: node.name)
            do {
                try await service.stageCopy(of: path, from: try service.mount(for: path).backend, to: staging, at: staged, progress: .none)
            } catch {
                try? await staging.removeStage(stage)
                throw error.naming(path, insteadOf: staging.mountName)
            }
            hostPath = staging.hostPath(of: staged)
            // Read-only: what the application saves goes elsewhere, never silently over Coffer's file.
            _ = chmod(hostPath, 0o400)
        }
        try await launch(application, file: hostPath)
        await service.noteUse(.item(path))
        return HandOver(application: application, hostPath: hostPath, inPlace: inPlace)
    }

    /// Opens a host file where it is in `application`, through the session's host access.
    func handOver(hostPath: String, of service: FileService, to application: DesktopApplications.Application,
                  policy: HostAccessPolicy) async throws(CofferError) -> HandOver {
        let item = try await BlockingIO.run { _ throws(CofferError) in try policy.open(hostPath) }
        guard !item.isFolder else { throw CofferError(.isADirectory, detail: item.name) }
        try await launch(application, file: item.path)
        await service.noteUse(.host(item.path))
        return HandOver(application: application, hostPath: item.path, inPlace: true)
    }

    /// How long a started application is watched for a failure at once (no display, a
    /// terminal that cannot start): past it, it is taken as running.
    static let launchWatch: Duration = .seconds(1)

    /// Starts the application on its own, with nothing of Coffer's (no pipe, no terminal), and
    /// watches it for ``launchWatch``: one that ends at once with a failure is reported, not
    /// said to have opened the file.
    private func launch(_ application: DesktopApplications.Application, file: String) async throws(CofferError) {
        var command = ExecLine.command(application.exec, file: file, name: application.name)
        if application.inTerminal {
            guard DesktopApplications().programExists("x-terminal-emulator") else {
                throw CofferError(.unsupported, detail: "\(application.id) runs in a terminal, and there is no x-terminal-emulator")
            }
            command = ["x-terminal-emulator", "-e"] + command
        }
        // A session of its own: the application outlives the command and its terminal. It is
        // reaped when it ends, with no thread waiting for it.
        let child: ChildProcess
        do {
            child = try ChildProcess.start(["/usr/bin/env", "--"] + command, grouping: .ownSession)
        } catch {
            throw CofferError(.unsupported, detail: "application-failed", underlying: error)
        }
        let status = try await BlockingIO.run { _ throws(CofferError) in child.wait(timeout: Self.launchWatch) }
        guard let status else { return child.reapWhenEnded() }
        // Ended at once: a launcher that handed the file on (0), or a failure.
        guard status == 0 else { throw CofferError(.unsupported, detail: "application-failed") }
    }
}
