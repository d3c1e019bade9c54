import CCofferXML

/// A name in an XML namespace: `DAV:` `getetag`, Coffer's `tags`.
struct QualifiedName: Hashable, Sendable, CustomStringConvertible {
    var namespace: String
    var name: String

    init(_ namespace: String, _ name: String) {
        self.namespace = namespace
        self.name = name
    }

    /// A name of RFC 4918's namespace.
    static func dav(_ name: String) -> QualifiedName { QualifiedName("DAV:", name) }

    var description: String { "{\(namespace)}\(name)" }
}

/// An element of a WebDAV request body: its name, its elements and its text.
struct DAVElement: Sendable, Equatable {
    var name: QualifiedName
    var children: [DAVElement] = []
    /// The text directly inside it (whitespace included).
    var text = ""

    /// Its first element named `name`.
    func child(_ name: QualifiedName) -> DAVElement? { children.first { $0.name == name } }

    /// The element written back as XML, for a dead property's value: each element declares
    /// its namespace, text is escaped.
    var serialized: String {
        let prefix = DAVXML.prefix(of: name.namespace)
        let tag = name.namespace.isEmpty ? name.name : prefix + ":" + name.name
        var out = name.namespace.isEmpty ? "<\(tag) xmlns=\"\"" : "<\(tag) xmlns:\(prefix)=\"\(DAVXML.escaped(name.namespace))\""
        if children.isEmpty && text.isEmpty { return out + "/>" }
        out += ">" + DAVXML.escaped(text)
        for child in children { out += child.serialized }
        return out + "</\(tag)>"
    }
}

/// Reading WebDAV's request bodies (through libxml2, as ``coffer_xml_events`` reads them: no
/// network, no external entities, no entity expansion, at most 64 levels deep) and writing
/// its answers.
enum DAVXML {
    /// The most elements a request body may hold: a `PROPFIND` or `PROPPATCH` names a few
    /// dozen properties; a body of more is refused rather than held.
    static let elementLimit = 10_000

    /// Why a body was refused.
    enum Refusal: Error, Equatable {
        /// Not well-formed XML, nested too deep, or too big.
        case malformed
        /// Well-formed, but not what the method takes.
        case unexpected(String)
        /// libxml2 could not be loaded.
        case unavailable
    }

    /// The document element of `body`.
    static func parse(_ body: [UInt8]) throws(Refusal) -> DAVElement {
        final class Builder {
            var stack: [DAVElement] = []
            var root: DAVElement?
            var count = 0
        }
        let builder = Builder()
        let result = body.withUnsafeBytes { raw in
            coffer_xml_events(raw.baseAddress?.assumingMemoryBound(to: CChar.self), raw.count, { context, kind, uri, name, text in
                let builder = Unmanaged<Builder>.fromOpaque(context!).takeUnretainedValue()
                switch kind {
                case COFFER_XML_START:
                    builder.count += 1
                    guard builder.count <= DAVXML.elementLimit else { return 0 }
                    builder.stack.append(DAVElement(name: QualifiedName(String(cString: uri!), String(cString: name!))))
                case COFFER_XML_END:
                    guard let done = builder.stack.popLast() else { return 0 }
                    if builder.stack.isEmpty { builder.root = done } else { builder.stack[builder.stack.count - 1].children.append(done) }
                default:
                    guard !builder.stack.isEmpty else { return 1 }
                    builder.stack[builder.stack.count - 1].text += String(cString: text!)
                }
                return 1
            }, Unmanaged.passUnretained(builder).toOpaque())
        }
        return try withExtendedLifetime(builder) { () throws(Refusal) -> DAVElement in
            if result < 0 { throw .unavailable }
            guard result == 1, let root = builder.root else { throw .malformed }
            return root
        }
    }

    /// `text` escaped for XML content or an attribute in double quotes.
    static func escaped(_ text: String) -> String {
        // Most names need nothing: one pass over the bytes says so, and the text is kept as it is.
        let needsWork = text.utf8.contains { byte in
            byte < 0x20 || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">")
                || byte == UInt8(ascii: "\"") || byte == 0xEF
        }
        guard needsWork else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\t", "\n", "\r": out.unicodeScalars.append(character)
            // What XML 1.0 cannot hold at all (a name may have it): the replacement character.
            case "\u{0}"..."\u{1F}", "\u{FFFE}", "\u{FFFF}": out += "\u{FFFD}"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// The prefix an answer writes a namespace with: `D` for `DAV:`, `C` for Coffer's, else
    /// `x` (declared on the element).
    static func prefix(of namespace: String) -> String {
        switch namespace {
        case "DAV:": "D"
        case cofferNamespace: "C"
        default: "x"
        }
    }

    /// Coffer's own properties (`tags`).
    static let cofferNamespace = "urn:x-coffer:dav"
}
