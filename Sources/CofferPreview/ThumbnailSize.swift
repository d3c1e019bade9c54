import FileService

/// The sizes of the freedesktop.org Thumbnail Managing Standard: a thumbnail fits in a
/// square of this many pixels, and each size has its folder.
public enum ThumbnailSize: Int, CaseIterable, Sendable, Comparable {
    case normal = 128
    case large = 256
    case xLarge = 512
    case xxLarge = 1024

    /// The longest side, in pixels.
    public var pixels: Int { rawValue }

    /// The folder the standard names for it.
    public var folderName: String { ThumbnailCacheLayout.sizeFolders[Self.allCases.firstIndex(of: self)!] }

    /// A size by its folder name (`large`) or its pixels (`256`).
    public init?(name: String) {
        if let size = Self.allCases.first(where: { $0.folderName == name }) {
            self = size
        } else if let pixels = Int(name), let size = Self(rawValue: pixels) {
            self = size
        } else {
            return nil
        }
    }

    /// The smallest size at least `pixels` wide (the largest for anything bigger).
    public static func fitting(_ pixels: Int) -> ThumbnailSize {
        allCases.first { $0.pixels >= pixels } ?? .xxLarge
    }

    public static func < (lhs: ThumbnailSize, rhs: ThumbnailSize) -> Bool { lhs.rawValue < rhs.rawValue }
}
