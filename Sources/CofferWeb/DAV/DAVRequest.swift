import CofferCore
import Foundation

/// What a `PROPFIND` asks for (RFC 4918, 9.1): an empty body is `allprop`.
enum PropertyRequest: Equatable, Sendable {
    /// Every live property Coffer defines and every dead one, with these too (`include`).
    case all(including: [QualifiedName])
    /// The names only (`propname`).
    case names
    /// These properties.
    case some([QualifiedName])

    init(body: [UInt8]) throws(DAVXML.Refusal) {
        guard body.contains(where: { !$0.isASCIIWhitespace }) else {
            self = .all(including: [])
            return
        }
        let root = try DAVXML.parse(body)
        guard root.name == .dav("propfind") else { throw .unexpected("a PROPFIND body is a DAV:propfind element") }
        if let prop = root.child(.dav("prop")) {
            self = .some(prop.children.map(\.name))
        } else if root.child(.dav("propname")) != nil {
            self = .names
        } else if root.child(.dav("allprop")) != nil {
            self = .all(including: root.child(.dav("include"))?.children.map(\.name) ?? [])
        } else {
            throw .unexpected("DAV:propfind holds DAV:prop, DAV:propname or DAV:allprop")
        }
    }
}

/// One instruction of a `PROPPATCH` (RFC 4918, 9.2), in document order.
enum PropertyInstruction: Equatable, Sendable {
    /// Set the property to this value (its contents as XML, or its text).
    case set(QualifiedName, DAVElement)
    case remove(QualifiedName)

    var name: QualifiedName {
        switch self {
        case .set(let name, _), .remove(let name): name
        }
    }

    /// The instructions of a `DAV:propertyupdate` body.
    static func parse(_ body: [UInt8]) throws(DAVXML.Refusal) -> [PropertyInstruction] {
        let root = try DAVXML.parse(body)
        guard root.name == .dav("propertyupdate") else { throw .unexpected("a PROPPATCH body is a DAV:propertyupdate element") }
        var instructions: [PropertyInstruction] = []
        for step in root.children {
            guard step.name == .dav("set") || step.name == .dav("remove") else { continue }
            for prop in step.children where prop.name == .dav("prop") {
                for property in prop.children {
                    instructions.append(step.name == .dav("set") ? .set(property.name, property) : .remove(property.name))
                }
            }
        }
        guard !instructions.isEmpty else { throw .unexpected("DAV:propertyupdate names no property") }
        return instructions
    }
}

/// A `LOCK` request's body (RFC 4918, 9.10): an exclusive or shared write lock, and who
/// asked (the `DAV:owner` element, kept as the client wrote it).
struct LockRequest: Equatable, Sendable {
    var exclusive: Bool
    var owner: DAVElement?

    init(body: [UInt8]) throws(DAVXML.Refusal) {
        let root = try DAVXML.parse(body)
        guard root.name == .dav("lockinfo") else { throw .unexpected("a LOCK body is a DAV:lockinfo element") }
        guard let scope = root.child(.dav("lockscope"))?.children.first?.name,
              scope == .dav("exclusive") || scope == .dav("shared") else {
            throw .unexpected("DAV:lockinfo names DAV:exclusive or DAV:shared in DAV:lockscope")
        }
        guard root.child(.dav("locktype"))?.child(.dav("write")) != nil else {
            throw .unexpected("the only lock type is DAV:write")
        }
        exclusive = scope == .dav("exclusive")
        owner = root.child(.dav("owner"))
    }
}

/// WebDAV's request headers, read as RFC 4918, section 10, writes them.
enum DAVHeaders {
    /// How deep a request goes (`Depth`).
    enum Depth: Equatable, Sendable {
        case zero, one, infinity

        /// `nil` for a value RFC 4918 does not define (a 400).
        init?(_ text: String?, default fallback: Depth) {
            guard let text else {
                self = fallback
                return
            }
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "0": self = .zero
            case "1": self = .one
            case "infinity": self = .infinity
            default: return nil
            }
        }
    }

    /// `Overwrite` (10.6): `T` by default; `nil` for another value.
    static func overwrite(_ text: String?) -> Bool? {
        guard let text else { return true }
        switch text.trimmingCharacters(in: .whitespaces).uppercased() {
        case "T": return true
        case "F": return false
        default: return nil
        }
    }

    /// Lock timeouts (`Timeout`, 10.7): the first the server accepts of those asked, in
    /// seconds, at most `maximum` (`Infinite` is the maximum); `default` when none is given.
    static func timeout(_ text: String?, default fallback: Int, maximum: Int) -> Int {
        guard let text else { return fallback }
        for choice in text.split(separator: ",") {
            let value = choice.trimmingCharacters(in: .whitespaces)
            if value.caseInsensitiveCompare("Infinite") == .orderedSame { return maximum }
            if value.lowercased().hasPrefix("second-"), let seconds = Int(value.dropFirst(7)), seconds > 0 {
                return min(seconds, maximum)
            }
        }
        return fallback
    }
}

/// Where a WebDAV URL points: `/dav/MOUNT/NAME/…` is the item `MOUNT:/NAME/…`.
enum DAVPath {
    /// Where the collections are.
    static let prefix = "/dav/"

    /// Why a path names nothing Coffer serves.
    enum Problem: Error, Equatable {
        /// Not under `/dav/`, or a `Destination` on another server (502: RFC 4918, 9.9.4).
        case elsewhere
        /// `..`, `.`, an encoded `/` or NUL, bad percent-encoding, or a name Coffer refuses.
        case refused(String)
    }

    /// The item `path` (as the request line has it, percent-encoded) names; `nil` for `/dav/`
    /// itself, the collection of mounts.
    static func item(_ path: String) throws(Problem) -> VirtualPath? {
        guard path.hasPrefix(prefix) || path == "/dav" else { throw .elsewhere }
        let rest = path.dropFirst(min(path.count, prefix.count))
        var names: [String] = []
        for raw in rest.split(separator: "/", omittingEmptySubsequences: true) {
            let lowered = raw.lowercased()
            if lowered.contains("%2f") || lowered.contains("%00") || lowered.contains("%5c") {
                throw .refused("an encoded slash, backslash or NUL in a name")
            }
            guard let name = TrashInfo.percentDecoded(String(raw)) else { throw .refused("bad percent-encoding") }
            if name == "." || name == ".." { throw .refused("“.” and “..” are not names") }
            names.append(name)
        }
        guard let mount = names.first else { return nil }
        guard VirtualPath.isValidMountName(mount) else { throw .refused("no mount is named so") }
        do {
            // Names as sent, byte for byte: an existing item is found under the name it has.
            return try VirtualPath(mount: mount, components: Array(names.dropFirst()))
        } catch {
            throw .refused(error.detail ?? "a name Coffer refuses (\(error.kind))")
        }
    }

    /// `item` with its last name composed (NFC), for an item to be made: macOS sends names
    /// decomposed, and Coffer's own front ends make them composed.
    static func composed(_ item: VirtualPath) -> VirtualPath {
        guard let parent = item.parent else { return item }
        return parent.appending(trustedName: item.name.precomposedStringWithCanonicalMapping)
    }

    /// The item a `Destination` header names: an absolute URL whose authority `isServed`
    /// (`Host` names this server), or an absolute path.
    static func destination(_ header: String?, isServed: (String) -> Bool) throws(Problem) -> VirtualPath? {
        guard let header, !header.isEmpty else { throw .refused("COPY and MOVE need a Destination") }
        var path = header
        if let schemeEnd = header.range(of: "://") {
            let afterScheme = header[schemeEnd.upperBound...]
            let authorityEnd = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
            let authority = String(afterScheme[..<authorityEnd]).lowercased()
            guard isServed(authority) else { throw .elsewhere }
            path = String(afterScheme[authorityEnd...])
        }
        guard path.hasPrefix("/") else { throw .refused("a Destination is an absolute URL or path") }
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<query]) }
        return try item(path)
    }

    /// The URL path of `item` (percent-encoded; a collection's ends in `/`).
    static func href(_ item: VirtualPath, isCollection: Bool) -> String {
        // (A name holds no `/`: every other byte but the unreserved ones is escaped.)
        var out = prefix + TrashInfo.percentEncoded(item.mount) + "/"
        for name in item.components { out += TrashInfo.percentEncoded(name) + "/" }
        if !isCollection && !item.isRoot { out.removeLast() }
        return out
    }
}

private extension UInt8 {
    var isASCIIWhitespace: Bool { self == 0x20 || self == 0x09 || self == 0x0A || self == 0x0D }
}

/// The `If` header (RFC 4918, 10.4): lists of conditions on lock tokens and entity tags, each
/// list about the request's own item or about the item its tag names. The header holds when
/// any one list holds, and a list holds when every condition in it does.
struct DAVIfHeader: Equatable, Sendable {
    struct Condition: Equatable, Sendable {
        var negated = false
        /// A state token (`<opaquelocktoken:…>`, or `<DAV:no-lock>`, which no item has).
        var token: String?
        /// An entity tag (`["…"]`), as written.
        var etag: String?
    }

    struct List: Equatable, Sendable {
        /// The URL of a tagged list (`<http://…/dav/files/a>`); `nil` for the request's item.
        var resource: String?
        var conditions: [Condition]
    }

    var lists: [List]

    /// The lock tokens the header shows (those not under `Not`): what a request submits to
    /// change a locked item.
    var tokens: Set<String> {
        Set(lists.flatMap { $0.conditions.compactMap { $0.negated ? nil : $0.token } })
    }

    /// `nil` for a header that does not follow the grammar (a `400`).
    init?(_ text: String) {
        var rest = Substring(text)
        func skipSpace() { rest = rest.drop { $0 == " " || $0 == "\t" } }
        /// The text up to `end`, past it; `nil` when it never ends.
        func read(until end: Character) -> String? {
            guard let index = rest.firstIndex(of: end) else { return nil }
            defer { rest = rest[rest.index(after: index)...] }
            return String(rest[..<index])
        }
        var lists: [List] = []
        var resource: String?
        var tagged: Bool?
        skipSpace()
        while let next = rest.first {
            rest = rest.dropFirst()
            switch next {
            case "<":
                // A tag: every list of the header is tagged, or none is.
                guard tagged != false, let url = read(until: ">") else { return nil }
                (resource, tagged) = (url, true)
            case "(":
                if tagged == nil { tagged = false }
                var conditions: [Condition] = []
                while true {
                    skipSpace()
                    guard let first = rest.first else { return nil }
                    if first == ")" {
                        rest = rest.dropFirst()
                        break
                    }
                    var condition = Condition()
                    if rest.hasPrefix("Not") {
                        condition.negated = true
                        rest = rest.dropFirst(3)
                        skipSpace()
                    }
                    switch rest.first {
                    case "<":
                        rest = rest.dropFirst()
                        guard let token = read(until: ">"), !token.isEmpty else { return nil }
                        condition.token = token
                    case "[":
                        rest = rest.dropFirst()
                        guard let etag = read(until: "]"), !etag.isEmpty else { return nil }
                        condition.etag = etag
                    default: return nil
                    }
                    conditions.append(condition)
                }
                guard !conditions.isEmpty else { return nil }
                lists.append(List(resource: resource, conditions: conditions))
            default:
                return nil
            }
            skipSpace()
        }
        guard !lists.isEmpty else { return nil }
        self.lists = lists
    }

    /// Whether the header holds, given the lock tokens that govern an item and its entity tag
    /// (`nil` for none: a collection, or nothing there). `item` resolves a tag's URL; a list
    /// whose URL names nothing served here does not hold.
    func holds(for requested: VirtualPath?, item: (String) -> VirtualPath??,
               tokens: (VirtualPath) -> Set<String>, etag: (VirtualPath) -> String?) -> Bool {
        lists.contains { list in
            let target: VirtualPath?
            if let resource = list.resource {
                guard let found = item(resource) else { return false }
                target = found
            } else {
                target = requested
            }
            return list.conditions.allSatisfy { condition in
                let matched: Bool
                if let token = condition.token {
                    matched = target.map { tokens($0).contains(token) } ?? false
                } else {
                    // Only strong tags compare equal (RFC 9110, 8.8.3.2).
                    let current = target.flatMap(etag)
                    matched = current != nil && !condition.etag!.hasPrefix("W/") && current == condition.etag
                }
                return matched != condition.negated
            }
        }
    }
}
