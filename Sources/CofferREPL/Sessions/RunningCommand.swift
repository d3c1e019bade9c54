import FileService
import Synchronization

/// The command a session is running, so a signal handler on another thread can cancel it.
final class RunningCommand: Sendable {
    private struct State {
        var task: Task<CommandInterpreter.Outcome, Never>?
        var signal: Int32?
    }

    private let state = Mutex(State())

    /// Runs `line` as a task of the interpreter's session (so that task alone can be
    /// cancelled, and closing the session would cancel it) and waits for it.
    @MainActor
    func run(_ line: String, on interpreter: CommandInterpreter) async -> CommandInterpreter.Outcome {
        let task = interpreter.session.start { @MainActor in await interpreter.run(line: line) }
        state.withLock { $0.task = task }
        let outcome = await task.value
        state.withLock { $0.task = nil }
        return outcome
    }

    /// Cancels the running command. Returns false when none is running.
    @discardableResult
    func cancel(recording signal: Int32? = nil) -> Bool {
        let task = state.withLock { state in
            if let signal, state.signal == nil { state.signal = signal }
            return state.task
        }
        task?.cancel()
        return task != nil
    }

    /// The first signal recorded by ``cancel(recording:)``.
    var signal: Int32? { state.withLock { $0.signal } }
}
