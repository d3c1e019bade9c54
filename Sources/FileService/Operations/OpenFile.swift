@_spi(Engine) public import CofferCore
import CofferRuntime
#if canImport(Glibc)
import Glibc
#endif

/// Opens a file for reading in ranges, for a front end that streams it (the web page's
/// `/content` with `Range`): the node and the open file, after the one readable-file rule
/// (`FileNode`'s `requireReadableFile()`). The caller reads with
/// ``OpenedFile/read(at:upTo:)`` and closes it.
///
/// Fails with `noSuchFile` when nothing is at the path, `isADirectory` for a folder, and
/// `unsupported` for a special file (a device, a socket, a pipe).
public struct OpenFile: FileOperation {
    public static let name = "open"

    /// The file opened.
    public var path: VirtualPath

    /// Opens the file at `path` for reading.
    public init(_ path: VirtualPath) { self.path = path }

    public func run(in context: OperationContext) async throws(CofferError) -> OpenedFile {
        try await context.service.openForReading(path)
    }
}

/// A file open for reading: what it is, and its bytes in ranges. Read errors name its path.
public struct OpenedFile: Sendable {
    /// The file as it was when opened.
    public let node: FileNode
    /// The backend's open file (for an operation of the service's own modules that reads it
    /// through a descriptor, a thumbnail's).
    @_spi(Engine) public let file: any ReadableFile

    /// The size when it was opened.
    public var size: Int64 { file.size }

    /// Up to `count` bytes from `offset`; fewer at the end.
    public func read(at offset: Int64, upTo count: Int) async throws(CofferError) -> [UInt8] {
        do {
            return try await file.read(at: offset, upTo: count)
        } catch {
            throw CofferError.wrapping(error, path: node.path)
        }
    }

    /// Closes the file; later reads fail.
    public func close() async { await file.close() }

    /// Reads of this file on the caller's own thread, through a descriptor of its own, for a
    /// front end that already runs on a thread it may block (the HTTP server's): no hop to
    /// another thread per piece. `nil` for a file of storage other than this host's (S3),
    /// which is read with ``read(at:upTo:)``. The caller closes it.
    public func directReader() throws(CofferError) -> DirectFileReader? {
        guard let local = file as? any DescriptorReadableFile else { return nil }
        return DirectFileReader(descriptor: try local.openDescriptor(), path: node.path)
    }
}

/// A local file read with `pread` on the caller's thread (``OpenedFile/directReader()``);
/// it sees the file that was opened, even if renamed or replaced since.
public final class DirectFileReader: @unchecked Sendable {
    private var descriptor: Int32
    private let path: VirtualPath

    init(descriptor: Int32, path: VirtualPath) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Up to `buffer.count` bytes from `offset` into `buffer`: how many, 0 at the end.
    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(CofferError) -> Int {
        guard descriptor >= 0 else { throw CofferError(.invalidOperation, path: path) }
        while true {
            let got = pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset))
            if got >= 0 { return got }
            if errno != EINTR { throw CofferError.lastSystemError("pread", path: path) }
        }
    }

    /// Runs `body` with the open descriptor (for a call that reads it itself, such as
    /// `sendfile`; it stays this reader's, not to be closed); `nil` once closed.
    public func withDescriptor<T>(_ body: (Int32) throws -> T) rethrows -> T? {
        guard descriptor >= 0 else { return nil }
        return try body(descriptor)
    }

    /// Lets the descriptor go; later reads fail. Called again, it does nothing.
    public func close() {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
        descriptor = -1
    }

    deinit { close() }
}

extension FileService {
    /// The file at `path`, open for reading (see ``OpenFile``).
    @_spi(Engine) public func openForReading(_ path: VirtualPath) async throws(CofferError) -> OpenedFile {
        try await openForReading(try await stat(path))
    }

    /// The file `node` describes (just read by the caller), open for reading after the one
    /// readable-file rule: no second look at it first.
    @_spi(Engine) public func openForReading(_ node: FileNode) async throws(CofferError) -> OpenedFile {
        try node.requireReadableFile()
        let path = node.path
        let backend = try mount(for: path).backend
        let file = try await self.call(path) { try await backend.openFile(at: path) }
        return OpenedFile(node: node, file: file)
    }
}
