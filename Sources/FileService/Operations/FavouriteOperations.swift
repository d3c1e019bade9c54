public import CofferCore
import CofferRuntime

/// Every favourite, oldest first, each checked (one that vanished is marked missing).
///
/// Fails with `unsupported` on a service without favourites (``Favourites``).
public struct ListFavourites: FileOperation {
    public static let name = "favourites"
    /// Lists the favourites.
    public init() {}
    public func run(in context: OperationContext) async throws(CofferError) -> [FavouriteStatus] {
        try await context.service.require(Favourites.self, "favourites").list(in: context.service, policy: context.session.hostPolicy)
    }
}

/// Marks a place to come back to: an item of a mount, or a folder of this computer (through
/// the session's host access; with `desktop`, in the desktop's bookmarks too).
///
/// Fails with `noSuchFile` when the item or folder is missing, `notADirectory` when the
/// host path is a file, `hostAccessDenied` when the session's host access does not reach
/// it, and `unsupported` on a service without favourites (``Favourites``).
public struct AddFavourite: FileOperation {
    public static let name = "favourite"
    public static let changesFiles = true

    /// A place a favourite names.
    public enum Place: Sendable, Hashable {
        /// An item of a mount.
        case item(VirtualPath)
        /// A folder of this computer, by its host path; with `desktop`, also added to the
        /// desktop's bookmarks (GTK's file chooser and file managers show them).
        case hostFolder(String, desktop: Bool)
    }

    /// The place marked.
    public var place: Place
    /// Marks `place` as a favourite.
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
///
/// Fails with `unsupported` on a service without favourites (``Favourites``).
public struct RemoveFavourite: FileOperation {
    public static let name = "unfavourite"
    public static let changesFiles = true

    /// The favourite's location as ``ListFavourites`` gives it: a virtual path, or a host
    /// path for a folder of this computer.
    public var location: String
    /// Forgets the favourite at `location`.
    public init(_ location: String) { self.location = location }

    public func run(in context: OperationContext) async throws(CofferError) {
        try await context.service.require(Favourites.self, "favourites").remove(location, directories: BaseDirectories())
    }

    public func auditedPaths(for outcome: Result<Void, CofferError>) -> [String] {
        location.hasPrefix("/") ? ["host"] : [location]
    }
}
