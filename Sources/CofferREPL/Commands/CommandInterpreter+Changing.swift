import CofferCore
import FileService

extension CommandInterpreter {
    func makeFolders(_ words: ArraySlice<String>) async throws(CofferError) {
        let arguments = try parse(words, as: "mkdir")
        guard !arguments.operands.isEmpty else { throw usage("mkdir") }
        for text in arguments.operands {
            try await service.createFolder(at: try resolve(text), intermediates: arguments.flags.contains("p"))
        }
    }

    func move(_ words: ArraySlice<String>) async throws {
        try await transfer(words, command: "mv")
    }

    func copy(_ words: ArraySlice<String>) async throws {
        try await transfer(words, command: "cp")
    }

    /// `mv`/`cp`: sources then a destination; several sources need a folder destination.
    private func transfer(_ words: ArraySlice<String>, command: String) async throws {
        let arguments = try parse(words, as: command)
        let chosen = try arguments.chosenConflictPolicy(language: language)
        guard arguments.operands.count >= 2 else { throw usage(command) }
        let target = try resolve(arguments.operands.last!)
        let sources = try arguments.operands.dropLast().map { (text) throws(CofferError) in try resolve(text) }
        if sources.count > 1 {
            let node = try await service.stat(target)
            guard node.kind == .folder else { throw CofferError(.notADirectory, path: target) }
        }
        let recursive = arguments.flags.contains("r") || arguments.flags.contains("R")
        try await forEach(sources) { source throws(CofferError) in
            let destination = try await service.destination(for: source, target: target)
            if command == "cp" {
                let node = try await service.stat(source)
                if node.kind != .file && !recursive { throw CofferError(.isADirectory, path: source) }
            }
            let label = command == "cp" ? LocalizedText("Copying", "正在复制") : LocalizedText("Moving", "正在移动")
            try await settlingConflicts(at: destination, chosen: chosen, progress: label) {
                [service] policy, progress throws(CofferError) in
                if command == "cp" {
                    try await service.copy(source, to: destination, conflict: policy, progress: progress)
                } else {
                    try await service.move(source, to: destination, conflict: policy, progress: progress)
                }
            }
        }
    }

    /// Runs `body` for each item, as `mv`, `cp` and `rm` treat their operands: with one
    /// item its failure is the command's; with several, each failure is reported, the
    /// others still run, and the command fails at the end if any did.
    func forEach<Item: Sendable>(_ items: [Item], _ body: (Item) async throws(CofferError) -> Void) async throws {
        var firstError: CofferError?
        for item in items {
            do throws(CofferError) {
                try await body(item)
            } catch {
                if items.count == 1 { throw error }
                report(error)
                firstError = firstError ?? error
            }
        }
        if let firstError { throw Reported(error: firstError) }
    }

    func rename(_ words: ArraySlice<String>) async throws(CofferError) {
        let arguments = try parse(words, as: "rename")
        let chosen = try arguments.chosenConflictPolicy(language: language)
        guard arguments.operands.count == 2 else { throw usage("rename") }
        let path = try resolve(arguments.operands[0])
        let newName = arguments.operands[1]
        try FileName.validate(newName, path: path)
        try await settlingConflicts(at: try path.replacingName(with: newName), chosen: chosen, progress: nil) {
            [service] policy, _ throws(CofferError) in
            try await service.rename(path, to: newName, conflict: policy)
        }
    }

    /// Runs `operation` with the policy the user chose. Without a flag it first tries not to
    /// overwrite; if the name is taken and someone is at the terminal, it asks
    /// replace / keep both / cancel and tries again with the answer.
    ///
    /// A progress bar shows while the operation runs, when the session has one.
    func settlingConflicts(
        at destination: VirtualPath, chosen: ConflictPolicy?, progress label: LocalizedText?,
        _ operation: (ConflictPolicy, ProgressReporter) async throws(CofferError) -> Void
    ) async throws(CofferError) {
        var policy = chosen ?? .fail
        while true {
            let bar = label.flatMap { progressBar?($0(language)) }
            defer { bar?.finish() }
            do {
                try await operation(policy, bar?.reporter ?? .none)
                return
            } catch where error.kind == .fileExists && chosen == nil && policy == .fail {
                bar?.finish()
                guard let askConflict else { throw error }
                guard let answer = await askConflict(destination) else {
                    throw CofferError(.cancelled, path: destination)
                }
                policy = answer
            }
        }
    }
}

/// A failure already printed; it only marks the command as failed.
struct Reported: Error {
    var error: CofferError
}
