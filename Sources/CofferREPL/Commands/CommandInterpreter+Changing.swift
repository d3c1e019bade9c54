import CofferCore
import FileService

extension CommandInterpreter {
    func makeFolders(_ words: ArraySlice<String>) async throws(CofferError) {
        let arguments = try parse(words, as: "mkdir")
        guard !arguments.operands.isEmpty else { throw usage("mkdir") }
        for text in arguments.operands {
            _ = try await perform(CreateFolder(try resolve(text), intermediates: arguments.flags.contains("p")))
        }
    }

    func move(_ words: ArraySlice<String>) async throws {
        try await transfer(words, command: "mv")
    }

    func copy(_ words: ArraySlice<String>) async throws {
        try await transfer(words, command: "cp")
    }

    /// `mv`/`cp`: sources then a destination. With one source the destination is named as
    /// a shell names it (into it when it is a folder, else that name; into it, which must be
    /// a folder, when it ends in `/`); several sources go into it, which must be a folder.
    private func transfer(_ words: ArraySlice<String>, command: String) async throws {
        let arguments = try parse(words, as: command)
        let conflict = try arguments.conflictChoice(language: language)
        guard arguments.operands.count >= 2 else { throw usage(command) }
        let target: VirtualPath, sources: [VirtualPath]
        do throws(CofferError) {
            target = try resolve(arguments.operands.last!)
            sources = try arguments.operands.dropLast().map { (text) throws(CofferError) in try resolve(text) }
        } catch {
            command == "cp" ? session.recordUnmade(CopyItem.self, because: error)
                            : session.recordUnmade(MoveItem.self, because: error)
            throw error
        }
        let destination: Destination = sources.count > 1 ? .into(target) : .named(target, typed: arguments.operands.last!)
        try await destination.check(in: service)  // a folder that is not there fails the command once, not each source
        let recursive = arguments.flags.contains("r") || arguments.flags.contains("R")
        try await forEach(sources) { source throws(CofferError) in
            if command == "cp" {
                _ = try await perform(CopyItem(source, to: destination, conflict: conflict, copiesFolders: recursive),
                                      progress: LocalizedText("Copying", "正在复制"))
            } else {
                _ = try await perform(MoveItem(source, to: destination, conflict: conflict),
                                      progress: LocalizedText("Moving", "正在移动"))
            }
        }
    }

    /// Runs `body` for each item, as `mv`, `cp` and `rm` treat their operands: with one
    /// item its failure is the command's; with several, each failure is reported, the
    /// others still run, and the command fails at the end if any did.
    func forEach<Item: Sendable>(_ items: [Item], _ body: (Item) async throws(CofferError) -> Void) async throws {
        var failed = false
        for item in items {
            do throws(CofferError) {
                try await body(item)
            } catch {
                if items.count == 1 { throw error }
                report(error)
                failed = true
            }
        }
        if failed { throw Reported() }
    }

    func rename(_ words: ArraySlice<String>) async throws(CofferError) {
        let arguments = try parse(words, as: "rename")
        let conflict = try arguments.conflictChoice(language: language)
        guard arguments.operands.count == 2 else { throw usage("rename") }
        _ = try await perform(RenameItem(try resolve(arguments.operands[0]), to: arguments.operands[1], conflict: conflict))
    }
}

/// A failure already printed; it only marks the command as failed.
struct Reported: Error {}

extension CommandInterpreter {
    /// `touch path…`: an empty file where nothing is, else the item's time set to now.
    func touch(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "touch")
        guard !arguments.operands.isEmpty else { throw usage("touch") }
        var failed = false
        for text in arguments.operands {
            do {
                _ = try await perform(TouchItem(try resolve(text)))
            } catch {
                if arguments.operands.count == 1 { throw error }
                report(error)
                failed = true
            }
        }
        if failed { throw Reported() }
    }
}
