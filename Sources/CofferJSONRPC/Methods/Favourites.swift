import CofferCore
import FileService
import Foundation

/// A favourite as RPC shows it: `path` (a virtual path) or `hostPath`, whether it is gone.
struct FavouriteItem: Encodable, Sendable {
    var path: String?
    var hostPath: String?
    var missing: Bool
    var folder: Bool?
    var desktop: Bool

    init(_ status: FavouriteStatus) {
        let favourite = status.favourite
        path = favourite.isHost ? nil : favourite.location
        hostPath = favourite.isHost ? favourite.location : nil
        missing = status.isMissing
        folder = status.isFolder
        desktop = favourite.onDesktop
    }
}

/// `favourites/list`: every favourite, oldest first; one that vanished has `missing: true`.
struct FavouritesList: RPCMethod {
    static let name = "favourites/list"
    struct Result: Encodable, Sendable { var favourites: [FavouriteItem] }

    static func run(_ params: NoParams, _ context: RequestContext) async throws -> Result {
        Result(favourites: try await context.perform(ListFavourites()).map(FavouriteItem.init))
    }
}

/// `favourites/add`: `path` (an item of a mount) or `hostPath` (an allowed folder; `desktop`
/// puts it in the desktop's bookmarks too).
struct FavouritesAdd: RPCMethod {
    static let name = "favourites/add"
    struct Params: Decodable, Sendable { var path: PathParam?; var hostPath: String?; var desktop: Bool? }

    static func run(_ params: Params, _ context: RequestContext) async throws -> FavouriteItem {
        let place: AddFavourite.Place
        switch (params.path, params.hostPath) {
        case (let path?, nil):
            guard params.desktop != true else { throw RPCError.invalidParams("param “desktop” is for a “hostPath”") }
            place = .item(try path.resolved())
        case (nil, let hostPath?): place = .hostFolder(hostPath, desktop: params.desktop ?? false)
        default: throw RPCError.invalidParams("give either param “path” or param “hostPath”")
        }
        let added = try await context.perform(AddFavourite(place))
        return FavouriteItem(FavouriteStatus(favourite: added, isMissing: false, isFolder: nil))
    }
}

/// `favourites/remove`: forgets one, by `path` or `hostPath` as listed; the place is not touched.
struct FavouritesRemove: RPCMethod {
    static let name = "favourites/remove"
    struct Params: Decodable, Sendable { var path: PathParam?; var hostPath: String? }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NullResult {
        switch (params.path, params.hostPath) {
        case (let path?, nil): try await context.perform(RemoveFavourite(try path.resolved().description))
        case (nil, let hostPath?): try await context.perform(RemoveFavourite(hostPath))
        default: throw RPCError.invalidParams("give either param “path” or param “hostPath”")
        }
        return NullResult()
    }
}
