import CofferCore
import Testing

struct TypeRegistryTests {
    let registry = TypeRegistry.standard

    @Test(arguments: [("jpg", "public.jpeg"), ("JPEG", "public.jpeg"), ("png", "public.png"), ("pdf", "com.adobe.pdf"),
                      ("md", "net.daringfireball.markdown"), ("docx", "org.openxmlformats.wordprocessingml.document"),
                      ("gz", "org.gnu.gnu-zip-archive"), ("heic", "public.heic"), ("csv", "public.comma-separated-values-text")])
    func byExtension(_ ext: String, id: String) {
        #expect(registry.type(forExtension: ext)?.id == id)
    }

    @Test func byMIMEType() {
        #expect(registry.type(forMIMEType: "image/png")?.id == "public.png")
        #expect(registry.type(forMIMEType: "text/plain; charset=utf-8")?.id == "public.plain-text")
        #expect(registry.type(forMIMEType: "APPLICATION/PDF")?.id == "com.adobe.pdf")
        #expect(registry.type(forMIMEType: "x-unknown/thing") == nil)
    }

    @Test func conformanceIsTransitive() {
        #expect(registry.conforms("public.jpeg", to: "public.image"))
        #expect(registry.conforms("public.jpeg", to: "public.data"))
        #expect(registry.conforms("public.jpeg", to: "public.item"))
        #expect(registry.conforms("public.json", to: "public.text"))
        #expect(registry.conforms("public.swift-source", to: "public.source-code"))
        #expect(registry.conforms("org.idpf.epub-container", to: "public.zip-archive"))
        #expect(!registry.conforms("public.png", to: "public.text"))
        #expect(!registry.conforms("public.image", to: "public.jpeg"))
    }

    @Test func packagesAreFoldersWithAPackageExtension() {
        #expect(registry.isPackage(folderNamed: "Photos.app"))
        #expect(registry.isPackage(folderNamed: "Notes.rtfd"))
        #expect(registry.isPackage(folderNamed: "Thing.bundle"))
        #expect(!registry.isPackage(folderNamed: "v1.2"))
        #expect(!registry.isPackage(folderNamed: "Photos"))
        #expect(registry.typeIdentifier(forFolderNamed: "Projects") == "public.folder")
    }

    @Test func unknownExtensionsAreData() {
        #expect(registry.typeIdentifier(forFileNamed: "Makefile") == "public.data")
        #expect(registry.typeIdentifier(forFileNamed: "a.zzz") == "public.data")
        #expect(registry.typeIdentifier(forFileNamed: ".png") == "public.data")
    }

    @Test func applicationTypesWin() {
        let custom = registry.adding([FileType(id: "com.example.note", conformsTo: ["public.json"],
                                               extensions: ["json"], englishName: "Note")])
        #expect(custom.type(forExtension: "json")?.id == "com.example.note")
        #expect(custom.conforms("com.example.note", to: "public.text"))
        #expect(registry.type(forExtension: "json")?.id == "public.json")
    }
}
