import CofferCore
import CofferDesktop
import CofferRuntime
import FileService
import Foundation

/// `open-with`: the desktop's applications for a file, and the file opened in one.
extension CommandInterpreter {
    func openWith(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "open-with")
        let bookmark = try arguments.options["bookmark"].map { (text) throws(CofferError) -> Int in
            guard let id = Int(text) else { throw CofferError(.invalidArgument, detail: "--bookmark \(text): use a number (bookmarks lists them)") }
            return id
        }
        let named = bookmark == nil ? 1 : 0
        guard (named...(named + 1)).contains(arguments.operands.count) else { throw usage("open-with") }
        let place = bookmark.map { "bookmark \($0)" } ?? arguments.operands[0]
        let item: ListApplications.Item = if let bookmark {
            .bookmark(bookmark)
        } else if place.hasPrefix(Self.hostPrefix) {
            .host(Self.expandingHome(String(place.dropFirst(Self.hostPrefix.count))))
        } else {
            .path(try resolve(place))
        }
        let inPlace = arguments.flags.contains("in-place")
        var chosen = arguments.operands.count == named + 1 ? arguments.operands[named] : nil
        if chosen == nil {
            let (type, applications) = try await perform(ListApplications(item))
            guard !applications.isEmpty else {
                throw CofferError(.unsupported, detail: LocalizedText("no application opens \(type)", "没有能打开 \(type) 的应用")(language))
            }
            for (index, application) in applications.enumerated() {
                let mark = application.isDefault ? LocalizedText("  (default)", "  （默认）")(language) : ""
                output.line("\(index + 1)  \(application.name)  \(application.id)\(mark)")
            }
            // At a terminal, one is picked (Enter: the first); a script only lists them.
            guard let ask else { return }
            output.flush()
            guard let answer = await ask(LocalizedText("Open in which? [1] ", "用哪个打开？[1] ")(language)) else { return }
            let number = answer.trimmingCharacters(in: .whitespaces).isEmpty ? 1 : Int(answer.trimmingCharacters(in: .whitespaces))
            guard let number, applications.indices.contains(number - 1) else {
                throw CofferError(.invalidArgument, detail: LocalizedText("“\(answer)” is not one of the numbers", "“\(answer)”不是列出的编号之一")(language))
            }
            chosen = applications[number - 1].id
        }
        let handed = try await perform(OpenWithApplication(item, application: chosen, inPlace: inPlace))
        output.line(handed.inPlace
            ? LocalizedText("Opened \(shown(place)) in \(handed.application.name)", "已在 \(handed.application.name) 中打开 \(shown(place))")(language)
            : LocalizedText("Opened a read-only copy of \(shown(place)) in \(handed.application.name) (\(handed.hostPath))",
                            "已在 \(handed.application.name) 中打开 \(shown(place)) 的只读副本（\(handed.hostPath)）")(language))
    }
}
