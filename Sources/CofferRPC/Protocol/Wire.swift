import CofferCore
import FileService
import Foundation

/// A node as the contract shows it. `size` is ``FileNode/contentSize``: bytes for regular
/// files, left out for folders, packages, links and other special items.
public struct NodeResult: Encodable, Sendable {
    var path: String
    var name: String
    var kind: String
    var size: Int64?
    var modified: Date
    var created: Date?
    var hidden: Bool
    var type: String
    var excludedFromBackup: Bool
    /// For links, where they point (as written; never followed).
    var linkTarget: String?

    public init(_ node: FileNode) {
        path = node.path.description
        name = node.name
        kind = node.kind.rawValue
        size = node.contentSize
        modified = node.modificationDate
        created = node.creationDate
        hidden = node.isHidden
        type = node.typeIdentifier
        excludedFromBackup = node.isExcludedFromBackup
        linkTarget = node.linkTarget
    }
}

/// `null`.
public struct NullResult: Encodable, Sendable {
    public init() {}

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encodeNil()
    }
}

/// For methods without params.
public struct NoParams: Decodable, Sendable {}

/// A path param: parsed when used, so a bad path is a failed request with its kind
/// (`invalidName`, `outsideSandbox`), as the contract lists them.
public struct PathParam: Decodable, Sendable {
    public var text: String
    public init(from decoder: any Decoder) throws { text = try decoder.singleValueContainer().decode(String.self) }
    /// The path, parsed; a path without a mount prefix is in `files:`.
    public func resolved() throws(CofferError) -> VirtualPath { try VirtualPath(parsing: text) }
}

/// `text` or `base64`.
enum DataEncoding: String, Decodable, Sendable {
    case text, base64
}

extension JSONEncoder {
    /// Dates in ISO 8601, UTC, with milliseconds.
    static let rpc: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.iso8601(date))
        }
        return encoder
    }()
}

/// A `workDoneToken`: a string or an integer, echoed in `$/progress`.
enum ProgressToken: Decodable, Sendable, Hashable {
    case string(String)
    case integer(Int64)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) { self = .string(text); return }
        self = .integer(try container.decode(Int64.self))
    }

    /// The token as JSONSerialization writes it.
    var jsonObject: Any {
        switch self {
        case .string(let text): text
        case .integer(let value): NSNumber(value: value)
        }
    }
}
