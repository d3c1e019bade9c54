public import CofferCore
public import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A shared-mime-info package (`mime/packages/<id>.xml`) for the types an application
/// exports, written with Foundation's `XMLDocument` (libxml2 underneath).
///
/// Each exported type becomes a `<mime-type>`: its first MIME type names it and the others
/// are aliases; `description` and its translations are comments; each extension a glob;
/// each `magic` rule a match; and each parent in its conformance with a MIME type of its
/// own (the nearest one up each branch: `public.plain-text` → `text/plain`) a
/// `<sub-class-of>`, so desktops treat the type as what it conforms to.
public enum SharedMimeInfoGenerator {
    public static let namespace = "http://www.freedesktop.org/standards/shared-mime-info"

    /// The package, or `nil` when the manifest exports no type.
    /// - Throws: ``GenerationFailure/invalidManifest(_:)`` when the manifest breaks a rule.
    public static func render(_ manifest: DocumentTypesManifest, registry: TypeRegistry = .standard)
        throws(GenerationFailure) -> Data?
    {
        let validation = manifest.validate(against: registry)
        guard validation.isValid else { throw .invalidManifest(validation.errors) }
        guard !manifest.exportedTypes.isEmpty else { return nil }
        let extended = manifest.registry(extending: registry)
        let root = XMLElement(name: "mime-info")
        root.addNamespace(node(.namespace, "", namespace))
        for declared in manifest.exportedTypes {
            root.addChild(element(for: declared, registry: extended))
        }
        let document = XMLDocument(rootElement: root)
        document.version = "1.0"
        document.characterEncoding = "UTF-8"
        return document.xmlData(options: [.nodePrettyPrint, .nodeCompactEmptyElement])
    }

    private static func element(for declared: DocumentTypesManifest.DeclaredType, registry: TypeRegistry) -> XMLElement {
        let type = XMLElement(name: "mime-type")
        type.addAttribute(attribute("type", declared.mimeTypes[0]))
        type.addChild(XMLElement(name: "comment", stringValue: declared.description))
        for (tag, text) in (declared.localizedDescriptions ?? [:]).sorted(by: { $0.key < $1.key }) {
            let comment = XMLElement(name: "comment", stringValue: text)
            comment.addAttribute(attribute("xml:lang", FreedesktopLocale.name(for: tag)))
            type.addChild(comment)
        }
        for alias in declared.mimeTypes.dropFirst() {
            type.addChild(withAttribute(XMLElement(name: "alias"), "type", alias))
        }
        for parent in parentMIMETypes(of: declared, registry: registry) {
            type.addChild(withAttribute(XMLElement(name: "sub-class-of"), "type", parent))
        }
        for ext in declared.extensions {
            type.addChild(withAttribute(XMLElement(name: "glob"), "pattern", "*." + ext))
        }
        if let rules = declared.magic, !rules.isEmpty {
            let magic = withAttribute(XMLElement(name: "magic"), "priority", "50")
            for rule in rules {
                let match = XMLElement(name: "match")
                match.addAttribute(attribute("type", rule.type))
                match.addAttribute(attribute("offset", rule.offset))
                match.addAttribute(attribute("value", rule.value))
                magic.addChild(match)
            }
            type.addChild(magic)
        }
        return type
    }

    /// The MIME types of the nearest ancestors that have one, up each branch of the
    /// conformance, in the order the manifest names the parents.
    static func parentMIMETypes(of declared: DocumentTypesManifest.DeclaredType, registry: TypeRegistry) -> [String] {
        var found: [String] = []
        var seen: Set<String> = [declared.identifier]
        var frontier = declared.conformsTo
        while !frontier.isEmpty {
            var next: [String] = []
            for identifier in frontier where seen.insert(identifier).inserted {
                guard let type = registry.type(withIdentifier: identifier) else { continue }
                if let mime = type.mimeTypes.first {
                    if !found.contains(mime) && !declared.mimeTypes.contains(mime) { found.append(mime) }
                } else {
                    next += type.conformsTo
                }
            }
            frontier = next
        }
        return found
    }

    private static func attribute(_ name: String, _ value: String) -> XMLNode { node(.attribute, name, value) }

    private static func withAttribute(_ element: XMLElement, _ name: String, _ value: String) -> XMLElement {
        element.addAttribute(attribute(name, value))
        return element
    }

    private static func node(_ kind: XMLNode.Kind, _ name: String, _ value: String) -> XMLNode {
        let node = XMLNode(kind: kind)
        node.name = name
        node.stringValue = value
        return node
    }
}
