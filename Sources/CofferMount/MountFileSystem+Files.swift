import CCofferFUSE
import CofferCore
import FileService
import Foundation

/// Opening, reading and writing files. A local file is read and written in place through a
/// descriptor of its own, on libfuse's thread (no hop per piece). A file of other storage (S3)
/// is read in ranges; opened for writing, it is a copy on local disk (``UpdatableFile/isStaged``),
/// sent to the storage whole when a descriptor of it is closed (`flush`), at `fsync`, and at
/// the latest when the last is closed — what a kill keeps from being sent, the next mount sends.
extension MountFileSystem {
    func open(_ request: OpaquePointer, ino: UInt64, flags: Int32) {
        guard let path = table.path(ino) else {
            if case .mounts? = table.item(ino) { return coffer_fuse_reply_err(request, EISDIR).ignored }
            return coffer_fuse_reply_err(request, ENOENT).ignored
        }
        // A file of other storage open for writing is one copy for every open of it meanwhile:
        // what one program writes, another reads, and a new file not yet sent opens again.
        // (The kernel empties a file with `setattr`, not with `O_TRUNC` here.)
        if let (number, handle) = openSharedCopy(of: ino) {
            return replyOpen(request, handle, number: number, directIO: false, decidingCache: true)
        }
        let session = session
        let writing = flags & O_ACCMODE != O_RDONLY
        // (Opened for writing, a file of other storage is copied whole first.)
        let size = writing ? ((try? node(at: path).get())?.size ?? 0) : 0
        let opened = run(moving: size) { () async throws(CofferError) -> OpenHandle.Content in
            if writing { return .updating(try await session.perform(OpenForUpdate(path))) }
            let file = try await session.perform(OpenFile(path))
            if let reader = try file.directReader() {
                await file.close()
                return .reading(reader)
            }
            return .remote(file)
        }
        switch opened {
        case .success(let content):
            let (number, handle) = openSharing(OpenHandle(ino: ino, content))
            replyOpen(request, handle, number: number, directIO: false, decidingCache: true)
        case .failure(let error): reply(request, error)
        }
    }

    /// What an opened file holds now, for deciding whether the kernel's pages of it stay: a
    /// copy on local disk of another storage's file is not the file the kernel read (none).
    static func stamp(of content: OpenHandle.Content) -> ContentStamp? {
        switch content {
        case .reading(let reader): reader.withDescriptor { ContentStamp(descriptor: $0) } ?? nil
        case .updating(let file): file.isStaged ? nil : file.withDescriptor { ContentStamp(descriptor: $0) }
        case .remote(let file): ContentStamp(node: file.node)
        case .folder, .mounts: nil
        }
    }

    /// After a descriptor of a file this handle wrote was closed: the pages the kernel kept of
    /// the writes stand for the file when nothing else changed it since the last of them.
    func noteWrites(of handle: OpenHandle) {
        let writes = handle.writes
        guard writes.happened, case .updating(let file)? = handle.current else { return }
        let now = Self.stamp(of: .updating(file))
        let kept = now != nil && now == writes.stamp && onlyOneFile(handle.ino, now!)
        table.wrote(handle.ino, content: kept ? now : nil)
    }

    /// What the kernel's pages of `ino` stand for once `content` is opened (the pages are kept
    /// when the record already says so: ``InodeTable/opened(_:content:)``); `nil`, so that they
    /// are dropped and nothing is recorded, when that is not known.
    func cacheStamp(_ ino: UInt64, _ content: OpenHandle.Content) -> ContentStamp? {
        guard let stamp = Self.stamp(of: content), onlyOneFile(ino, stamp) else { return nil }
        return stamp
    }

    /// Whether every open handle of `ino` reads the file `stamp` was taken of. One still open on
    /// a file since replaced (a reader of a file emptied by a truncation, say) fills the kernel's
    /// pages of the number with what that file holds: they are not kept then.
    func onlyOneFile(_ ino: UInt64, _ stamp: ContentStamp) -> Bool {
        handles(of: ino).allSatisfy { handle in
            guard let content = handle.current, let other = Self.stamp(of: content) else { return true }
            return other.identity == stamp.identity
        }
    }

    func create(_ request: OpaquePointer, parent: UInt64, name: String, flags: Int32) {
        let session = session
        let exclusive = flags & O_EXCL != 0
        let made = child(parent, name, changing: true).flatMap { path in
            clearHeldDeletion(at: path)
            return run { () async throws(CofferError) -> (FileNode?, UpdatableFile, VirtualPath) in
                let file = try await session.perform(OpenForUpdate(path, creating: true, exclusive: exclusive,
                                                                   truncating: flags & O_TRUNC != 0))
                // A copy of a new file of other storage is not in the storage until it is sent.
                if file.hasUnsentChanges { return (nil, file, path) }
                do throws(CofferError) {
                    return (try await session.perform(StatItem(path)), file, path)
                } catch {
                    file.close()
                    throw error
                }
            }
        }
        switch made {
        case .success(let (node, file, path)):
            let number = table.lookUp(.path(path))
            let opened = OpenHandle(ino: number, .updating(file))
            let handle = open(opened)
            // (Decided once the handle is open: an open of another file under the number meanwhile sees it.)
            let stamp = cacheStamp(number, .updating(file))
            let (keep, ticket) = table.opened(number, content: stamp)
            guard var facts = node.map({ attributes($0, number: number) }) ?? Self.openAttributes(opened) else {
                close(handle, discarding: true)   // (unless an open meanwhile shares it)
                table.forget(number, 1)
                return coffer_fuse_reply_err(request, EIO).ignored
            }
            facts.st_ino = ino_t(number)
            if coffer_fuse_reply_create(request, number, 0, &facts, options.attributeTimeout, options.attributeTimeout,
                                        handle, 0, keep ? 1 : 0) != 0 {
                // The program gave up: no file of its making appears later (unless an open
                // meanwhile shares the copy).
                close(handle, discarding: true)
                table.forget(number, 1)
            } else if !keep {
                table.dropped(number, ticket: ticket, content: stamp)
            }
        case .failure(let error): reply(request, error)
        }
    }

    func read(_ request: OpaquePointer, size: Int, offset: Int64, fh: UInt64) {
        guard let handle = handle(fh) else { return coffer_fuse_reply_err(request, EBADF).ignored }
        let count = min(size, 1 << 20)
        switch handle.current {
        case .reading(let reader)?:
            readLocally(request, count: count) { buffer throws(CofferError) in try reader.read(at: offset, into: buffer) }
        case .updating(let file)?:
            readLocally(request, count: count) { buffer throws(CofferError) in try file.read(at: offset, into: buffer) }
        case .remote(let file)?:
            switch run({ () async throws(CofferError) in try await file.read(at: offset, upTo: count) }) {
            case .success(let bytes): _ = bytes.withUnsafeBytes { coffer_fuse_reply_buf(request, $0.baseAddress, $0.count) }
            case .failure(let error): reply(request, error)
            }
        default: coffer_fuse_reply_err(request, EBADF)
        }
    }

    /// Reads up to `count` bytes with `body` (which may return fewer at the end) and answers.
    private func readLocally(_ request: OpaquePointer, count: Int,
                             _ body: (UnsafeMutableRawBufferPointer) throws(CofferError) -> Int) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        defer { buffer.deallocate() }
        var filled = 0
        do throws(CofferError) {
            // The kernel expects the whole size unless the file ends.
            while filled < count {
                let got = try body(UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<count]))
                if got == 0 { break }
                filled += got
            }
        } catch {
            return reply(request, error)
        }
        coffer_fuse_reply_buf(request, buffer.baseAddress, filled)
    }

    func write(_ request: OpaquePointer, data: OpaquePointer, offset: Int64, fh: UInt64) {
        guard let handle = handle(fh) else { return coffer_fuse_reply_err(request, EBADF).ignored }
        guard case .updating(let file)? = handle.current else { return coffer_fuse_reply_err(request, EBADF).ignored }
        if let path = table.path(handle.ino) { notifier.noteOwn(path) }
        do throws(CofferError) {
            // Spliced from the kernel's pages where the request came through a pipe.
            let written = try file.write(at: offset) { descriptor, offset in
                let result = coffer_fuse_write_data(data, descriptor, offset)
                if result < 0 { Glibc.errno = Int32(-result); return -1 }
                return result
            }
            handle.noteWritten(Self.stamp(of: .updating(file)))
            coffer_fuse_reply_write(request, written)
        } catch {
            reply(request, error)
        }
    }

    func fsync(_ request: OpaquePointer, dataOnly: Bool, fh: UInt64) {
        guard case .updating(let file)? = handle(fh)?.current else { return coffer_fuse_reply_err(request, 0).ignored }
        do throws(CofferError) {
            try file.synchronize(dataOnly: dataOnly)
            if let failure = send(file) { throw failure }
            coffer_fuse_reply_err(request, 0)
        } catch {
            reply(request, error)
        }
    }

    /// A descriptor of the file was closed: a copy of a file of other storage is sent, so
    /// `close(2)` reports whether it arrived.
    func flush(_ request: OpaquePointer, fh: UInt64) {
        guard let handle = handle(fh), case .updating(let file)? = handle.current else {
            return coffer_fuse_reply_err(request, 0).ignored
        }
        noteWrites(of: handle)
        guard let failure = send(file) else { return coffer_fuse_reply_err(request, 0).ignored }
        reply(request, failure)
    }

    /// The last descriptor of the file was closed: what a copy still holds unsent is sent, then
    /// the handle goes (a copy that could not be sent stays for the next mount).
    func release(_ fh: UInt64) {
        if let handle = handle(fh), case .updating(let file)? = handle.current {
            noteWrites(of: handle)
            _ = send(file)
        }
        close(fh)
    }

    /// Sends a copy's unsent changes to its storage (nothing for a local file); the error, if any.
    func send(_ file: UpdatableFile) -> CofferError? {
        guard file.hasUnsentChanges else { return nil }
        let session = session
        var facts = stat()
        let size = file.withDescriptor { fstat($0, &facts) == 0 ? Int64(facts.st_size) : 0 }
        if case .failure(let error) = run(moving: size, { () async throws(CofferError) in _ = try await session.perform(SaveUpdatedFile(file)) }) {
            return error
        }
        return nil
    }

    func fallocate(_ request: OpaquePointer, mode: Int32, offset: Int64, length: Int64, fh: UInt64) {
        guard case .updating(let file)? = handle(fh)?.current else { return coffer_fuse_reply_err(request, EBADF).ignored }
        do throws(CofferError) {
            try file.allocate(mode: mode, offset: offset, length: length)
            coffer_fuse_reply_err(request, 0)
        } catch {
            reply(request, error)
        }
    }

    func lseek(_ request: OpaquePointer, offset: Int64, whence: Int32, fh: UInt64) {
        let found: Int64? = switch handle(fh)?.current {
        case .reading(let reader)?: reader.withDescriptor { Int64(Glibc.lseek($0, off_t(offset), whence)) }
        case .updating(let file)?: file.withDescriptor { Int64(Glibc.lseek($0, off_t(offset), whence)) }
        default: nil
        }
        guard let found else { return coffer_fuse_reply_err(request, EINVAL).ignored }
        if found < 0 { return coffer_fuse_reply_err(request, Glibc.errno).ignored }
        coffer_fuse_reply_lseek(request, found)
    }
}
