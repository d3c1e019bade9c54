import CofferCore
import CofferHTTP
import CofferRuntime
import Dispatch
import Foundation
import Synchronization

/// Sends the parts of one upload from a local file, at most ``S3Transfers/parallelParts``
/// at a time (each on a thread of its own), as they are handed to it: a write's parts can go while the rest is still
/// being written. Each part is read with `pread` as it is sent, so memory stays at
/// libcurl's buffers. The file must stay open until ``finish(size:)`` or ``stop()`` returns.
final class S3PartSender: Sendable {
    let upload: S3Upload
    private let client: S3Client
    private let descriptor: Int32
    private let partSize: Int64
    private let parallel: Int
    /// The cancel of the commit that finishes the upload, once there is one.
    private let cancel = Mutex<CancellationFlag?>(nil)
    private let group = DispatchGroup()
    private let dropped = Atomic<Bool>(false)

    private struct State {
        /// Parts waiting to be sent: number (from 1), offset, length.
        var waiting: [(number: Int, offset: Int64, length: Int64)] = []
        var sending = 0
        var etags: [Int: String] = [:]
        var failure: CofferError?
        var stopped = false
        /// Parts handed over so far.
        var queued = 0
    }
    private let state = Mutex<State>(State())

    init(client: S3Client, upload: S3Upload, descriptor: Int32, partSize: Int64, parallel: Int) {
        self.client = client
        self.upload = upload
        self.descriptor = descriptor
        self.partSize = partSize
        self.parallel = max(1, parallel)
    }

    /// How many bytes of the file are in parts handed over.
    var covered: Int64 { state.withLock { Int64($0.queued) } * partSize }

    /// Hands over every whole part within the first `size` bytes not handed over yet.
    func send(wholePartsWithin size: Int64) {
        while covered + partSize <= size { queue(length: partSize) }
    }

    /// Hands over what is left of a file of `size` bytes, waits for every part and returns
    /// their ETags in order; throws the first failure (or `cancelled`).
    func finish(size: Int64) throws(CofferError) -> [String] {
        send(wholePartsWithin: size)
        if covered < size || state.withLock({ $0.queued }) == 0 { queue(length: size - covered) }
        group.wait()
        return try state.withLock { (state) throws(CofferError) -> [String] in
            if let failure = state.failure { throw failure }
            if state.stopped || shouldStopNow() { throw CofferError(.cancelled) }
            return (1...state.queued).map { state.etags[$0] ?? "" }
        }
    }

    /// Stops sending, waits for the parts in flight, then drops the upload with `abandon`,
    /// once however many times it is asked (a failed commit and the write's clean-up both do).
    func drop(with abandon: (S3Upload) -> Void) {
        stop()
        if !dropped.exchange(true, ordering: .relaxed) { abandon(upload) }
    }

    /// Stops sending and waits for the parts in flight to end (the file may then be closed).
    func stop() {
        state.withLock { $0.stopped = true; $0.waiting.removeAll() }
        group.wait()
    }

    private func shouldStopNow() -> Bool { cancel.withLock { $0?.isCancelled == true } }

    /// Stops the parts, in flight too, once `flag` is set.
    func stop(when flag: CancellationFlag) { cancel.withLock { $0 = flag } }

    private var shouldStop: Bool { shouldStopNow() || state.withLock { $0.stopped || $0.failure != nil } }

    private func queue(length: Int64) {
        let startWorker = state.withLock { state -> Bool in
            state.queued += 1
            state.waiting.append((state.queued, Int64(state.queued - 1) * partSize, length))
            guard state.sending < parallel else { return false }
            state.sending += 1
            return true
        }
        guard startWorker else { return }
        // A thread of its own: a part blocks for the whole transfer, which must not hold one
        // of the few threads Dispatch's shared pool runs everyone's work on.
        group.enter()
        Thread.detachNewThread { [self] in
            work()
            group.leave()
        }
    }

    /// Sends waiting parts until there are none (or a failure or stop).
    private func work() {
        while true {
            let next = state.withLock { state -> (number: Int, offset: Int64, length: Int64)? in
                guard !state.waiting.isEmpty, !state.stopped, state.failure == nil else {
                    state.sending -= 1
                    return nil
                }
                return state.waiting.removeFirst()
            }
            guard let part = next else { return }
            guard !shouldStop else { continue }
            do throws(CofferError) {
                let etag = try client.sendPart(part.number, of: upload, body: .file(
                    descriptor: descriptor, offset: part.offset, length: part.length) { [self] in shouldStop })
                state.withLock { $0.etags[part.number] = etag }
            } catch {
                state.withLock { if $0.failure == nil && error.kind != .cancelled { $0.failure = error } }
            }
        }
    }
}
