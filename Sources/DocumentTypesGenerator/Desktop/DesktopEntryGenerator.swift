public import CofferCore
public import Foundation

/// The application's freedesktop.org desktop entry (`applications/<id>.desktop`, Desktop Entry
/// Specification 1.4, which desktop-file-validate knows): how file managers offer it for the
/// files it opens.
///
/// `MimeType=` lists the MIME types of the content types the application opens (roles
/// `Editor` and `Viewer`) at rank `Owner` or `Default`: those it may be the default
/// application for. A type at rank `Alternate` is one it opens but should never become the
/// default for just by being installed, so it is left out of `MimeType=` (which makes an
/// application the default wherever no other claims the type) and added by `install-desktop`
/// to the user's `mimeapps.list` as an added association after the applications already
/// there (``alternateMimeTypes(opened:registry:)``). An abstract type without a MIME type of
/// its own (`public.image`) stands for the registry's concrete types that conform to it.
/// `Exec=` is the manifest's command line, or one given, followed by `%F`, so a file manager
/// passes every file chosen.
public enum DesktopEntryGenerator {
    /// The entry, or `nil` when the manifest describes no application.
    /// - Parameter command: the command line's words, for an installed entry that must name
    ///   the very executable (`/opt/coffer/bin/coffer`, `--container`…); the manifest's `exec`
    ///   when `nil`.
    /// - Throws: ``GenerationFailure/invalidManifest(_:)`` when the manifest breaks a rule.
    public static func render(_ manifest: DocumentTypesManifest, registry: TypeRegistry = .standard,
                              command: [String]? = nil) throws(GenerationFailure) -> Data? {
        let validation = manifest.validate(against: registry)
        guard validation.isValid else { throw .invalidManifest(validation.errors) }
        guard let application = manifest.application else { return nil }
        let exec = command.map { $0.map(quotedArgument).joined(separator: " ") } ?? application.exec
        var lines = ["[Desktop Entry]", "Type=Application", "Version=1.4", "Name=" + escaped(application.name)]
        lines += localized("Name", application.localizedNames)
        if let comment = application.comment { lines.append("Comment=" + escaped(comment)) }
        lines += localized("Comment", application.localizedComments)
        lines.append("Exec=" + escaped(exec + " %F"))
        if let icon = application.icon { lines.append("Icon=" + escaped(icon)) }
        lines.append("Terminal=" + (application.terminal == true ? "true" : "false"))
        lines.append("Categories=" + list(application.categories))
        let types = mimeTypes(opened: manifest, registry: manifest.registry(extending: registry))
        if !types.isEmpty { lines.append("MimeType=" + list(types)) }
        return Data((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// The MIME types the application may be the default for (document types of rank
    /// `Owner` or `Default`, or of no rank), in the manifest's order, each once.
    public static func mimeTypes(opened manifest: DocumentTypesManifest, registry: TypeRegistry) -> [String] {
        mimeTypes(of: manifest, registry: registry) { $0 == nil || $0 == "Owner" || $0 == "Default" }
    }

    /// The MIME types the application opens but is only an alternative for (rank `Alternate`),
    /// less those it may be the default for.
    public static func alternateMimeTypes(opened manifest: DocumentTypesManifest, registry: TypeRegistry) -> [String] {
        let defaults = Set(mimeTypes(opened: manifest, registry: registry))
        return mimeTypes(of: manifest, registry: registry) { $0 == "Alternate" }.filter { !defaults.contains($0) }
    }

    private static func mimeTypes(of manifest: DocumentTypesManifest, registry: TypeRegistry,
                                  ranked: (String?) -> Bool) -> [String] {
        var types: [String] = []
        for document in manifest.documentTypes where ["Editor", "Viewer"].contains(document.role) && ranked(document.rank) {
            for content in document.contentTypes {
                for mime in registry.mimeTypes(standingFor: content) where !types.contains(mime) {
                    types.append(mime)
                }
            }
        }
        return types
    }

    private static func localized(_ key: String, _ values: [String: String]?) -> [String] {
        (values ?? [:]).sorted { $0.key < $1.key }.map { "\(key)[\(FreedesktopLocale.name(for: $0.key))]=" + escaped($0.value) }
    }

    /// A string value: backslash, newline, tab and carriage return escaped, as the
    /// specification asks.
    static func escaped(_ value: String) -> String {
        var text = ""
        for character in value {
            switch character {
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\t": text += "\\t"
            case "\r": text += "\\r"
            default: text.append(character)
            }
        }
        return text
    }

    /// A list value: each item escaped, `;` inside an item escaped, and a `;` after each.
    static func list(_ items: [String]) -> String {
        items.map { escaped($0).replacingOccurrences(of: ";", with: "\\;") + ";" }.joined()
    }

    /// One argument of `Exec=`: quoted when it holds a reserved character, with `"`, `` ` ``,
    /// `$` and `\` escaped inside the quotes, and `%` doubled (the value is escaped as a
    /// string afterwards).
    static func quotedArgument(_ argument: String) -> String {
        let doubled = argument.replacingOccurrences(of: "%", with: "%%")
        let reserved = " \t\n\"'\\><~|&;$*?#()`"
        guard doubled.contains(where: { reserved.contains($0) }) || doubled.isEmpty else { return doubled }
        var quoted = "\""
        for character in doubled {
            if "\"`$\\".contains(character) { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }
}
