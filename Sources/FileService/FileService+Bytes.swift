import CofferBackends
import CofferCore
import Foundation

/// A range of a file's bytes.
public struct ByteRange: Sendable {
    public var bytes: [UInt8]
    public var offset: Int64
    /// The file's size when read.
    public var size: Int64
    public var isEndOfFile: Bool
}

/// A range of a file read as text.
public struct TextRange: Sendable {
    public var text: String
    public var charset: TextCharset
    public var offset: Int64
    /// Bytes of the file the text covers; a character cut at the end of the range is left
    /// for the next read, which should start at `offset + bytesRead`.
    public var bytesRead: Int
    public var size: Int64
    public var isEndOfFile: Bool
}

/// Reading and writing whole ranges of bytes, for clients that cannot stream (RPC).
extension FileService {
    /// Up to `length` bytes of the file at `path`, from `offset`.
    package func readBytes(_ path: VirtualPath, offset: Int64 = 0, length: Int,
                          progress: ProgressReporter = .none) async throws(CofferError) -> ByteRange {
        guard offset >= 0, length >= 0 else { throw CofferError(.invalidArgument, path: path, detail: "negative offset or length") }
        var bytes: [UInt8] = []
        let size = try await readPieces(of: path, from: offset, progress: progress, count: { min(Int64(length), $0 - offset) }) {
            bytes += $0
        }
        return ByteRange(bytes: bytes, offset: offset, size: size, isEndOfFile: offset + Int64(bytes.count) >= size)
    }

    /// Reads the file at `path` through, as `cp` would, without keeping it: what makes a
    /// remote file local (an S3 mount keeps it in its cache, as the Files app downloads an
    /// iCloud placeholder), with progress, cancellable between pieces.
    package func fetch(_ path: VirtualPath, progress: ProgressReporter = .none) async throws(CofferError) -> FileNode {
        let node = try await stat(path)
        try node.requireReadableFile()
        _ = try await readPieces(of: path, from: 0, progress: progress, count: { $0 }) { _ in }
        return node
    }

    /// How much of a file a read asks for at a time.
    static let readPiece = 1 << 20

    /// Reads `count(size)` bytes of the file at `path` from `offset` in pieces of
    /// ``readPiece``, handing each to `take`: a long read (a remote file's) shows how far it
    /// has come and stops between pieces when cancelled. Returns the file's size.
    private func readPieces(of path: VirtualPath, from offset: Int64, progress: ProgressReporter,
                            count: @Sendable (Int64) -> Int64,
                            _ take: ([UInt8]) -> Void) async throws(CofferError) -> Int64 {
        let backend = try mount(for: path).backend
        return try await self.call(path) {
            let file = try await backend.openFile(at: path)
            do {
                let wanted = max(0, count(file.size))
                progress.expect(bytes: wanted, items: 1)
                var done: Int64 = 0
                while done < wanted {
                    try Task.checkCancellation()
                    let piece = try await file.read(at: offset + done, upTo: Int(min(Int64(Self.readPiece), wanted - done)))
                    if piece.isEmpty { break }
                    take(piece)
                    done += Int64(piece.count)
                    progress.advance(bytes: Int64(piece.count))
                }
                progress.advance(items: 1)
                await file.close()
                return file.size
            } catch {
                await file.close()
                throw error
            }
        }
    }

    /// Up to `length` bytes from `offset`, as text in the file's encoding (decided from the
    /// file's start, byte-order mark included, wherever the range is).
    package func readText(_ path: VirtualPath, offset: Int64 = 0, length: Int,
                         progress: ProgressReporter = .none) async throws(CofferError) -> TextRange {
        let head = try await readBytes(path, offset: 0, length: TextReader.sampleSize)
        guard case .text(let charset, let bomLength) = TextDetection.detect(head.bytes, isComplete: head.isEndOfFile) else {
            throw CofferError(.unsupported, path: path, detail: "not-text")
        }
        let start = max(offset, Int64(bomLength))
        let wanted = max(0, length - Int(start - offset))
        let range: ByteRange
        if start + Int64(wanted) <= Int64(head.bytes.count) || (head.isEndOfFile && start <= Int64(head.bytes.count)) {
            // Within the bytes already read to detect the encoding: no second read.
            let slice = Array(head.bytes[Int(start)..<min(head.bytes.count, Int(start) + wanted)])
            range = ByteRange(bytes: slice, offset: start, size: head.size,
                              isEndOfFile: start + Int64(slice.count) >= head.size)
        } else {
            range = try await readBytes(path, offset: start, length: wanted, progress: progress)
        }
        var decoder = StreamingTextDecoder(charset: charset)
        let text = decoder.decode(range.bytes, isFinal: range.isEndOfFile)
        let consumed = Int(start - offset) + range.bytes.count - decoder.pendingByteCount
        return TextRange(text: text, charset: charset, offset: offset, bytesRead: consumed, size: range.size,
                         isEndOfFile: range.isEndOfFile && decoder.pendingByteCount == 0)
    }

    /// Writes a whole file from bytes in memory: invisible until complete, then placed under
    /// `conflict` (keep both settled here as everywhere).
    @discardableResult
    package func writeFile(_ path: VirtualPath, bytes: [UInt8], conflict: ConflictPolicy) async throws(CofferError) -> FileNode {
        guard !path.isRoot else { throw CofferError(.isADirectory, path: path) }
        let backend = try writableMount(for: path).backend
        let placed = try await settle(path, conflict: conflict, arriving: .file) { target, policy in
            let writer = try await backend.makeWrite(at: target)
            do {
                var offset = 0
                while offset < bytes.count {
                    try Task.checkCancellation()
                    let end = min(bytes.count, offset + (1 << 20))
                    try await writer.write(Array(bytes[offset..<end]))
                    offset = end
                }
                try await writer.commit(conflict: policy)
            } catch {
                await writer.abort()
                throw error
            }
        }
        return await placedNode(placed, made: writtenFile(placed, size: bytes.count))
    }
    /// Adds `bytes` at the end of a file, or makes the file when there is none.
    ///
    /// The file is written anew — its content, then the bytes — and takes the old one's
    /// place only when complete, so a failed, cancelled or interrupted append leaves the
    /// file as it was, and a reader never sees half of it. (A file's content cannot be
    /// added to in place on every backend: an S3 object never can.)
    package func appendToFile(_ path: VirtualPath, bytes: [UInt8]) async throws(CofferError) -> FileNode {
        guard !path.isRoot else { throw CofferError(.isADirectory, path: path) }
        let existing: FileNode
        do {
            existing = try await stat(path)
        } catch where error.kind == .noSuchFile {
            return try await writeFile(path, bytes: bytes, conflict: .fail)
        }
        try existing.requireReadableFile()
        let backend = try writableMount(for: path).backend
        try await self.call(path) {
            let file = try await backend.openFile(at: path)
            let writer: any PendingWrite
            do {
                writer = try await backend.makeWrite(at: path)
            } catch {
                await file.close()
                throw error
            }
            do {
                try await StreamingCopy.pour(file, into: writer)
            } catch {
                await file.close()
                await writer.abort()
                throw error
            }
            await file.close()
            do {
                if !bytes.isEmpty { try await writer.write(bytes) }
                try await writer.commit(conflict: .replace)
            } catch {
                await writer.abort()
                throw error
            }
        }
        await indexChanged([path])
        return try await stat(path)
    }
}
