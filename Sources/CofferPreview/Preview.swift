public import CofferCore

/// What a file is, at a glance, before it is opened (seed 000: QuickLook): its facts by
/// kind. Read without extracting, converting or decoding more than a header where the
/// format allows.
public struct Preview: Sendable {
    public var node: FileNode
    public var details: Details

    /// The facts that depend on the kind of file.
    public enum Details: Sendable {
        case image(ImageFacts)
        case document(DocumentFacts)
        case text(TextFacts)
        case archive(ArchiveFacts)
        /// Nothing more than its type and size can be said (audio and video included: no
        /// library installed here reads their duration cheaply).
        case none
    }

    public init(node: FileNode, details: Details) {
        self.node = node
        self.details = details
    }

    /// Whether a thumbnail can be made of it (an image or a PDF).
    public var hasThumbnail: Bool {
        switch details {
        case .image, .document: true
        default: false
        }
    }
}

public struct ImageFacts: Sendable, Hashable, Encodable {
    public var width: Int
    public var height: Int
    /// The format, as libvips names its loader: `jpeg`, `png`, `webp`, `gif`, `tiff`, `heif`, `svg`.
    public var format: String
    /// Frames of an animation or pages of a multi-page image; 1 for a still one.
    public var frames: Int
    /// The EXIF orientation (1 upright … 8), when the file says.
    public var orientation: Int?
    /// When the photo was taken, from EXIF (`DateTimeOriginal`, else `DateTime`), as the
    /// camera wrote it in local time: `2024-05-01T12:30:00`.
    public var taken: String?
    /// The camera's make and model from EXIF.
    public var camera: String?
}

public struct DocumentFacts: Sendable, Hashable, Encodable {
    public var pages: Int
    /// The first page's size in points (1/72 inch).
    public var pageWidth: Int
    public var pageHeight: Int
    public var title: String?
    public var author: String?
}

public struct TextFacts: Sendable, Hashable, Encodable {
    /// The encoding the text was read in: `UTF-8`, `UTF-16LE`, `UTF-16BE`, `GB18030`.
    public var encoding: String
    /// Lines, counting a last line without a newline; all of them when `linesComplete`.
    public var lines: Int
    public var linesComplete: Bool
    /// The first lines, each cut at ``Previewer/lineLength`` characters.
    public var firstLines: [String]
}

public struct ArchiveEntry: Sendable, Hashable, Codable {
    public var path: String
    /// As the entry's header declares it; `nil` when it does not say.
    public var size: Int64?
    public var isFolder: Bool
}

public struct ArchiveFacts: Sendable, Hashable, Encodable {
    /// libarchive's name of the format: `ZIP 2.0 (deflation)`, `GNU tar format`, `7-Zip`.
    public var format: String
    /// The compression around it (`gzip`, `xz`), when there is one.
    public var compression: String?
    /// Entries counted; all of them when `entriesComplete`.
    public var entries: Int
    public var entriesComplete: Bool
    /// The sum of the sizes the counted entries declare.
    public var declaredBytes: Int64
    public var firstEntries: [ArchiveEntry]
}

extension Preview.Details {
    /// `image`, `document`, `text`, `archive` or `none`: what a front end switches on.
    public var kind: String {
        switch self {
        case .image: "image"
        case .document: "document"
        case .text: "text"
        case .archive: "archive"
        case .none: "none"
        }
    }
}

/// A thumbnail: a PNG fitting in a square of the size asked for, never larger than the image.
public struct Thumbnail: Sendable {
    public var path: VirtualPath
    /// The square it fits in.
    public var pixels: Int
    public var width: Int
    public var height: Int
    /// The PNG as a client gets it: without the text the cache's copy carries (`Thumb::URI`
    /// names the container's host path, which no answer shows).
    public var png: [UInt8]
    /// The PNG in the freedesktop cache, when it is kept there (the standard sizes).
    public var cachePath: String?

    init(path: VirtualPath, pixels: Int, width: Int, height: Int, png: [UInt8], cachePath: String?) {
        self.path = path
        self.pixels = pixels
        self.width = width
        self.height = height
        self.png = PNGText.removingText(from: png)
        self.cachePath = cachePath
    }
}
