import CofferCore
import FileService

extension CommandInterpreter {
    func makeFolders(_ words: ArraySlice<String>) async throws(CofferError) {
        let arguments = try ParsedArguments(words, flags: "p", language: language)
        guard !arguments.operands.isEmpty else { throw usage("mkdir") }
        for text in arguments.operands {
            try await service.createFolder(at: try resolve(text), intermediates: arguments.flags.contains("p"))
        }
    }

    func move(_ words: ArraySlice<String>) async throws {
        try await transfer(words, command: "mv", recursiveFlag: false)
    }

    func copy(_ words: ArraySlice<String>) async throws {
        try await transfer(words, command: "cp", recursiveFlag: true)
    }

    /// `mv`/`cp`: sources then a destination; several sources need a folder destination.
    private func transfer(_ words: ArraySlice<String>, command: String, recursiveFlag: Bool) async throws {
        let arguments = try ParsedArguments(words, flags: recursiveFlag ? "rR" : "", longFlags: ["keep-both", "replace"],
                                            language: language)
        let conflict = try arguments.conflictPolicy(language: language)
        guard arguments.operands.count >= 2 else { throw usage(command) }
        let target = try resolve(arguments.operands.last!)
        let sources = try arguments.operands.dropLast().map { (text) throws(CofferError) in try resolve(text) }
        if sources.count > 1 {
            let node = try await service.stat(target)
            guard node.kind == .folder else { throw CofferError(.notADirectory, path: target) }
        }
        var firstError: CofferError?
        for source in sources {
            do throws(CofferError) {
                let destination = try await service.destination(for: source, target: target)
                if command == "cp" {
                    let node = try await service.stat(source)
                    if node.kind != .file && !arguments.flags.contains("r") && !arguments.flags.contains("R") {
                        throw CofferError(.isADirectory, path: source)
                    }
                    try await service.copy(source, to: destination, conflict: conflict)
                } else {
                    try await service.move(source, to: destination, conflict: conflict)
                }
            } catch {
                // Carry on with the other sources, as mv and cp do; report each failure.
                if sources.count == 1 { throw error }
                report(error)
                firstError = firstError ?? error
            }
        }
        if let firstError, sources.count > 1 { throw Reported(error: firstError) }
    }

    func rename(_ words: ArraySlice<String>) async throws(CofferError) {
        let arguments = try ParsedArguments(words, longFlags: ["keep-both", "replace"], language: language)
        let conflict = try arguments.conflictPolicy(language: language)
        guard arguments.operands.count == 2 else { throw usage("rename") }
        let path = try resolve(arguments.operands[0])
        try FileName.validate(arguments.operands[1], path: path)
        try await service.rename(path, to: arguments.operands[1], conflict: conflict)
    }
}

/// A failure already printed; it only marks the command as failed.
struct Reported: Error {
    var error: CofferError
}
