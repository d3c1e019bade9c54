@testable import CofferCore
import Testing

struct ErrorMessageTests {
    @Test(arguments: CofferError.Kind.allKinds)
    func everyKindHasMessagesInBothLanguages(_ kind: CofferError.Kind) throws {
        let path = try VirtualPath(parsing: "/Download/报告.pdf")
        for error in [CofferError(kind, path: path, detail: "x"), CofferError(kind)] {
            let english = error.userMessage(in: .english)
            let chinese = error.userMessage(in: .simplifiedChinese)
            #expect(!english.text.isEmpty && !english.hint.isEmpty)
            #expect(!chinese.text.isEmpty && !chinese.hint.isEmpty)
            #expect(english.text != chinese.text)
            #expect(chinese.text.unicodeScalars.contains { $0.value >= 0x4E00 && $0.value <= 0x9FFF })
        }
    }

    /// Core's hints are shared by every front end, so they name no command, method or option.
    @Test(arguments: CofferError.Kind.allKinds)
    func coreHintsNameNoFrontEndsWords(_ kind: CofferError.Kind) {
        let hint = CofferError(kind).userMessage(in: .english).hint
        for word in ["“help”", "“mounts”", "cp -r", " info", "files/", "initialize", "--", "coffer rpc"] {
            #expect(!hint.contains(word), "\(kind): \(hint)")
        }
    }

    /// The catalog is data: it must hold exactly the kinds there are, every template filled.
    @Test func theCatalogHasEveryKindAndNothingElse() {
        #expect(Set(MessageCatalog.shared.entries.keys) == Set(CofferError.Kind.allKinds.map(\.identifier)))
        let path = VirtualPath.root().appending(trustedName: "a.txt")
        for kind in CofferError.Kind.allKinds {
            for error in [CofferError(kind), CofferError(kind, path: path), CofferError(kind, detail: "d"),
                          CofferError(kind, path: path, detail: "not-text"), CofferError(kind, detail: "too-long")] {
                for language in Language.allCases {
                    let message = error.userMessage(in: language)
                    #expect(!message.text.contains("{") && !message.text.contains("}"), "\(kind): \(message.text)")
                    #expect(message.text.hasSuffix(".") || message.text.hasSuffix("。"), "\(kind): \(message.text)")
                }
            }
        }
        #expect(CofferError(.invalidName, path: path, detail: "too-long").userMessage(in: .english).text
                == "The name for “files:/a.txt” is longer than 255 bytes.")
        #expect(CofferError(.unsupported, path: path, detail: "not-text").userMessage(in: .simplifiedChinese).text
                == "“files:/a.txt” 不是 UTF-8、UTF-16 或 GB 18030 编码的文本。")
        #expect(CofferError(.typeNotAllowed, path: path, detail: "public.plain-text").userMessage(in: .english).text
                == "“files:/a.txt” isn't one of the allowed types (it is public.plain-text).")
        #expect(CofferError(.unknownMount, detail: "mem").userMessage(in: .english).text == "There is no mount named “mem:”.")
    }

    @Test func aFrontEndsHintReplacesCoresForItsKindsOnly() {
        let hints = MessageHints([.unknownMount: LocalizedText("Run “mounts”.", "运行“mounts”。")])
        let unknown = CofferError(.unknownMount, detail: "nope")
        #expect(unknown.userMessage(in: .english, hints: hints).hint == "Run “mounts”.")
        #expect(unknown.userMessage(in: .simplifiedChinese, hints: hints).hint == "运行“mounts”。")
        #expect(unknown.userMessage(in: .english, hints: hints).text == unknown.userMessage(in: .english).text)
        let missing = CofferError(.noSuchFile)
        #expect(missing.userMessage(in: .english, hints: hints) == missing.userMessage(in: .english))
    }

    @Test func messagesNameTheVirtualPath() throws {
        let error = CofferError(.noSuchFile, path: try VirtualPath(parsing: "/a b.txt"))
        #expect(error.userMessage(in: .english).text == "“files:/a b.txt” doesn't exist.")
        #expect(error.userMessage(in: .simplifiedChinese).text == "“files:/a b.txt” 不存在。")
    }

    @Test func kindsHaveStableIdentifiers() {
        #expect(CofferError.Kind.noSuchFile.identifier == "noSuchFile")
        #expect(CofferError.Kind(identifier: "outOfSpace") == .outOfSpace)
        let required = ["noSuchFile", "fileExists", "notADirectory", "isADirectory", "directoryNotEmpty", "noPermission",
                        "outOfSpace", "corruptFile", "invalidName", "outsideSandbox", "readOnly", "cancelled", "unsupported"]
        for name in required { #expect(CofferError.Kind(identifier: name) != nil, "\(name)") }
    }

    @Test func languageFromEnvironment() {
        #expect(Language.preferred(environment: ["LANG": "zh_CN.UTF-8"]) == .simplifiedChinese)
        #expect(Language.preferred(environment: ["LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"]) == .english)
        #expect(Language.preferred(environment: ["LC_MESSAGES": "zh_TW"]) == .simplifiedChinese)
        #expect(Language.preferred(environment: [:]) == .english)
        #expect(Language.preferred(environment: ["LANG": "fr_FR.UTF-8"]) == .english)
    }
}
