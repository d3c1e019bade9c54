import CofferCore
import CofferRuntime
import CofferTestSupport
@_spi(Engine) @testable import FileService
import Foundation
import Synchronization
import Testing

/// A session's work run on the thread that waits for it (what `coffer mount`'s calls do): the
/// operation's blocking calls happen on that thread, a deadline still holds, and work that
/// outlives its waiter still ends.
struct WaitingThreadTests {
    let directory = TemporaryDirectory("waiting-thread")
    let service: FileService

    init() async throws {
        service = try FileService.standard(container: try await Container.open(at: directory.url("c")))
    }

    /// Waits on a thread of its own (never one of Swift's pool) for `work`, at most `seconds`.
    /// `sample` is called on that thread as soon as the wait ends: what it returns is the state
    /// then, however late a loaded machine resumes the test.
    private func wait<T: Sendable>(_ session: Session, within seconds: Double, sample: @escaping @Sendable () -> Bool = { false },
                                   _ work: @escaping @Sendable () async -> T)
        async -> (done: Bool, value: T?, thread: UInt, sampled: Bool)
    {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let executor = WaitingThreadExecutor()
                let value = Mutex<T?>(nil)
                session.start(on: executor) { [executor] in
                    defer { withExtendedLifetime(executor) {} }
                    let result = await work()
                    value.withLock { $0 = result }
                }
                let done = executor.run(within: seconds) { value.withLock { $0 != nil } }
                let sampled = sample()
                continuation.resume(returning: (done, value.withLock { $0 }, UInt(bitPattern: Int(bitPattern: pthread_self())), sampled))
            }
        }
    }

    @Test func anOperationRunsOnTheWaitingThreadWithItsBlockingCalls() async throws {
        let session = try service.openSession(SessionOptions(frontEnd: "tester"))
        let path = try VirtualPath(parsing: "/made.txt")
        let outcome = await wait(session, within: 30) { () async -> (UInt, UInt, Bool) in
            let before = UInt(bitPattern: Int(bitPattern: pthread_self()))
            let inside = (try? await BlockingIO.run { _ in UInt(bitPattern: Int(bitPattern: pthread_self())) }) ?? 0
            let file = try? await session.perform(OpenForUpdate(path, creating: true))
            file?.close()
            return (before, inside, file != nil)
        }
        #expect(outcome.done)
        let (before, inside, made) = try #require(outcome.value)
        #expect(before == outcome.thread && inside == outcome.thread)
        #expect(made)
        #expect(try await service.stat(path).size == 0)
        await session.close()
    }

    @Test func aCallWaitingOnTheNetworkLeavesTheThreadSoTheDeadlineHolds() async throws {
        let session = try service.openSession(SessionOptions(frontEnd: "tester"))
        let release = DispatchSemaphore(value: 0)
        let finished = Mutex(false)
        let outcome = await wait(session, within: 0.3, sample: { finished.withLock { $0 } }) { () async -> Int in
            // A store that does not answer until it is let go, after the waiter has returned: run
            // on the waiting thread, it would hold the waiter until then, and the work would be done.
            let answer = (try? await BlockingIO.run(waitingOnNetwork: true) { _ in
                _ = release.wait(timeout: .now() + 60)
                return 1
            }) ?? 0
            finished.withLock { $0 = true }
            return answer
        }
        #expect(!outcome.done)
        // (Read as the waiter returned: the test itself may resume much later on a loaded
        // machine, after the store's 60 s.)
        #expect(!outcome.sampled)
        // What the waiter left ends on Dispatch's threads.
        release.signal()
        let deadline = ContinuousClock.now + .seconds(60)
        while !finished.withLock({ $0 }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(finished.withLock { $0 })
        await session.close()
    }
}
