import CofferCore
import FileService
import Foundation

/// Values handed from a session's task to the thread answering a request: at most `capacity`
/// wait, so the task never runs far ahead of what the client takes. The task is suspended,
/// not blocked, while the queue is full: no thread waits for a slow client but the request's
/// own.
final class HandOff<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting: [Element] = []
    /// The value offered while the queue was full, and where its task waits to go on.
    private var offered: (value: Element, resume: CheckedContinuation<Bool, Never>)?
    private var ended = false
    private var abandoned = false
    private(set) var completed = false
    private let capacity: Int

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Queues `value`, or waits for room; `false` once the taker has given up.
    func put(_ value: Element) async -> Bool {
        await withCheckedContinuation { continuation in
            condition.lock()
            if abandoned {
                condition.unlock()
                continuation.resume(returning: false)
            } else if waiting.count < capacity {
                waiting.append(value)
                condition.broadcast()
                condition.unlock()
                continuation.resume(returning: true)
            } else {
                offered = (value, continuation)
                condition.unlock()
            }
        }
    }

    /// The task has put its last value: `complete` when it got through all it had to.
    func finish(complete: Bool) {
        condition.lock()
        ended = true
        completed = complete
        condition.broadcast()
        condition.unlock()
    }

    /// The next value, waiting for it; `nil` when the task has ended and all were taken.
    func take() -> Element? {
        condition.lock()
        while waiting.isEmpty && !ended { condition.wait() }
        guard !waiting.isEmpty else {
            condition.unlock()
            return nil
        }
        let value = waiting.removeFirst()
        let accepted = offered
        if let accepted {
            waiting.append(accepted.value)
            offered = nil
        }
        condition.unlock()
        accepted?.resume.resume(returning: true)
        return value
    }

    /// Waits until the task has put its last value (or `seconds` pass); `false` if it had not.
    @discardableResult
    func waitUntilEnded(seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !ended {
            guard condition.wait(until: deadline) else { return ended }
        }
        return true
    }

    /// The taker stops: the task's waiting or next `put` says so.
    func abandon() {
        condition.lock()
        abandoned = true
        let refused = offered
        offered = nil
        condition.broadcast()
        condition.unlock()
        refused?.resume.resume(returning: false)
    }
}

/// A file of another backend than this host's (S3's) read from `start` through `end` by one
/// task of the session, a MiB at a time and up to four ahead of the request's thread that
/// takes them: the request crosses to the session once, not once per piece.
struct RemoteRead {
    private let pieces = HandOff<[UInt8]>(capacity: 4)
    private let reader: Task<Void, Never>

    init(_ file: OpenedFile, from start: Int64, through end: Int64, in session: Session) {
        let pieces = self.pieces
        reader = session.start {
            var offset = start
            do throws(CofferError) {
                while offset <= end {
                    if Task.isCancelled { throw CofferError(.cancelled) }
                    let bytes = try await file.read(at: offset, upTo: Int(min(Int64(1 << 20), end - offset + 1)))
                    guard !bytes.isEmpty else { break }  // shorter than when it was opened
                    guard await pieces.put(bytes) else { throw CofferError(.cancelled) }
                    offset += Int64(bytes.count)
                }
                pieces.finish(complete: offset > end)
            } catch {
                pieces.finish(complete: false)
            }
        }
    }

    /// The next piece, waiting for it; `nil` at the end, or once a read failed.
    func next() -> [UInt8]? { pieces.take() }

    /// Stops the reading (whether or not it got to the end), and waits for a read under way to
    /// end, so the file is not closed under it.
    func stop() {
        pieces.abandon()
        reader.cancel()
        pieces.waitUntilEnded(seconds: 30)
    }
}
