import CofferCore
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
