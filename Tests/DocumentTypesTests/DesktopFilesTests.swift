import CofferCore
import CofferTestSupport
@testable import DocumentTypesGenerator
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// The notes manifest, with what a Linux desktop needs: an application, translations, magic.
let desktopManifest = notesManifest.replacingOccurrences(of: #""importedTypes": ["#, with: #"""
    "application": {"id": "com.example.Notes", "name": "Notes", "localizedNames": {"zh-Hans": "笔记"},
                    "comment": "Notes; kept \\ safe\nacross lines", "exec": "notes open-files",
                    "categories": ["Utility", "TextEditor"], "terminal": false},
    "importedTypes": [
    """#).replacingOccurrences(of: #""mimeTypes": ["application/x-notes-bundle"], "referenceURL": "https://example.com/notes"}"#, with: #"""
    "mimeTypes": ["application/x-notes-bundle", "application/vnd.example.notes"], "referenceURL": "https://example.com/notes",
     "localizedDescriptions": {"zh-Hans": "笔记包", "zh-Hant": "筆記包"},
     "magic": [{"offset": 0, "value": "NOTES1"}, {"type": "big16", "offset": "0:8", "value": "0xcafe"}]}
    """#)

func desktopLines(_ data: Data?) -> [String] {
    String(decoding: data ?? Data(), as: UTF8.self).split(separator: "\n").map(String.init)
}

struct DesktopEntryTests {
    @Test func theManifestHasWhatTheDesktopNeeds() throws {
        #expect(desktopManifest.contains("\"application\""))
        #expect(try manifest(desktopManifest).validate().errors.isEmpty)
    }

    @Test func theEntryNamesTheAppItsCommandAndEveryTypeItOpens() throws {
        let lines = desktopLines(try DesktopEntryGenerator.render(try manifest(desktopManifest)))
        #expect(lines == [
            "[Desktop Entry]", "Type=Application", "Version=1.4", "Name=Notes", "Name[zh_CN]=笔记",
            #"Comment=Notes; kept \\ safe\nacross lines"#, "Exec=notes open-files %F", "Terminal=false",
            "Categories=Utility;TextEditor;",
            // Both MIME types of the notes bundle (rank Owner). PDF, at rank Alternate, is not
            // claimed here: install-desktop offers it in mimeapps.list after the current default.
            "MimeType=application/x-notes-bundle;application/vnd.example.notes;",
        ])
        #expect(DesktopEntryGenerator.alternateMimeTypes(opened: try manifest(desktopManifest), registry: .standard)
                == ["application/pdf"])
        let inTerminal = try manifest(desktopManifest.replacingOccurrences(of: #""terminal": false"#, with: #""terminal": true"#))
        #expect(desktopLines(try DesktopEntryGenerator.render(inTerminal)).contains("Terminal=true"))
    }

    /// An abstract type stands for the concrete types under it; ranks decide where each goes.
    @Test func coffersOwnManifestClaimsWhatItViewsAndNeverFolders() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let builtIn = try DocumentTypesManifest(jsonData: try Data(contentsOf: root.appendingPathComponent("DocumentTypes.json")))
        let registry = builtIn.registry(extending: .standard)
        #expect(DesktopEntryGenerator.mimeTypes(opened: builtIn, registry: registry).isEmpty)
        let alternates = DesktopEntryGenerator.alternateMimeTypes(opened: builtIn, registry: registry)
        for type in ["image/jpeg", "image/png", "image/webp", "application/pdf", "text/plain", "text/markdown",
                     "application/zip", "application/x-tar"] {
            #expect(alternates.contains(type), "\(type)")
        }
        #expect(!alternates.contains("inode/directory"))
        #expect(!alternates.contains("application/octet-stream"))
        #expect(registry.mimeTypes(standingFor: "public.image").contains("image/heic"))
        #expect(registry.mimeTypes(standingFor: "public.jpeg") == ["image/jpeg"])
    }

    @Test func anInstalledEntryQuotesItsCommand() throws {
        let command = ["/opt/my apps/notes", "--container", "/home/me/100% notes", "open-files"]
        let lines = desktopLines(try DesktopEntryGenerator.render(try manifest(desktopManifest), command: command))
        #expect(lines.contains(#"Exec="/opt/my apps/notes" --container "/home/me/100%% notes" open-files %F"#))
        #expect(DesktopEntryGenerator.quotedArgument(#"a"b$c"#) == #""a\"b\$c""#)
        #expect(DesktopEntryGenerator.escaped(#"x\"y"#) == #"x\\"y"#)
        #expect(DesktopEntryGenerator.list(["a;b", "c"]) == #"a\;b;c;"#)
    }

    @Test func noApplicationNoDesktopFiles() throws {
        #expect(try DesktopFiles.make(for: try manifest()) == nil)
        #expect(try DesktopEntryGenerator.render(try manifest()) == nil)
    }

    @Test(arguments: [("zh-Hans", "zh_CN"), ("zh-Hant", "zh_TW"), ("pt-BR", "pt_BR"), ("sr-Latn", "sr@latin"), ("de", "de"),
                      ("zh-Hans-HK", "zh_HK")])
    func languageTagsBecomeTheLocalesDesktopsUse(_ tag: String, _ locale: String) {
        #expect(FreedesktopLocale.name(for: tag) == locale)
    }

    /// Each desktop rule, broken once; the message names what broke it.
    @Test(arguments: [
        (#""contentTypes": ["com.adobe.pdf"]"#, #""contentTypes": ["com.apple.package"]"#,
         "documentTypes[0] “PDF Document”: content type “com.apple.package” has no MIME type, nor does any type that conforms to it"),
        (#""mimeTypes": ["application/x-notes-bundle", "application/vnd.example.notes"]"#, #""mimeTypes": []"#,
         "exportedTypes[0] “com.example.notes.bundle”: has no MIME type"),
        (#""id": "com.example.Notes""#, #""id": "com example""#, "application: id “com example” may contain only"),
        (#""exec": "notes open-files""#, #""exec": "notes %F""#, "application: exec must not hold field codes"),
        (#""categories": ["Utility", "TextEditor"]"#, #""categories": []"#, "application: categories must name at least one"),
        (#""offset": "0:8""#, #""offset": "eight""#, "magic[1]: offset “eight” must be a byte offset or a range"),
        (#""type": "big16""#, #""type": "regex""#, "magic[1]: type “regex” must be one of"),
        (#""value": "0xcafe""#, #""value": "0x10000""#, "magic[1]: value “0x10000” is not a number that fits a big16"),
        (#""zh-Hant": "筆記包""#, #""Chinese": "筆記包""#, "localizedDescriptions key “Chinese” is not a language tag"),
    ])
    func eachDesktopRuleIsEnforcedAndNamed(_ original: String, _ broken: String, _ message: String) throws {
        #expect(desktopManifest.contains(original), "\(original)")
        let bad = try manifest(desktopManifest.replacingOccurrences(of: original, with: broken))
        #expect(bad.validate().errors.contains { $0.contains(message) }, "\(bad.validate().errors)")
        #expect(throws: GenerationFailure.self) { try DesktopFiles.make(for: bad) }
    }
}

extension XMLElement {
    /// An attribute's value (`attribute(forName:)` finds none in a namespaced element on Linux).
    func value(of attribute: String) -> String? { attributes?.first { $0.name == attribute }?.stringValue }
}

struct SharedMimeInfoTests {
    func package() throws -> XMLElement {
        let data = try #require(try SharedMimeInfoGenerator.render(try manifest(desktopManifest)))
        return try #require(try XMLDocument(data: data).rootElement())
    }

    @Test func eachExportedTypeIsAMimeTypeWithItsGlobsCommentsParentsAndMagic() throws {
        let root = try package()
        #expect(root.name == "mime-info")
        #expect(root.uri == SharedMimeInfoGenerator.namespace)
        let types = root.elements(forName: "mime-type")
        #expect(types.count == 1)  // the bundle; Markdown is imported, not the app's to describe
        let type = try #require(types.first)
        #expect(type.value(of: "type") == "application/x-notes-bundle")
        #expect(type.elements(forName: "alias").compactMap { $0.value(of: "type") } == ["application/vnd.example.notes"])
        let comments = type.elements(forName: "comment").map { ($0.value(of: "xml:lang") ?? "", $0.stringValue ?? "") }
        #expect(comments.map(\.0) == ["", "zh_CN", "zh_TW"])
        #expect(comments.map(\.1) == ["Notes Bundle", "笔记包", "筆記包"])
        #expect(type.elements(forName: "glob").compactMap { $0.value(of: "pattern") } == ["*.notesbundle"])
        // public.data has application/octet-stream, public.content none: the parent is the data type.
        #expect(type.elements(forName: "sub-class-of").compactMap { $0.value(of: "type") }
                == ["application/octet-stream"])
        let matches = try #require(type.elements(forName: "magic").first).elements(forName: "match")
        #expect(matches.map { [$0.value(of: "type"), $0.value(of: "offset"),
                               $0.value(of: "value")] }
                == [["string", "0", "NOTES1"], ["big16", "0:8", "0xcafe"]])
    }

    @Test func parentsAreTheNearestTypesWithAMimeType() throws {
        let registry = try manifest(desktopManifest).registry()
        let markdownLike = DocumentTypesManifest.DeclaredType(identifier: "com.example.log", description: "Log",
                                                              conformsTo: ["net.daringfireball.markdown", "public.text"],
                                                              mimeTypes: ["text/x-example-log"])
        // Markdown has its own MIME type; public.text has none, so its branch goes on to public.data.
        #expect(SharedMimeInfoGenerator.parentMIMETypes(of: markdownLike, registry: registry)
                == ["text/markdown", "application/octet-stream"])
    }

    @Test func outputIsDeterministic() throws {
        let first = try SharedMimeInfoGenerator.render(try manifest(desktopManifest))
        #expect(first == (try SharedMimeInfoGenerator.render(try manifest(desktopManifest))))
        #expect(try SharedMimeInfoGenerator.render(try manifest()) != nil)
    }
}

/// What `open-files` does with a file, by the manifest.
struct OpeningRulesTests {
    @Test func theClosestDocumentTypeClaimsAFile() throws {
        let coffer = DocumentTypesManifest(supportsOpeningDocumentsInPlace: true, documentTypes: [
            .init(name: "Any File", role: "Viewer", rank: "Alternate", contentTypes: ["public.data"]),
            .init(name: "Folder", role: "Viewer", rank: "Alternate", contentTypes: ["public.folder"]),
            .init(name: "Text", role: "Editor", rank: "Alternate", contentTypes: ["public.text"]),
        ])
        let registry = TypeRegistry.standard
        #expect(coffer.documentType(for: "public.folder", in: registry)?.name == "Folder")
        #expect(coffer.documentType(for: "public.plain-text", in: registry)?.name == "Text")  // closer than public.data
        #expect(coffer.documentType(for: "com.adobe.pdf", in: registry)?.name == "Any File")
        let notes = try manifest()
        #expect(notes.documentType(for: "public.plain-text", in: notes.registry()) == nil)
    }

    @Test(arguments: [
        ("Viewer", true, false, DocumentHandling.openInPlace), ("Viewer", false, false, .openInPlace),
        ("Viewer", true, true, .importCopy), ("Editor", true, false, .openInPlace), ("Editor", false, false, .importCopy),
        ("Editor", true, true, .importCopy),
    ])
    func rolesAndInPlaceDecide(_ role: String, _ inPlace: Bool, _ folder: Bool, _ expected: DocumentHandling) {
        let manifest = DocumentTypesManifest(supportsOpeningDocumentsInPlace: inPlace)
        let document = DocumentTypesManifest.DocumentType(name: "x", role: role, rank: "Alternate", contentTypes: ["public.data"])
        #expect(manifest.handling(of: document, folder: folder) == expected)
    }

    @Test(arguments: ["None", "Shell", "QLGenerator"])
    func otherRolesOpenNothing(_ role: String) {
        let document = DocumentTypesManifest.DocumentType(name: "x", role: role, rank: "None", contentTypes: ["public.data"])
        #expect(DocumentTypesManifest(supportsOpeningDocumentsInPlace: true).handling(of: document, folder: false) == nil)
    }
}
