public import CofferDesktop
public import CofferCore

/// The desktop's applications for a file's type, the default first (`DesktopApplications`),
/// with the MIME type they were chosen for.
///
/// Fails with `isADirectory` for a folder of a mount, `noSuchFile` when the item is missing
/// or the bookmark unknown, and `staleBookmark` for a bookmarked file deleted or replaced.
public struct ListApplications: FileOperation {
    public static let name = "applications"

    /// A file "Open with" is about.
    public enum Item: Sendable, Hashable {
        /// A file of a mount.
        case path(VirtualPath)
        /// A file of this computer, by its host path.
        case host(String)
        /// A host file opened in place before (`open`, `host/open`), by its bookmark.
        case bookmark(Int)
    }

    /// The file whose applications are listed.
    public var item: Item
    /// The desktop's applications and their defaults (the user's by default).
    public var applications: DesktopApplications

    /// Lists the applications that open `item`.
    public init(_ item: Item, applications: DesktopApplications = DesktopApplications()) {
        self.item = item
        self.applications = applications
    }

    public func run(in context: OperationContext) async throws(CofferError) -> (mimeType: String, applications: [DesktopApplications.Application]) {
        let type: String
        switch item {
        case .path(let path): type = try await context.service.mimeType(of: path)
        case .host(let hostPath): type = context.service.mimeType(ofHostFile: hostPath)
        case .bookmark(let id):
            type = context.service.mimeType(ofHostFile: try await context.service.hostPath(ofBookmark: id, policy: context.session.hostPolicy))
        }
        return (type, applications.applications(for: type))
    }
}

/// Opens a file in another application: a file of a mount as a read-only copy (or itself,
/// `inPlace`), a host file where it is. Without `application`, the desktop's default.
///
/// Fails with `invalidArgument` when the application named does not open the file's type,
/// `unsupported` when no application does or the service has no ``OpenWithLauncher``, and
/// as ``ListApplications`` does. The audit entry names the item, never a host path.
public struct OpenWithApplication: FileOperation {
    public static let name = "openWith"
    public static let changesFiles = true

    /// The file opened.
    public var item: ListApplications.Item
    /// The application, by its desktop id or name; `nil` for the default for the file's type.
    public var application: String?
    /// Whether a file of a mount is handed over itself rather than as a read-only copy.
    public var inPlace: Bool
    /// The desktop's applications and their defaults (the user's by default).
    public var applications: DesktopApplications

    /// Opens `item` in `application`, or in the default one.
    public init(_ item: ListApplications.Item, application: String? = nil, inPlace: Bool = false,
                applications: DesktopApplications = DesktopApplications()) {
        self.item = item
        self.application = application
        self.inPlace = inPlace
        self.applications = applications
    }

    public func run(in context: OperationContext) async throws(CofferError) -> HandOver {
        let (type, available) = try await ListApplications(item, applications: applications).run(in: context)
        let chosen: DesktopApplications.Application
        if let application {
            guard let found = DesktopApplications.pick(application, from: available) else {
                throw CofferError(.invalidArgument, detail: "no application “\(application)” opens \(type): "
                                  + (available.isEmpty ? "none does" : available.map(\.id).joined(separator: ", ")))
            }
            chosen = found
        } else {
            guard let first = available.first else { throw CofferError(.unsupported, detail: "no application opens \(type)") }
            chosen = first
        }
        switch item {
        case .path(let path): return try await context.service.require(OpenWithLauncher.self, "open-with").handOver(path, of: context.service, to: chosen, inPlace: inPlace)
        case .host(let hostPath):
            return try await context.service.require(OpenWithLauncher.self, "open-with").handOver(hostPath: hostPath, of: context.service, to: chosen, policy: context.session.hostPolicy)
        case .bookmark(let id):
            let policy = context.session.hostPolicy
            return try await context.service.require(OpenWithLauncher.self, "open-with").handOver(hostPath: try await context.service.hostPath(ofBookmark: id, policy: policy), of: context.service,
                                                      to: chosen, policy: policy)
        }
    }

    /// A host file is recorded without its path (the audit log names no host path).
    public func auditedPaths(for outcome: Result<HandOver, CofferError>) -> [String] {
        switch item {
        case .path(let path): [path.description]
        case .bookmark(let id): ["bookmark:\(id)"]
        case .host: ["host"]
        }
    }
}
