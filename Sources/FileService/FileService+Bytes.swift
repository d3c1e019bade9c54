import CofferBackends
@_spi(Engine) public import CofferCore
import Foundation

/// A range of a file's bytes.
public struct ByteRange: Sendable {
    /// The bytes read; fewer than asked for at the end of the file.
    public var bytes: [UInt8]
    /// Where in the file they start.
    public var offset: Int64
    /// The file's size when read.
    public var size: Int64
    /// Whether the range reaches the end of the file.
    public var isEndOfFile: Bool
    /// The version of the file read (`FileNode`'s `version`), for a save conditional on it.
    public var version: FileVersion?
}

/// A range of a file read as text.
public struct TextRange: Sendable {
    /// The text decoded.
    public var text: String
    /// The encoding the file was read in, decided from its start.
    public var charset: TextCharset
    /// Where in the file the read started (as asked).
    public var offset: Int64
    /// Bytes of the file the text covers; a character cut at the end of the range is left
    /// for the next read, which should start at `offset + bytesRead`.
    public var bytesRead: Int
    /// The file's size when read.
    public var size: Int64
    /// Whether the text reaches the end of the file, with no character left cut.
    public var isEndOfFile: Bool
    /// The version of the file read (`FileNode`'s `version`), for a save conditional on it.
    public var version: FileVersion?
    /// The file starts with a byte-order mark (which the text leaves out).
    public var hasByteOrderMark: Bool
}

/// Reading and writing whole ranges of bytes, for clients that cannot stream (RPC).
extension FileService {
    /// Up to `length` bytes of the file at `path`, from `offset`.
    @_spi(Engine) public func readBytes(_ path: VirtualPath, offset: Int64 = 0, length: Int,
                          progress: ProgressReporter = .none) async throws(CofferError) -> ByteRange {
        guard offset >= 0, length >= 0 else { throw CofferError(.invalidArgument, path: path, detail: "negative offset or length") }
        var bytes: [UInt8] = []
        let (size, version) = try await readPieces(of: path, from: offset, progress: progress,
                                                   count: { min(Int64(length), $0 - offset) }) { bytes += $0 }
        return ByteRange(bytes: bytes, offset: offset, size: size, isEndOfFile: offset + Int64(bytes.count) >= size,
                         version: version)
    }

    /// Reads the file at `path` through, as `cp` would, without keeping it: what makes a
    /// remote file local (an S3 mount keeps it in its cache, as the Files app downloads an
    /// iCloud placeholder), with progress, cancellable between pieces.
    @_spi(Engine) public func fetch(_ path: VirtualPath, progress: ProgressReporter = .none) async throws(CofferError) -> FileNode {
        let node = try await stat(path)
        try node.requireReadableFile()
        _ = try await readPieces(of: path, from: 0, progress: progress, count: { $0 }) { _ in }
        return node
    }

    /// How much of a file a read asks for at a time.
    static let readPiece = 1 << 20

    /// Reads `count(size)` bytes of the file at `path` from `offset` in pieces of
    /// ``readPiece``, handing each to `take`: a long read (a remote file's) shows how far it
    /// has come and stops between pieces when cancelled. Returns the file's size and version.
    private func readPieces(of path: VirtualPath, from offset: Int64, progress: ProgressReporter,
                            count: @Sendable (Int64) -> Int64,
                            _ take: ([UInt8]) -> Void) async throws(CofferError) -> (Int64, FileVersion?) {
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
                return (file.size, file.version)
            } catch {
                await file.close()
                throw error
            }
        }
    }

    /// Up to `length` bytes from `offset`, as text in the file's encoding (decided from the
    /// file's start, byte-order mark included, wherever the range is).
    @_spi(Engine) public func readText(_ path: VirtualPath, offset: Int64 = 0, length: Int,
                         progress: ProgressReporter = .none) async throws(CofferError) -> TextRange {
        try await Self.readText(offset: offset, length: length, path: path) { start, count, isSample throws(CofferError) in
            // The sample that decides the encoding is no part of the read's progress.
            try await self.readBytes(path, offset: start, length: count, progress: isSample ? .none : progress)
        }
    }

    /// The same from a bookmarked host file.
    func readBookmarkText(_ bookmarkID: Int, offset: Int64, length: Int,
                          policy: HostAccessPolicy) async throws(CofferError) -> TextRange {
        try await Self.readText(offset: offset, length: length, path: nil) { start, count, _ throws(CofferError) in
            try await self.readBookmark(bookmarkID, offset: start, length: count, policy: policy)
        }
    }

    /// Text from whatever `read` reads bytes of (from an offset, a count, and whether it is
    /// the sample that decides the encoding): the encoding decided from the first bytes, then
    /// the range decoded.
    private static func readText(offset: Int64, length: Int, path: VirtualPath?,
                                 read: @Sendable (Int64, Int, Bool) async throws(CofferError) -> ByteRange) async throws(CofferError) -> TextRange {
        let head = try await read(0, TextReader.sampleSize, true)
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
                              isEndOfFile: start + Int64(slice.count) >= head.size, version: head.version)
        } else {
            range = try await read(start, wanted, false)
        }
        var decoder = StreamingTextDecoder(charset: charset)
        let text = decoder.decode(range.bytes, isFinal: range.isEndOfFile)
        let consumed = Int(start - offset) + range.bytes.count - decoder.pendingByteCount
        return TextRange(text: text, charset: charset, offset: offset, bytesRead: consumed, size: range.size,
                         isEndOfFile: range.isEndOfFile && decoder.pendingByteCount == 0, version: range.version,
                         hasByteOrderMark: bomLength > 0)
    }

    /// Writes a whole file from bytes in memory: invisible until complete, then placed under
    /// `conflict` (keep both settled here as everywhere).
    ///
    /// With `ifVersion` it is a conditional save: it replaces the file only while that is
    /// the version there (``FileNode/version``), whatever `conflict` says, and throws
    /// `changedSinceRead` otherwise — also when the file is gone — writing nothing. The
    /// content it replaced is kept as a version, as every replace's is (``versions(of:)``).
    @discardableResult
    @_spi(Engine) public func writeFile(_ path: VirtualPath, bytes: [UInt8], conflict: ConflictPolicy,
                           ifVersion: FileVersion? = nil) async throws(CofferError) -> FileNode {
        guard !path.isRoot else { throw CofferError(.isADirectory, path: path) }
        let backend = try writableMount(for: path).backend
        let write = { (target: VirtualPath, policy: ConflictPolicy) async throws -> Void in
            // Where the storage can make the commit conditional itself, it is told the version.
            let expected = ExpectedWrite(size: Int64(bytes.count), modificationDate: nil,
                                         replacing: target == path ? ifVersion : nil)
            let writer = try await backend.makeWrite(at: target, announcing: expected)
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
        let placed: VirtualPath
        do {
            placed = try await settle(path, conflict: conflict, arriving: .file, expecting: ifVersion, write)
        } catch {
            throw await blamingTheWay(error, to: path)
        }
        return await placedNode(placed, made: writtenFile(placed, size: bytes.count))
    }

    /// Adds `bytes` at the end of a file, or makes the file when there is none.
    ///
    /// The file is written anew — its content, then the bytes — and takes the old one's
    /// place only when complete, so a failed, cancelled or interrupted append leaves the
    /// file as it was, and a reader never sees half of it. (A file's content cannot be
    /// added to in place on every backend: an S3 object never can.) With `ifVersion`, the
    /// file must be there at that version, when it is read and when the append is placed.
    @_spi(Engine) public func appendToFile(_ path: VirtualPath, bytes: [UInt8], ifVersion: FileVersion? = nil) async throws(CofferError) -> FileNode {
        guard !path.isRoot else { throw CofferError(.isADirectory, path: path) }
        let existing: FileNode
        do {
            existing = try await stat(path)
        } catch where error.kind == .noSuchFile {
            if ifVersion != nil { throw CofferError.changedSinceRead(path, now: nil) }
            return try await writeFile(path, bytes: bytes, conflict: .fail)
        }
        try existing.requireReadableFile()
        if let ifVersion { try Self.require(ifVersion, of: existing) }
        let backend = try writableMount(for: path).backend
        try await self.call(path) {
            let file = try await backend.openFile(at: path)
            let writer: any PendingWrite
            do {
                // What was opened is what the append adds to: it must be the version named.
                if let ifVersion, let opened = file.version, opened != ifVersion {
                    throw CofferError.changedSinceRead(path, now: try? await stat(path))
                }
                writer = try await backend.makeWrite(at: path, announcing: ExpectedWrite(
                    size: nil, modificationDate: nil, replacing: ifVersion))
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
                // (Gone meanwhile, with no version asked for: the appended file is put in its place.)
                let current = ifVersion == nil ? try? await stat(path) : try await versionedNode(path)
                if let ifVersion, let current { try Self.require(ifVersion, of: current) }
                // What it had becomes a version, where versions are kept; the rest is put in its place.
                if let current, let kept = try await keepVersion(of: current) {
                    ReplacedItems.current?.addVersion(kept)
                    ReplacedItems.current?.noteDisplaced(at: path, version: kept)
                    do {
                        try await writer.commit(conflict: .replace)
                    } catch {
                        await discardVersion(kept, of: path)
                        ReplacedItems.current?.removeVersion(kept)
                        ReplacedItems.current?.forgetDisplaced(at: path)
                        throw error
                    }
                } else {
                    try await writer.commit(conflict: .replace)
                }
            } catch {
                await writer.abort()
                throw error
            }
        }
        await indexChanged([path])
        let node = try await stat(path)
        // Journaled where what it had was kept (then an undo can put it back).
        ReplacedItems.current?.note(ChangeDraft(kind: .create, path: path, state: node.version?.description))
        return node
    }
}
