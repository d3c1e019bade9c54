public import CofferCore
import FileService
import Foundation

/// A node as the contract shows it. `size` is ``FileNode/contentSize``: bytes for regular
/// files, left out for folders, packages, links and other special items.
public struct NodeResult: Encodable, Sendable {
    var path: String
    var name: String
    var kind: String
    var size: Int64?
    /// Left out where the storage keeps no date (an S3 folder).
    var modified: Date?
    var created: Date?
    var hidden: Bool
    var type: String
    var excludedFromBackup: Bool
    /// For links, where they point (as written; never followed).
    var linkTarget: String?
    /// A regular file's version, for conditional saves (`ifVersion`).
    var version: String?
    /// `true` when a thumbnail can be asked for it (``Previewer/offersThumbnail(_:registry:)``),
    /// in listings, searches and `files/stat`; left out otherwise.
    var thumbnail: Bool?

    public init(_ node: FileNode) {
        path = node.path.description
        name = node.name
        kind = node.kind.rawValue
        size = node.contentSize
        modified = node.knownModificationDate
        created = node.creationDate
        hidden = node.isHidden
        type = node.typeIdentifier
        excludedFromBackup = node.isExcludedFromBackup
        linkTarget = node.linkTarget
        version = node.version?.token
    }
}

extension NodeResult {
    /// A host file saved through its bookmark: `path` is the host path written.
    init(hostFile saved: HostSaveResult, type: String) {
        path = saved.savedPath
        name = HostAccess.lastComponent(of: saved.savedPath)
        kind = FileNode.Kind.file.rawValue
        size = saved.size
        modified = saved.modified
        created = nil
        hidden = FileNode.isDotName(name)
        self.type = type
        excludedFromBackup = false
        version = saved.version.token
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
    init(text: String) { self.text = text }
    /// The path, parsed; a path without a mount prefix is in `files:`.
    public func resolved() throws(CofferError) -> VirtualPath { try VirtualPath(parsing: text) }
}

/// A `conflict` param of an operation that can ask: a ``ConflictPolicy``'s name, or `ask` —
/// then a client that answers `conflict/ask` (`capabilities.conflictQuestions`) is asked when
/// the name is taken, and one that does not fails as `fail` does.
struct ConflictParam: Decodable, Sendable {
    var choice: ConflictChoice
    init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        if let named = ConflictChoice(name: text) {
            choice = named
        } else {
            throw DecodingError.dataCorruptedError(in: try decoder.singleValueContainer(),
                                                   debugDescription: "must be one of fail, keepBoth, replace, replaceFolder or ask")
        }
    }
}

/// One item's failure inside a result that answers for several items (`host/import`,
/// `files/tags/set`): its kind and the session's message for it.
struct ItemFailure: Encodable, Sendable {
    var kind: String
    var message: String

    init(_ error: CofferError, _ context: RequestContext) {
        kind = error.kind.identifier
        message = error.userMessage(in: context.language, hints: context.hints).text
    }
}

/// A version param (`ifVersion`): the token a node or a read gave, sent back as it was.
struct VersionParam: Decodable, Sendable {
    var version: FileVersion
    init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let version = FileVersion(token: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "an empty version"))
        }
        self.version = version
    }
}

/// `text` or `base64`.
enum DataEncoding: String, Sendable, WordChoice {
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

/// A result that writes its own JSON: the same bytes `JSONEncoder.rpc` writes (keys sorted,
/// slashes unescaped), for the answers sent most often, where the encoder's generic
/// machinery cost more than the work behind the answer. Another front end's results may
/// write themselves too (MCP's), with ``JSONText`` for their strings.
public protocol JSONWritable {
    func writeJSON(into bytes: inout [UInt8])
}

/// JSON text, for results that write themselves.
public enum JSONText {
    /// `text` as a JSON string, escaped as `JSONEncoder.rpc` escapes it.
    public static func appendQuoted(_ text: String, to bytes: inout [UInt8]) { JSONObjectWriter.quoted(text, into: &bytes) }
}

extension NodeResult: JSONWritable {
    public func writeJSON(into bytes: inout [UInt8]) {
        var object = JSONObjectWriter(into: bytes)
        if let created { object.date("created", created) }
        object.bool("excludedFromBackup", excludedFromBackup)
        object.bool("hidden", hidden)
        object.string("kind", kind)
        if let linkTarget { object.string("linkTarget", linkTarget) }
        if let modified { object.date("modified", modified) }
        object.string("name", name)
        object.string("path", path)
        if let size { object.integer("size", size) }
        if thumbnail == true { object.bool("thumbnail", true) }
        object.string("type", type)
        if let version { object.string("version", version) }
        bytes = object.finish()
    }
}

/// Members written in the order given (the caller sorts them), as `JSONEncoder` writes them.
struct JSONObjectWriter {
    private var bytes: [UInt8]
    private var first = true

    init(into bytes: [UInt8]) {
        self.bytes = bytes
        self.bytes.append(UInt8(ascii: "{"))
    }

    mutating func string(_ key: StaticString, _ value: String) {
        self.key(key)
        Self.quoted(value, into: &bytes)
    }

    mutating func bool(_ key: StaticString, _ value: Bool) {
        self.key(key)
        bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
    }

    mutating func integer(_ key: StaticString, _ value: Int) { integer(key, Int64(value)) }

    mutating func integer(_ key: StaticString, _ value: Int64) {
        self.key(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func date(_ key: StaticString, _ value: Date) {
        self.key(key)
        bytes.append(UInt8(ascii: "\""))
        Timestamp.write(value, into: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func nodes(_ key: StaticString, _ nodes: [NodeResult]) {
        array(key, nodes) { node, bytes in node.writeJSON(into: &bytes) }
    }

    mutating func strings(_ key: StaticString, _ values: [String]) {
        array(key, values) { value, bytes in Self.quoted(value, into: &bytes) }
    }

    private mutating func array<Element>(_ key: StaticString, _ elements: [Element],
                                         _ write: (Element, inout [UInt8]) -> Void) {
        self.key(key)
        bytes.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            write(element, &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private mutating func key(_ key: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    /// A JSON string: `"` and `\` escaped, control characters as `\n`-style or `\u00XX`
    /// escapes, everything else (slashes, all of Unicode) as it is.
    static func quoted(_ text: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Most names need no escape at all: copied whole.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            bytes.append(contentsOf: text.utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                          hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONEncoder {
    /// `value` as JSON: written by itself when it can (``JSONWritable``), else encoded. The
    /// server writes results the same way inside whole responses
    /// (`RPCConnection.response(encoding:id:)`); tests compare the two forms through this.
    static func rpcData<Value: Encodable>(_ value: Value) throws -> Data {
        if let writable = value as? any JSONWritable {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(256)
            writable.writeJSON(into: &bytes)
            return Data(bytes)
        }
        return try rpc.encode(value)
    }
}
