public import CofferCore
import CofferRuntime

/// Every favourite, oldest first, each checked (one that vanished is marked missing).
public struct ListFavourites: FileOperation {
    public static let name = "favourites"
    public init() {}
    public func run(in context: OperationContext) async throws(CofferError) -> [FavouriteStatus] {
        try await context.service.require(Favourites.self, "favourites").list(in: context.service, policy: context.session.hostPolicy)
    }
}

/// Marks a place to come back to: an item of a mount, or a folder of this computer (through
/// the session's host access; with `desktop`, in the desktop's bookmarks too).
public struct AddFavourite: FileOperation {
    public static let name = "favourite"
    public static let changesFiles = true

    public enum Place: Sendable, Hashable {
        case item(VirtualPath)
        case hostFolder(String, desktop: Bool)
    }

    public var place: Place
    public init(_ place: Place) { self.place = place }

    public func run(in context: OperationContext) async throws(CofferError) -> Favourite {
        switch place {
        case .item(let path):
            try await context.service.require(Favourites.self, "favourites").add(path, in: context.service)
        case .hostFolder(let hostPath, let desktop):
            try await context.service.require(Favourites.self, "favourites").addHost(hostPath, desktop: desktop, policy: context.session.hostPolicy,
                                                       directories: BaseDirectories())
        }
    }

    /// A host folder is recorded without its path (the audit log names no host path).
    public func auditedPaths(for outcome: Result<Favourite, CofferError>) -> [String] {
        if case .item(let path) = place { return [path.description] }
        return ["host"]
    }
}

/// Forgets a favourite by its location as listed; the place itself is not touched.
public struct RemoveFavourite: FileOperation {
    public static let name = "unfavourite"
    public static let changesFiles = true

    public var location: String
    public init(_ location: String) { self.location = location }

    public func run(in context: OperationContext) async throws(CofferError) {
        try await context.service.require(Favourites.self, "favourites").remove(location, directories: BaseDirectories())
    }

    public func auditedPaths(for outcome: Result<Void, CofferError>) -> [String] {
        location.hasPrefix("/") ? ["host"] : [location]
    }
}
