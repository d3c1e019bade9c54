import CofferCore
import CofferRuntime
import Dispatch
import Foundation
import Synchronization

/// A remote file read in ranged GETs, each checked against the ETag seen when it was
/// opened: a file replaced while it is read fails the read instead of mixing two versions.
///
/// A read far from the last one fetches one block (at least 1 MiB) and later small reads
/// are served from it. Reads that follow each other (a copy, `cat`) turn on read-ahead:
/// blocks of ``S3Transfers/readAheadBlock`` fetched ``S3Transfers/readAheadDepth`` at a time
/// on threads of their own, so the network and the caller's writing overlap; memory stays at
/// those blocks.
final class S3ReadableFile: ReadableFile {
    let size: Int64
    private let client: S3Client
    private let key: String
    private let path: VirtualPath
    private let etag: String
    /// The bucket's version of the object read (an older version kept by Coffer), or `nil`
    /// for the current one.
    private let versionID: String?
    var version: FileVersion? { FileVersion(token: etag) }
    private let transfers: S3Transfers
    /// The local copy read instead of the server, when the cache holds it.
    private let cached: Int32?
    /// The cache entry this read through fills, when it may be kept.
    private let fill: S3ContentCache.Fill?
    private let state = Mutex<State>(State())
    static let smallBlock: Int64 = 1 << 20

    /// A block asked for, fetched or being fetched.
    private final class Block: Sendable {
        let offset: Int64
        let end: Int64
        private let done = DispatchSemaphore(value: 0)
        private let outcome = Mutex<Result<MappedBuffer, CofferError>?>(nil)
        let stop = Atomic<Bool>(false)

        init(offset: Int64, end: Int64) { (self.offset, self.end) = (offset, end) }

        func finish(_ result: Result<MappedBuffer, CofferError>) {
            outcome.withLock { $0 = result }
            done.signal()
        }

        /// Waits until it is fetched (then stays fetched for later callers).
        func bytes() -> Result<MappedBuffer, CofferError> {
            if let known = outcome.withLock({ $0 }) { return known }
            done.wait()
            done.signal()
            return outcome.withLock { $0! }
        }
    }

    private struct State {
        var position: Int64 = 0
        /// Blocks in order of offset, contiguous when reading ahead.
        var blocks: [Block] = []
        /// Where the last read ended: a read starting there continues a sequential run.
        var lastEnd: Int64 = -1
    }

    /// The object's user metadata as `user.` attributes (``S3Attributes``).
    private let attributes: UserAttributes

    init(client: S3Client, key: String, path: VirtualPath, size: Int64, etag: String, versionID: String? = nil,
         attributes: UserAttributes = [:], transfers: S3Transfers, cache: S3ContentCache?) {
        self.versionID = versionID
        self.attributes = attributes
        self.client = client
        self.key = key
        self.path = path
        self.size = size
        self.etag = etag
        self.transfers = transfers
        self.cached = cache?.open(key: key, etag: etag, size: size)
        self.fill = cached == nil ? cache?.fill(key: key, etag: etag, size: size) : nil
    }

    func userAttributes() async -> UserAttributes { attributes }

    func read(upTo count: Int) async throws -> [UInt8] {
        let offset = state.withLock { $0.position }
        let bytes = try await read(at: offset, upTo: count)
        state.withLock { $0.position = offset + Int64(bytes.count) }
        return bytes
    }

    func read(at offset: Int64, upTo count: Int) async throws -> [UInt8] {
        guard offset < size, count > 0 else { return [] }
        let end = min(size, offset + Int64(count))
        if let cached { return try await readLocally(cached, offset..<end) }
        let wanted = plan(offset..<end)
        let fill = fill
        let pieces = try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) -> [UInt8] in
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(end - offset))
            for block in wanted {
                let held = try block.bytes().get()
                let from = Int(max(offset, block.offset) - block.offset)
                let to = min(Int(min(end, block.end) - block.offset), held.count)
                if from < to { held.copy(from..<to, appendingTo: &bytes) }
            }
            if let fill {
                // The cache entry grows only by the next bytes in order; a read past them drops it.
                let written = fill.written
                if offset <= written && written < end {
                    fill.add(bytes[Int(written - offset)...], at: written)
                } else if offset > written {
                    fill.cancel()
                }
            }
            return bytes
        }
        return pieces
    }

    private func readLocally(_ fd: Int32, _ range: Range<Int64>) async throws(CofferError) -> [UInt8] {
        let path = path
        return try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) -> [UInt8] in
            var bytes = [UInt8](repeating: 0, count: range.count)
            var done = 0
            while done < bytes.count {
                let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(range.lowerBound) + off_t(done)) }
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { throw CofferError(.ioError, path: path, errno: errno) }
                done += got
            }
            return bytes
        }
    }

    /// The blocks that hold `range`, started where they are missing; blocks before it are
    /// dropped, and a sequential run keeps the read-ahead window full.
    private func plan(_ range: Range<Int64>) -> [Block] {
        var started: [Block] = []
        let wanted = state.withLock { state -> [Block] in
            let sequential = range.lowerBound == state.lastEnd
            state.lastEnd = range.upperBound
            // Keep only blocks that can still serve this read or later ones.
            let kept = state.blocks.filter { $0.end > range.lowerBound }
            for dropped in state.blocks where dropped.end <= range.lowerBound { dropped.stop.store(true, ordering: .relaxed) }
            state.blocks = kept
            if !(state.blocks.first.map { $0.offset <= range.lowerBound } ?? false) {
                // Not held: start afresh at this read.
                for block in state.blocks { block.stop.store(true, ordering: .relaxed) }
                let length = sequential ? transfers.readAheadBlock : max(Int64(range.count), Self.smallBlock)
                let block = Block(offset: range.lowerBound, end: min(size, range.lowerBound + length))
                state.blocks = [block]
                started.append(block)
            }
            // Cover the read itself, then (reading on from where the last read ended) the
            // window ahead.
            let horizon = sequential ? min(size, range.upperBound + transfers.readAheadBlock * Int64(transfers.readAheadDepth - 1))
                                     : range.upperBound
            while let last = state.blocks.last, last.end < horizon || last.end < range.upperBound, last.end < size {
                let block = Block(offset: last.end, end: min(size, last.end + transfers.readAheadBlock))
                state.blocks.append(block)
                started.append(block)
            }
            return state.blocks.filter { $0.offset < range.upperBound }
        }
        for block in started { fetch(block) }
        return wanted
    }

    private func fetch(_ block: Block) {
        let (client, key, etag, path, versionID) = (client, key, etag, path, versionID)
        // On a thread of its own, as parts are: a block blocks for its whole transfer.
        Thread.detachNewThread {
            let bytes = MappedBuffer(capacity: Int(block.end - block.offset))
            guard bytes.isMapped else {
                block.finish(.failure(CofferError(.ioError, path: path, errno: ENOMEM)))
                return
            }
            do throws(CofferError) {
                try client.get(key, range: block.offset..<block.end, ifMatch: etag, versionID: versionID) { piece in
                    bytes.append(piece)
                    return !block.stop.load(ordering: .relaxed)
                }
                guard bytes.count == bytes.capacity else {
                    throw CofferError(.ioError, path: path, detail: "s3-broken")
                }
                block.finish(.success(bytes))
            } catch where error.kind == .fileExists {
                block.finish(.failure(CofferError(.ioError, path: path, detail: "s3-changed")))
            } catch where error.kind == .noSuchFile {
                block.finish(.failure(CofferError(.noSuchFile, path: path)))
            } catch {
                block.finish(.failure(error.path == nil ? error.naming(path) : error))
            }
        }
    }

    func close() async {
        let blocks = state.withLock { state in
            defer { state.blocks = [] }
            return state.blocks
        }
        for block in blocks { block.stop.store(true, ordering: .relaxed) }
        fill?.cancel()  // nothing, once the entry is complete
    }

    deinit {
        for block in state.withLock({ $0.blocks }) { block.stop.store(true, ordering: .relaxed) }
        if let cached { Glibc.close(cached) }
    }
}
