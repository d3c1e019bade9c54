/// A location inside one mount, as users and clients write it: `mount:/a/b`.
///
/// A virtual path is always normalised (no `.`, `..` or empty components) and never
/// points outside its mount: the parser refuses a `..` that would climb above the
/// mount's root before any system call sees the path. Components are compared
/// byte for byte, so NFC and NFD spellings of a name are different paths.
public struct VirtualPath: Sendable, CustomStringConvertible {
    /// The mount used when a path has no `mount:` prefix.
    public static let defaultMount = "files"

    /// The mount name, such as `files` or `trash`.
    public let mount: String
    /// The validated names from the mount's root down to the item.
    public let components: [String]

    /// The root of `mount`.
    public static func root(of mount: String = defaultMount) -> VirtualPath {
        VirtualPath(uncheckedMount: mount, components: [])
    }

    /// A path from already separated names, each of which is validated.
    public init(mount: String = defaultMount, components: [String]) throws(CofferError) {
        for name in components { try FileName.validate(name) }
        self.init(uncheckedMount: mount, components: components)
    }

    /// A path from names the caller guarantees are valid, such as those of a path already
    /// checked once and stored (see ``appending(trustedName:)``).
    public init(mount: String, trustedComponents components: [String]) {
        self.init(uncheckedMount: mount, components: components)
    }

    init(uncheckedMount mount: String, components: [String]) {
        self.mount = mount
        self.components = components
    }

    /// Parses `text` the way a shell user would mean it.
    ///
    /// - `mount:/a/b` or `mount:a/b` names a path in `mount` (`trash:` alone is its root);
    ///   a prefix counts as a mount only if it is a plain identifier followed by `:` and
    ///   then `/` or the end, so `notes:v2.txt` is a file name.
    /// - `/a/b` is in the default mount (`files:`).
    /// - `a/b` is relative to `base` (the current folder), or to `files:/` without one.
    ///
    /// - Throws: ``CofferError/Kind/outsideSandbox`` when `..` would climb above the
    ///   mount's root, ``CofferError/Kind/invalidName`` for a NUL byte or an over-long name.
    public init(parsing text: String, relativeTo base: VirtualPath? = nil) throws(CofferError) {
        var mount = base?.mount ?? Self.defaultMount
        var rest = Substring(text)
        var components = base?.components ?? []
        if let (prefix, remainder) = Self.splitMountPrefix(text) {
            mount = prefix
            rest = remainder
            components = []
        } else if rest.hasPrefix("/") {
            mount = Self.defaultMount
            components = []
        }
        if text.utf8.contains(0) {
            throw CofferError(.invalidName, path: nil, detail: FileName.Problem.containsNUL.rawValue)
        }
        // Split on the bytes: a path is parsed for every request a program sends.
        for part in rest.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            if part.count == 1 && part.first == UInt8(ascii: ".") { continue }
            if part.count == 2 && part.allSatisfy({ $0 == UInt8(ascii: ".") }) {
                if components.isEmpty {
                    throw CofferError(.outsideSandbox, path: VirtualPath.root(of: mount), detail: text)
                }
                components.removeLast()
            } else {
                let name = String(Substring(part))
                if let problem = FileName.problem(with: name), problem == .tooLong || problem == .reserved {
                    throw CofferError(.invalidName, path: VirtualPath(uncheckedMount: mount, components: components),
                                      detail: problem.rawValue)
                }
                components.append(name)
            }
        }
        self.init(uncheckedMount: mount, components: components)
    }

    /// Whether `name` can be typed as a mount prefix (`mem:`): an ASCII letter, then
    /// letters, digits, `-` or `_`.
    public static func isValidMountName(_ name: String) -> Bool {
        splitMountPrefix(name + ":") != nil
    }

    /// `("trash", "/a")` for `trash:/a`; `nil` when the text has no mount prefix.
    static func splitMountPrefix(_ text: String) -> (String, Substring)? {
        let bytes = text.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }
        let prefix = bytes[..<colon]
        guard let first = prefix.first, isLetter(first), prefix.allSatisfy({ byte in
            isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }) else { return nil }
        let after = text[bytes.index(after: colon)...]
        guard after.isEmpty || after.utf8.first == UInt8(ascii: "/") else { return nil }
        return (String(Substring(prefix)), after)
    }

    /// The last component, or `""` for a mount's root.
    public var name: String { components.last ?? "" }
    /// Whether this is the root of its mount.
    public var isRoot: Bool { components.isEmpty }
    /// The enclosing folder, or `nil` for a root.
    public var parent: VirtualPath? {
        isRoot ? nil : VirtualPath(uncheckedMount: mount, components: Array(components.dropLast()))
    }

    /// Whether a symbolic link here pointing at `target` names an item of its own mount: a
    /// relative target that climbs (`..`) only at its start, and never above the mount's root,
    /// then only goes down (`../Shared/plan.txt`). A `..` after a name is refused: the name may be
    /// a link itself, and the kernel climbs from where that link leads (`up/../..` with `up` a
    /// link to `..` climbs three folders). Every link kept to this rule lands inside the mount,
    /// whatever links it passes through. Coffer makes no other link, and shows no other to a
    /// program that would follow it (`coffer mount`).
    public func linkStaysInside(_ target: String) -> Bool {
        guard !target.hasPrefix("/"), !target.isEmpty, !target.utf8.contains(0) else { return false }
        var climbs = 0
        var descended = false
        for part in target.split(separator: "/", omittingEmptySubsequences: true) where part != "." {
            if part == ".." {
                if descended { return false }
                climbs += 1
            } else {
                descended = true
            }
        }
        return climbs <= components.count - 1
    }

    /// This path with one more component.
    public func appending(_ name: String) throws(CofferError) -> VirtualPath {
        try FileName.validate(name, path: self)
        return VirtualPath(uncheckedMount: mount, components: components + [name])
    }

    /// This path with one more component that the caller guarantees is a valid name,
    /// such as one just read from a directory (it cannot hold `/` or NUL).
    public func appending(trustedName name: String) -> VirtualPath {
        VirtualPath(uncheckedMount: mount, components: components + [name])
    }

    /// A sibling with another last component (for renames).
    public func replacingName(with name: String) throws(CofferError) -> VirtualPath {
        guard let parent else { throw CofferError(.invalidOperation, path: self) }
        return try parent.appending(name)
    }

    /// `a/b` — the path relative to the mount's root, with no leading slash.
    public var relativeString: String { components.joined(separator: "/") }

    /// `/a/b` within the mount.
    public var absoluteString: String { "/" + relativeString }

    /// `files:/a/b`.
    public var description: String { "\(mount):\(absoluteString)" }

    /// Whether `self` is `other` or contains it.
    public func contains(_ other: VirtualPath) -> Bool {
        guard FileName.same(mount, other.mount), other.components.count >= components.count else { return false }
        return zip(components, other.components).allSatisfy { FileName.same($0, $1) }
    }
}

extension VirtualPath: Hashable {
    public static func == (lhs: VirtualPath, rhs: VirtualPath) -> Bool {
        lhs.components.count == rhs.components.count && lhs.contains(rhs)
    }

    public func hash(into hasher: inout Hasher) {
        for byte in mount.utf8 { hasher.combine(byte) }
        for component in components {
            hasher.combine(0xFF as UInt8)
            for byte in component.utf8 { hasher.combine(byte) }
        }
    }
}

extension VirtualPath: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(parsing: text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
