public import CofferDesktop
public import CofferCore

/// The desktop's applications for a file's type, the default first (``DesktopApplications``).
public struct ListApplications: FileOperation {
    public static let name = "applications"

    public enum Item: Sendable, Hashable {
        case path(VirtualPath)
        case host(String)
        /// A host file opened in place before (`open`, `host/open`), by its bookmark.
        case bookmark(Int)
    }

    public var item: Item
    public var applications: DesktopApplications

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
public struct OpenWithApplication: FileOperation {
    public static let name = "openWith"
    public static let changesFiles = true

    public var item: ListApplications.Item
    public var application: String?
    public var inPlace: Bool
    public var applications: DesktopApplications

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
