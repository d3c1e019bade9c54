public import CofferCore
public import FileService

/// The facts of a file (``Preview``): what it is, before it is opened.
public struct PreviewItem: FileOperation {
    public static let name = "preview"

    public var path: VirtualPath

    public init(_ path: VirtualPath) { self.path = path }

    public func run(in context: OperationContext) async throws(CofferError) -> Preview {
        try await Previewer(service: context.service).preview(path)
    }
}

/// A thumbnail of an image or PDF fitting in `pixels` × `pixels`, from the cache when it is
/// one of the standard sizes.
public struct MakeThumbnail: FileOperation {
    public static let name = "thumbnail"

    public var path: VirtualPath
    public var pixels: Int

    public init(_ path: VirtualPath, pixels: Int = ThumbnailSize.normal.pixels) {
        self.path = path
        self.pixels = pixels
    }

    public func run(in context: OperationContext) async throws(CofferError) -> Thumbnail {
        try await Previewer(service: context.service).thumbnail(path, pixels: pixels)
    }
}

/// The thumbnails of listed items, made where missing or out of date, on every core.
public struct PrefetchThumbnails: FileOperation {
    public static let name = "thumbnails"

    public var nodes: [FileNode]
    public var size: ThumbnailSize

    public init(_ nodes: [FileNode], size: ThumbnailSize = .normal) {
        self.nodes = nodes
        self.size = size
    }

    public func run(in context: OperationContext) async throws(CofferError) -> PrefetchSummary {
        try await Previewer(service: context.service).prefetch(nodes, size: size)
    }
}
