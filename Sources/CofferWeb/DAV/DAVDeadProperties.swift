import CofferCore
import Foundation

/// Dead properties (RFC 4918, 4.2: whatever a client sets with `PROPPATCH`) kept as the item's
/// extended attributes, so they travel with it as its tags do — through a move, a copy, a
/// version and the trash — and Coffer's tags, which are a property in Coffer's namespace.
///
/// A property `{NS}name` is the attribute `user.dav.NS:name`, both parts percent-encoded (a `/` kept); its
/// value is the property's contents as XML (each element declaring its namespace).
enum DAVDeadProperties {
    static let attributePrefix = "user.dav."
    /// Coffer's tags (`user.xdg.tags`), as `<C:tag>` elements.
    static let tags = QualifiedName(DAVXML.cofferNamespace, "tags")

    /// The attribute that keeps `name`; `nil` when the name is too long for one (255 bytes).
    static func attribute(for name: QualifiedName) -> String? {
        let attribute = attributePrefix + TrashInfo.percentEncoded(name.namespace) + ":" + TrashInfo.percentEncoded(name.name)
        return attribute.utf8.count <= 255 ? attribute : nil
    }

    /// The property an attribute keeps, if it keeps one.
    static func name(ofAttribute attribute: String) -> QualifiedName? {
        guard attribute.hasPrefix(attributePrefix) else { return nil }
        let rest = attribute.dropFirst(attributePrefix.count)
        guard let colon = rest.firstIndex(of: ":"),
              let namespace = TrashInfo.percentDecoded(String(rest[..<colon])),
              let name = TrashInfo.percentDecoded(String(rest[rest.index(after: colon)...])), !name.isEmpty else { return nil }
        return QualifiedName(namespace, name)
    }

    /// What an attribute keeps of a property set to `element`.
    static func value(of element: DAVElement) -> [UInt8] {
        Array((DAVXML.escaped(element.text) + element.children.map(\.serialized).joined()).utf8)
    }

    /// The dead properties and tags among an item's attributes, as an answer writes them.
    static func properties(in attributes: UserAttributes) -> [(name: QualifiedName, value: String)] {
        var found: [(name: QualifiedName, value: String)] = []
        for (attribute, value) in attributes.sorted(by: { $0.key < $1.key }) {
            if attribute == FileTags.attribute {
                let tags = FileTags.parse(value)
                if !tags.isEmpty { found.append((Self.tags, tags.map { "<C:tag>\(DAVXML.escaped($0))</C:tag>" }.joined())) }
            } else if let name = name(ofAttribute: attribute) {
                found.append((name, String(decoding: value, as: UTF8.self)))
            }
        }
        return found
    }

    /// The tags a `PROPPATCH` sets: the texts of `<C:tag>` elements, or a comma-separated text.
    static func tags(in element: DAVElement) -> [String] {
        let named = element.children.filter { $0.name == QualifiedName(DAVXML.cofferNamespace, "tag") }.map(\.text)
        let texts = named.isEmpty ? element.text.split(separator: ",").map(String.init) : named
        return texts.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }

    /// Whether a `PROPPATCH` may not change `name`: every property of `DAV:` is Coffer's to
    /// say (RFC 4918, 16: `cannot-modify-protected-property`).
    static func isProtected(_ name: QualifiedName) -> Bool { name.namespace == "DAV:" }
}
