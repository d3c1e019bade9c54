import CofferCore
import CofferRuntime
import FileService
import Foundation

/// Favourites at the prompt: `fav add|rm|ls`.
extension CommandInterpreter {
    /// `fav [ls]`, `fav add [--desktop] path`, `fav rm path`. A path is in Coffer, or a folder of
    /// this computer written `host:PATH`.
    func favourite(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "fav")
        let action = arguments.operands.first ?? "ls"
        let places = arguments.operands.dropFirst()
        switch action {
        case "ls" where places.isEmpty:
            let favourites = try await perform(ListFavourites())
            guard !favourites.isEmpty else {
                output.line(LocalizedText("No favourites yet; “fav add PATH” adds one.", "还没有收藏；用“fav add 路径”添加。")(language))
                return
            }
            for status in favourites { output.line(describe(status)) }
        case "add" where places.count == 1:
            let place = places.first!
            if let hostPath = Self.hostPath(place) {
                let added = try await perform(AddFavourite(.hostFolder(hostPath, desktop: arguments.flags.contains("desktop"))))
                output.line(describe(FavouriteStatus(favourite: added, isMissing: false, isFolder: true)))
            } else {
                guard !arguments.flags.contains("desktop") else {
                    throw CofferError(.invalidArgument, detail: LocalizedText(
                        "--desktop is for folders of this computer (host:PATH)", "--desktop 只用于本机文件夹（host:路径）")(language))
                }
                let added = try await perform(AddFavourite(.item(try resolve(place))))
                output.line(describe(FavouriteStatus(favourite: added, isMissing: false, isFolder: nil)))
            }
        case "rm" where places.count == 1:
            let place = places.first!
            if let hostPath = Self.hostPath(place) {
                // Favourites of this computer are kept by their resolved path, as `fav` lists them.
                try await perform(RemoveFavourite(URL(fileURLWithPath: hostPath).resolvingSymlinksInPath().path))
            } else {
                try await perform(RemoveFavourite(try resolve(place).description))
            }
        default:
            throw usage("fav")
        }
    }

    /// `host:PATH` (with `~`) as a host path; `nil` for a path in Coffer.
    private static func hostPath(_ text: String) -> String? {
        guard text.hasPrefix(hostPrefix) else { return nil }
        return expandingHome(String(text.dropFirst(hostPrefix.count)))
    }

    /// `files:/Notes`, `host:/home/me/Projects  (desktop)`, `files:/Old  (missing)`.
    func describe(_ status: FavouriteStatus) -> String {
        let favourite = status.favourite
        var line = shown(favourite.isHost ? Self.hostPrefix + favourite.location : favourite.location)
        if favourite.onDesktop { line += LocalizedText("  (desktop)", "  （桌面）")(language) }
        if status.isMissing { line += LocalizedText("  (missing)", "  （已不存在）")(language) }
        return line
    }
}

/// The desktop's recent files, as far as Coffer used them: `recent`.
extension CommandInterpreter {
    /// `recent`: the files Coffer opened, edited, imported, exported or downloaded, newest first.
    func listRecent(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "recent")
        guard arguments.operands.isEmpty else { throw usage("recent") }
        let files = try await perform(ListRecentFiles())
        guard !files.isEmpty else {
            output.line(LocalizedText("No recent files.", "没有最近使用的文件。")(language))
            return
        }
        for file in files {
            let place = file.path?.description ?? Self.hostPrefix + (file.hostPath ?? "")
            output.line("\(Formatting.dateWithSeconds(file.used))  \(shown(place))")
        }
    }
}
