import Foundation
import Synchronization
public import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Something a test started that must not outlive it: a process, a terminal session, a
/// connection with a thread reading it.
public protocol OwnedResource: AnyObject, Sendable {
    /// Ends it and waits until it has ended, within a deadline of its own.
    func end()
}

/// What one test started: ended, whatever the test's outcome, when the test ends.
///
/// A test gets one from the ``OwnsProcesses`` trait (`@Suite(.ownsProcesses)`), as a task-local
/// value that ``TestProcess`` and the other resources adopt themselves into. ``offPool(_:)``
/// carries it onto the thread it starts; code that starts threads of its own captures
/// ``current`` and binds it there with `ProcessOwner.$current.withValue`.
public final class ProcessOwner: Sendable {
    /// The owner of whatever is started now, if a test owns its processes.
    @TaskLocal public static var current: ProcessOwner?

    /// The test's name, for messages.
    public let name: String
    private let processes = Mutex<[TestProcess]>([])
    private let others = Mutex<[any OwnedResource]>([])
    /// Set by ``endAll(grace:)``: what is adopted after it (a stray thread's) is ended at once.
    private let ended = Mutex(false)

    public init(name: String) {
        self.name = name
        Self.sweepAtExit
    }

    /// Takes `process` into this owner's care (ending it at once when the test has ended).
    public func adopt(_ process: TestProcess) {
        let late = ended.withLock { ended in
            if !ended { processes.withLock { $0.append(process) } }
            return ended
        }
        if late { process.end(grace: 0) }
    }

    /// Takes `resource` into this owner's care (ending it at once when the test has ended).
    public func adopt(_ resource: any OwnedResource) {
        let late = ended.withLock { ended in
            if !ended { others.withLock { $0.append(resource) } }
            return ended
        }
        if late { resource.end() }
    }

    /// Ends everything adopted: every process still running gets its input closed and `SIGTERM`
    /// at once, then `SIGKILL` (with its group) after `grace` seconds, and is reaped; then the
    /// other resources end.
    public func endAll(grace: Double = 3) {
        ended.withLock { $0 = true }
        let running = processes.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for process in running { process.beginEnding() }
        let deadline = ContinuousClock.now + .milliseconds(Int(grace * 1000))
        for process in running { process.finishEnding(by: deadline) }
        let rest = others.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for resource in rest.reversed() { resource.end() }
    }

    /// The last resort, when the test process exits or is stopped by SIGINT, SIGTERM or
    /// SIGHUP: a process no owner ended is killed with its group, and named. (Children lead
    /// groups of their own, so a Ctrl-C at `swift test` no longer reaches them by itself.) A
    /// crash of the test process runs neither; CI's `.ci/step.py` sweeps what that leaves.
    private static let sweepAtExit: Void = {
        atexit {
            for pid in TestProcess.unreaped.withLock({ $0 }) where kill(pid, 0) == 0 {
                FileHandle.standardError.write(Data("CofferTestSupport: process \(pid) was still running at exit; killed\n".utf8))
                _ = kill(-pid, SIGKILL)
            }
        }
        for number in [SIGINT, SIGTERM, SIGHUP] {
            // Taken from its default action and handled on a queue; the handler ends the
            // children, then lets the signal do what it would have done.
            _ = Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                for pid in TestProcess.unreaped.withLock({ $0 }) { _ = kill(-pid, SIGKILL) }
                _ = Glibc.signal(number, SIG_DFL)
                _ = raise(number)
            }
            source.resume()
            signalSources.append(source)
        }
    }()

    /// Kept for the life of the process (set once, by the initializer of ``sweepAtExit``).
    nonisolated(unsafe) private static var signalSources: [any DispatchSourceSignal] = []
}

/// The trait that makes a test own what it starts: every ``TestProcess`` and other
/// ``OwnedResource`` the test (or a suite's test, recursively) starts is ended and reaped when
/// it ends, passed, failed or thrown. A process started without it is refused.
public struct OwnsProcesses: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        let owner = ProcessOwner(name: test.name)
        do {
            try await ProcessOwner.$current.withValue(owner) { try await function() }
        } catch {
            try? await offPool { owner.endAll() }
            throw error
        }
        try await offPool { owner.endAll() }
    }
}

extension Trait where Self == OwnsProcesses {
    /// Every process the test starts is ended and reaped when it ends (``OwnsProcesses``).
    public static var ownsProcesses: Self { Self() }
}
