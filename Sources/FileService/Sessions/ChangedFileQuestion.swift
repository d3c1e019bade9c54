public import CofferCore

/// What to do with a save refused because its file changed since it was read (someone else
/// saved it meanwhile). Not saving — *cancel* — is the question's `nil`.
public enum ChangedFileChoice: String, Sendable, Hashable, CaseIterable {
    /// Save over what is there now; that goes to the trash.
    case overwrite
    /// Save beside it under a new name (`notes (2).md`), leaving it alone.
    case keepBoth
    /// Save in `files:/Recovered`, leaving the file alone.
    case keepInRecovered
}

/// Asked when a conditional save is refused (`changedSinceRead`) and its request let the
/// session ask: the refusal (its message says what changed and when) and the choices this
/// save can take, in the order to offer them. `nil` cancels: nothing is saved, and the
/// refusal stands.
public typealias ChangedFileQuestion = @Sendable (_ refusal: CofferError, _ choices: [ChangedFileChoice]) async -> ChangedFileChoice?

extension OperationContext {
    /// Runs a conditional save, `attempt(nil)`. When it is refused because the file changed
    /// since it was read, `asking` is set and the session has someone to ask
    /// (``Session/changedFileQuestion``), asks once which of `choices` to take and runs
    /// `attempt` again with the answer. Without anyone to ask, or without an answer, the
    /// refusal is what the operation throws: every front end decides this here, the same way.
    public nonisolated(nonsending) func settlingChange<T>(
        asking: Bool, choices: [ChangedFileChoice] = ChangedFileChoice.allCases,
        _ attempt: (ChangedFileChoice?) async throws(CofferError) -> T
    ) async throws(CofferError) -> T {
        do {
            return try await attempt(nil)
        } catch where error.kind == .changedSinceRead && asking {
            guard let question = session.changedFileQuestion,
                  let answer = await question(error, choices), choices.contains(answer) else { throw error }
            return try await attempt(answer)
        }
    }
}

extension FileService {
    /// Where edited copies and saves kept aside go (``ChangedFileChoice/keepInRecovered``).
    public static let recoveredFolder = VirtualPath.root().appending(trustedName: "Recovered")

    /// Saves `bytes` as a new file named `name` in `files:/Recovered` (made if need be),
    /// beside anything of that name there.
    func saveInRecovered(_ bytes: [UInt8], named name: String) async throws(CofferError) -> FileNode {
        _ = try await createFolder(at: Self.recoveredFolder, intermediates: true)
        return try await writeFile(try Self.recoveredFolder.appending(name), bytes: bytes, conflict: .keepBoth)
    }
}
