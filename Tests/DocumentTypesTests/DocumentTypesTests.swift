import CofferCore
import CofferTestSupport
import DocumentTypesGenerator
import Foundation
import Testing

/// The manifest from the issue: a notes app.
let notesManifest = """
    {
      "supportsOpeningDocumentsInPlace": true,
      "fileSharingEnabled": true,
      "supportsDocumentBrowser": false,
      "documentTypes": [
        {"name": "PDF Document", "role": "Viewer", "rank": "Alternate", "contentTypes": ["com.adobe.pdf"]},
        {"name": "Notes", "role": "Editor", "rank": "Owner", "contentTypes": ["com.example.notes.bundle"],
         "isPackage": true, "iconFiles": ["NotesIcon"]}
      ],
      "exportedTypes": [
        {"identifier": "com.example.notes.bundle", "description": "Notes Bundle",
         "conformsTo": ["public.data", "public.content"], "extensions": ["notesbundle"],
         "mimeTypes": ["application/x-notes-bundle"], "referenceURL": "https://example.com/notes"}
      ],
      "importedTypes": [
        {"identifier": "net.daringfireball.markdown", "description": "Markdown Text",
         "conformsTo": ["public.plain-text"], "extensions": ["md", "markdown"], "mimeTypes": ["text/markdown"]}
      ]
    }
    """

func manifest(_ json: String = notesManifest) throws -> DocumentTypesManifest {
    try DocumentTypesManifest(jsonData: Data(json.utf8))
}

func plist(_ data: Data) throws -> [String: Any] {
    try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
}

struct ManifestValidationTests {
    @Test func theNotesManifestIsValid() throws {
        let validation = try manifest().validate()
        #expect(validation.errors.isEmpty)
        #expect(validation.warnings.isEmpty)  // Owner on a type the app exports
    }

    /// Each rule, broken once: a replacement in the notes manifest, and words the message must contain.
    @Test(arguments: [
        (#""role": "Viewer""#, #""role": "Reader""#, "documentTypes[0] “PDF Document”: role “Reader” must be one of Editor, Viewer, Shell, QLGenerator, None"),
        (#""rank": "Alternate""#, #""rank": "Best""#, "documentTypes[0] “PDF Document”: rank “Best” must be one of Owner, Default, Alternate, None"),
        (#""identifier": "com.example.notes.bundle""#, #""identifier": "com.example.notes_bundle""#, "exportedTypes[0] “com.example.notes_bundle”: identifier may contain only letters, digits"),
        (#""extensions": ["notesbundle"]"#, #""extensions": [".notesbundle"]"#, "extension “.notesbundle” must be written without the leading dot"),
        (#""conformsTo": ["public.data", "public.content"]"#, #""conformsTo": ["public.content"]"#, "must conform, directly or through its parents, to public.data or com.apple.package"),
        (#""identifier": "net.daringfireball.markdown""#, #""identifier": "public.plain-text""#, "importedTypes[0] “public.plain-text”: is a system type"),
        (#""identifier": "net.daringfireball.markdown""#, #""identifier": "com.example.notes.bundle""#, "declared in both exportedTypes and importedTypes"),
        (#""contentTypes": ["com.adobe.pdf"]"#, #""contentTypes": ["com.example.unknown"]"#, "content type “com.example.unknown” is not a system type nor declared in this manifest"),
        (#""supportsOpeningDocumentsInPlace": true,"#, "", "ITMS-90737"),
        (#""contentTypes": ["com.adobe.pdf"]"#, #""contentTypes": ["com.adobe pdf"]"#, "content type “com.adobe pdf” may contain only letters"),
    ])
    func eachRuleIsEnforcedAndNamed(_ original: String, _ broken: String, _ message: String) throws {
        #expect(notesManifest.contains(original))
        let validation = try manifest(notesManifest.replacingOccurrences(of: original, with: broken)).validate()
        #expect(validation.errors.contains { $0.contains(message) }, "\(validation.errors)")
    }

    @Test func conformanceThroughParentsCounts() throws {
        // public.plain-text → public.text → public.data: fine without naming public.data.
        #expect(try manifest().validate().errors.isEmpty)
        let package = notesManifest.replacingOccurrences(of: #""conformsTo": ["public.data", "public.content"]"#,
                                                          with: #""conformsTo": ["com.apple.package"]"#)
        #expect(try manifest(package).validate().errors.isEmpty)
    }

    @Test func documentBrowserAloneSatisfiesITMS90737() throws {
        let json = notesManifest.replacingOccurrences(of: #""supportsOpeningDocumentsInPlace": true,"#, with: "")
            .replacingOccurrences(of: #""supportsDocumentBrowser": false"#, with: #""supportsDocumentBrowser": true"#)
        #expect(try manifest(json).validate().errors.isEmpty)
    }

    @Test func ownerOfAnotherAppsTypeIsOnlyAWarning() throws {
        let json = notesManifest.replacingOccurrences(of: #""rank": "Alternate""#, with: #""rank": "Owner""#)
        let validation = try manifest(json).validate()
        #expect(validation.errors.isEmpty)
        #expect(validation.warnings == ["documentTypes[0] “PDF Document”: rank Owner on “com.adobe.pdf”, which this app "
                                        + "does not export; Owner is for the app that defines the type"])
    }

    @Test func malformedJSONNamesThePlace() {
        #expect(throws: CofferError.self) { try manifest(#"{"documentTypes": [{"name": "x"}]}"#) }
        do throws(CofferError) {
            _ = try DocumentTypesManifest(jsonData: Data(#"{"documentTypes": [{"name": "x", "role": "Viewer", "rank": "None"}]}"#.utf8))
            Issue.record("a document type without contentTypes was accepted")
        } catch {
            #expect(error.detail == "documentTypes[0].contentTypes: missing")
        }
    }

    @Test func thePackagesOwnManifestIsValid() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        for path in ["DocumentTypes.json", "Examples/document-types/DocumentTypes.json"] {
            let data = try Data(contentsOf: root.appendingPathComponent(path))
            #expect(try DocumentTypesManifest(jsonData: data).validate().errors.isEmpty, "\(path)")
        }
    }

    @Test func theRuntimeRegistryKnowsTheDeclaredTypes() throws {
        let registry = try manifest().registry()
        #expect(registry.type(forExtension: "notesbundle")?.id == "com.example.notes.bundle")
        #expect(registry.type(forMIMEType: "application/x-notes-bundle")?.id == "com.example.notes.bundle")
        #expect(registry.conforms("com.example.notes.bundle", to: "public.data"))
        #expect(registry.typeIdentifier(forFileNamed: "trip.notesbundle") == "com.example.notes.bundle")
        // A known type keeps its Chinese name; the description becomes its English one.
        #expect(registry.type(withIdentifier: "net.daringfireball.markdown")?.name(in: .english) == "Markdown Text")
        #expect(registry.type(withIdentifier: "net.daringfireball.markdown")?.name(in: .simplifiedChinese) == "Markdown 文稿")
        #expect(TypeRegistry.standard.type(forExtension: "notesbundle") == nil)
    }
}

struct InfoPlistGeneratorTests {
    @Test func writesEveryKeyOfTheManifest() throws {
        let generated = try plist(try InfoPlistGenerator.render(try manifest(), existing: nil))
        #expect(Set(generated.keys) == Set(InfoPlistGenerator.ownedKeys))
        #expect(generated["LSSupportsOpeningDocumentsInPlace"] as? Bool == true)
        #expect(generated["UISupportsDocumentBrowser"] as? Bool == false)
        let documents = try #require(generated["CFBundleDocumentTypes"] as? [[String: Any]])
        #expect(documents.count == 2)
        #expect(documents[0]["CFBundleTypeName"] as? String == "PDF Document")
        #expect(documents[0]["LSItemContentTypes"] as? [String] == ["com.adobe.pdf"])
        #expect(documents[0]["LSTypeIsPackage"] == nil)
        #expect(documents[1]["LSTypeIsPackage"] as? Bool == true)
        #expect(documents[1]["CFBundleTypeIconFiles"] as? [String] == ["NotesIcon"])
        let exported = try #require((generated["UTExportedTypeDeclarations"] as? [[String: Any]])?.first)
        #expect(exported["UTTypeIdentifier"] as? String == "com.example.notes.bundle")
        #expect(exported["UTTypeConformsTo"] as? [String] == ["public.data", "public.content"])
        #expect(exported["UTTypeReferenceURL"] as? String == "https://example.com/notes")
        let tags = try #require(exported["UTTypeTagSpecification"] as? [String: Any])
        #expect(tags["public.filename-extension"] as? [String] == ["notesbundle"])
        #expect(tags["public.mime-type"] as? [String] == ["application/x-notes-bundle"])
    }

    @Test func mergingKeepsOtherKeysAndReplacesOwnedOnes() throws {
        let existing = try PropertyListSerialization.data(fromPropertyList: [
            "CFBundleName": "Notes", "CFBundleVersion": "42", "UIFileSharingEnabled": false,
            "UTImportedTypeDeclarations": [["UTTypeIdentifier": "stale.type"]],
        ] as [String: Any], format: .xml, options: 0)
        var noImports = try manifest()
        noImports.importedTypes = []
        let merged = try plist(try InfoPlistGenerator.render(noImports, existing: existing))
        #expect(merged["CFBundleName"] as? String == "Notes")
        #expect(merged["CFBundleVersion"] as? String == "42")
        #expect(merged["UIFileSharingEnabled"] as? Bool == true)
        #expect(merged["UTImportedTypeDeclarations"] == nil)  // owned, and the manifest has none
    }

    @Test func outputIsDeterministicAndAFixedPoint() throws {
        let first = try InfoPlistGenerator.render(try manifest(), existing: nil)
        let second = try InfoPlistGenerator.render(try manifest(), existing: nil)
        #expect(first == second)
        #expect(try InfoPlistGenerator.render(try manifest(), existing: first) == first)
        #expect(try InfoPlistGenerator.differences(try manifest(), existing: first).isEmpty)
        let text = String(decoding: first, as: UTF8.self)
        #expect(text.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"))
    }

    @Test func checkNamesWhatIsStale() throws {
        let current = try InfoPlistGenerator.render(try manifest(), existing: nil)
        var changed = try manifest()
        changed.documentTypes[0].rank = "Default"
        #expect(try InfoPlistGenerator.differences(changed, existing: current) == ["CFBundleDocumentTypes is out of date"])
        #expect(try InfoPlistGenerator.differences(changed, existing: nil) == ["the output file does not exist"])
        let binary = try PropertyListSerialization.data(fromPropertyList: try plist(current), format: .binary, options: 0)
        #expect(try InfoPlistGenerator.differences(try manifest(), existing: binary)
                == ["the file is not in the generator's XML format (regenerate it)"])
    }

    @Test func invalidManifestsAndUnreadableFilesStopEverything() throws {
        var bad = try manifest()
        bad.documentTypes[0].role = "Reader"
        #expect(throws: InfoPlistGenerator.Failure.self) { try InfoPlistGenerator.render(bad, existing: nil) }
        #expect(throws: InfoPlistGenerator.Failure.self) {
            try InfoPlistGenerator.render(try manifest(), existing: Data("not a plist".utf8))
        }
    }
}

/// The executable the plugin runs, on real files.
@Suite(.serialized)
struct GeneratorToolTests {
    let directory = TemporaryDirectory("doctypes")

    func tool(_ arguments: [String]) throws -> (status: Int32, errors: String) {
        let tool = CofferBinary.url.deletingLastPathComponent().appendingPathComponent("coffer-document-types")
        let result = try TestProcess.run([tool.path] + arguments, timeout: 60, output: .discarded)
        return (result.status, result.errorText)
    }

    @Test func writesChecksAndRefusesWithoutTouchingTheFile() throws {
        directory.make(["DocumentTypes.json": notesManifest,
                        "bad.json": notesManifest.replacingOccurrences(of: #""rank": "Alternate""#, with: #""rank": "Top""#),
                        "Info.plist": "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>CFBundleName</key><string>Notes</string></dict></plist>"])
        let manifestPath = directory.url("DocumentTypes.json"), output = directory.url("Info.plist")
        #expect(try tool(["--manifest", manifestPath, "--output", output, "--check"]).status == 1)
        #expect(try tool(["--manifest", manifestPath, "--output", output]).status == 0)
        let written = try #require(directory.contents("Info.plist"))
        #expect(written.contains("<key>CFBundleName</key>"))
        #expect(try tool(["--manifest", manifestPath, "--output", output, "--check"]).status == 0)

        let refused = try tool(["--manifest", directory.url("bad.json"), "--output", output])
        #expect(refused.status == 2)
        #expect(refused.errors.contains("documentTypes[0] “PDF Document”: rank “Top” must be one of"))
        #expect(refused.errors.contains("nothing was written"))
        #expect(directory.contents("Info.plist") == written)

        let stale = try tool(["--manifest", directory.url("bad.json").replacingOccurrences(of: "bad", with: "DocumentTypes"),
                              "--output", directory.url("missing.plist"), "--check"])
        #expect(stale.status == 1)
        #expect(stale.errors.contains("the output file does not exist"))
        #expect(!directory.exists("missing.plist"))
    }

    @Test func writesAndChecksTheDesktopFilesToo() throws {
        directory.make(["app/DocumentTypes.json": desktopManifest])
        let manifestPath = directory.url("app/DocumentTypes.json"), output = directory.url("app/Info.plist")
        #expect(try tool(["--manifest", manifestPath, "--output", output]).status == 0)
        #expect(directory.names("app/Desktop") == ["com.example.Notes.desktop", "com.example.Notes.xml"])
        #expect(directory.contents("app/Desktop/com.example.Notes.desktop")?.contains("Exec=notes open-files %F") == true)
        #expect(try tool(["--manifest", manifestPath, "--output", output, "--check"]).status == 0)

        directory.make(["app/Desktop/com.example.Notes.desktop": "[Desktop Entry]\nName=Edited\n"])
        try FileManager.default.removeItem(atPath: directory.url("app/Desktop/com.example.Notes.xml"))
        let stale = try tool(["--manifest", manifestPath, "--output", output, "--check"])
        #expect(stale.status == 1)
        #expect(stale.errors.contains("Desktop/com.example.Notes.desktop is out of date"))
        #expect(stale.errors.contains("Desktop/com.example.Notes.xml does not exist"))
        #expect(directory.contents("app/Desktop/com.example.Notes.desktop") == "[Desktop Entry]\nName=Edited\n")

        // Elsewhere when asked; and a manifest without an application makes no desktop files.
        #expect(try tool(["--manifest", manifestPath, "--output", output, "--desktop-folder", directory.url("elsewhere")]).status == 0)
        #expect(directory.names("elsewhere") == ["com.example.Notes.desktop", "com.example.Notes.xml"])
        directory.make(["plain/DocumentTypes.json": notesManifest])
        #expect(try tool(["--manifest", directory.url("plain/DocumentTypes.json"), "--output", directory.url("plain/Info.plist")]).status == 0)
        #expect(!directory.exists("plain/Desktop"))
    }
}
