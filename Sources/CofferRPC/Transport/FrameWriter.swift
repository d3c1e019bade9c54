import Dispatch
import Foundation
import Synchronization

/// Writes whole messages to standard output, one at a time, in the client's framing.
///
/// Messages come from many tasks at once; a serial queue keeps each frame in one piece and
/// keeps blocking writes off Swift's cooperative pool. A client that went away (`EPIPE`)
/// makes later writes no-ops.
final class FrameWriter: Sendable {
    private let fd: Int32
    private let queue = DispatchQueue(label: "coffer.rpc.writer")
    private let framing = Mutex(Framing.ndjson)

    init(fd: Int32) { self.fd = fd }

    /// Set once the reader knows the client's framing.
    func use(_ framing: Framing) { self.framing.withLock { $0 = framing } }

    /// Frames waiting to be written, and whether a write is already scheduled.
    private let pending = Mutex<(frames: Data, scheduled: Bool)>((Data(), false))

    /// Queues one message body. Frames queued while a write is pending go out together in
    /// one `write`, which matters when many requests are answered at once.
    func send(_ body: Data) {
        var frame = Data()
        if framing.withLock({ $0 }) == .lsp {
            frame.append(contentsOf: Array("Content-Length: \(body.count)\r\n\r\n".utf8))
            frame.append(body)
        } else {
            frame = body
            frame.append(UInt8(ascii: "\n"))
        }
        let schedule = pending.withLock { pending -> Bool in
            pending.frames.append(frame)
            defer { pending.scheduled = true }
            return !pending.scheduled
        }
        guard schedule else { return }
        queue.async { [self] in
            let frames = pending.withLock { pending -> Data in
                defer { pending = (Data(), false) }
                return pending.frames
            }
            writeAll(frames)
        }
    }

    private func writeAll(_ data: Data) {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }  // the client is gone
                offset += written
            }
        }
    }

    /// Waits until everything queued so far is written.
    func flush() { queue.sync {} }
}
