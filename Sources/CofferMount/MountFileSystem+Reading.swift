import CCofferFUSE
import CofferCore
import FileService
import Foundation

/// Looking up, reading attributes, listing folders and reading files.
extension MountFileSystem {
    func lookup(_ request: OpaquePointer, parent: UInt64, name: String) {
        let path = child(parent, name)
        switch path.flatMap(node(at:)) {
        case .success(let node): replyEntry(request, node)
        case .failure(let error):
            // A new file of other storage is there once made, though not yet sent.
            if error.kind == .noSuchFile, case .success(let path) = path {
                let number = table.lookUp(.path(path))
                if var facts = handles(of: number).firstValue({ $0.isUnsentCopy ? Self.openAttributes($0) : nil }) {
                    facts.st_ino = ino_t(number)
                    if coffer_fuse_reply_entry(request, number, 0, &facts, options.attributeTimeout, options.attributeTimeout) != 0 {
                        table.forget(number, 1)
                    }
                    return
                }
                table.forget(number, 1)
            }
            reply(request, error)
        }
    }

    func getattr(_ request: OpaquePointer, ino: UInt64, fh: UInt64) {
        // A file still open after it was deleted or replaced is described by what is open; so
        // is a copy with changes not yet sent to its storage.
        let open = handle(fh).map { [$0] } ?? (table.isAttached(ino) ? handles(of: ino).filter(\.isUnsentCopy) : handles(of: ino))
        if var facts = open.firstValue(Self.openAttributes) {
            facts.st_ino = ino_t(ino)
            coffer_fuse_reply_attr(request, &facts, options.attributeTimeout)
            return
        }
        if !table.isAttached(ino), ino != 1 { return coffer_fuse_reply_err(request, ENOENT).ignored }
        switch table.item(ino) {
        case nil: coffer_fuse_reply_err(request, ENOENT)
        case .mounts?:
            var facts = mountsFolderAttributes()
            coffer_fuse_reply_attr(request, &facts, options.attributeTimeout)
        case .path(let path)?:
            switch node(at: path) {
            case .success(let node):
                var facts = attributes(node, number: ino)
                coffer_fuse_reply_attr(request, &facts, options.attributeTimeout)
            case .failure(let error): reply(request, error)
            }
        }
    }

    func readlink(_ request: OpaquePointer, ino: UInt64) {
        guard let path = table.path(ino) else { return coffer_fuse_reply_err(request, ENOENT).ignored }
        switch node(at: path) {
        case .success(let node):
            // Only a link that stays inside its mount is shown: one that leads out is refused
            // here as everywhere in Coffer (the kernel would follow it out of the sandbox).
            guard node.special == .symbolicLink, let target = node.linkTarget else { return coffer_fuse_reply_err(request, EINVAL).ignored }
            guard path.linkStaysInside(target) else { return coffer_fuse_reply_err(request, EACCES).ignored }
            coffer_fuse_reply_readlink(request, target)
        case .failure(let error): reply(request, error)
        }
    }

    // MARK: Folders

    func opendir(_ request: OpaquePointer, ino: UInt64) {
        if case .mounts? = table.item(ino) { return replyOpen(request, OpenHandle(ino: ino, .mounts), directIO: false) }
        // (A folder deleted or replaced since is not listed: its path names something else now.)
        guard let path = table.path(ino) else { return coffer_fuse_reply_err(request, ENOENT).ignored }
        let session = session
        let pending = pending
        switch run({ () async throws(CofferError) in try await session.perform(OpenFolder(path)) }) {
        case .success(let folder):
            let window = FolderWindow(folder, shows: { !pending.hides(path.appending(trustedName: $0.name)) },
                                      fetch: { [unowned self] folder, count throws(CofferError) in
                                          try run { () async throws(CofferError) in try await folder.next(count) }.get()
                                      },
                                      unsent: { [unowned self] in unsentFiles(in: path) })
            replyOpen(request, OpenHandle(ino: ino, .folder(window)), directIO: false)
        case .failure(let error): reply(request, error)
        }
    }

    /// The files of `folder` open as copies with changes not yet sent to their storage (S3):
    /// shown in its listing as they are now, new ones included.
    private func unsentFiles(in folder: VirtualPath) -> [OpenedFolder.Item] {
        openCopies().compactMap { copy -> OpenedFolder.Item? in
            let path = copy.destination
            guard copy.hasUnsentChanges, path.parent == folder, !pending.hides(path) else { return nil }
            return OpenedFolder.Item(entry: FolderEntry(name: path.name, kind: .file, isHidden: path.name.hasPrefix(".")))
        }
    }

    /// An entry of an open folder as `readdir` answers it.
    private typealias ListedEntry = (name: String, item: InodeTable.Item?, kind: FolderEntry.Kind, node: FileNode?)

    /// Up to `count` entries of the open folder `fh` from index `start` on: "." and ".." first,
    /// then the folder's, read as the kernel gets to them (``FolderWindow``); `nil` for a handle
    /// that is not an open folder.
    private func listed(_ fh: UInt64, from start: Int, count: Int) -> Result<[ListedEntry], CofferError>? {
        guard let handle = handle(fh) else { return nil }
        let dots: [ListedEntry] = [(".", nil, .folder, nil), ("..", nil, .folder, nil)]
        let leading = Array(dots.dropFirst(min(start, 2)).prefix(count))
        switch handle.current {
        case .folder(let window)?:
            guard case .path(let folder)? = table.item(handle.ino) else { return nil }
            return Result { () throws(CofferError) -> [ListedEntry] in
                let entries = try window.entries(from: max(0, start - 2), count: count - leading.count, restarting: start == 0)
                return leading + entries.map { ($0.name, .path(folder.appending(trustedName: $0.name)), $0.entry.kind, $0.node) }
            }
        case .mounts?:
            let shown = mounts.dropFirst(max(0, start - 2)).prefix(count - leading.count)
            return .success(leading + shown.map { ($0, .path(.root(of: $0)), .folder, nil) })
        default: return nil
        }
    }

    func readdir(_ request: OpaquePointer, ino: UInt64, size: Int, offset: Int64, fh: UInt64, plus: Bool) {
        let start = Int(max(0, offset))
        let capacity = min(size, 1 << 20)
        // The part that can fit (with attributes, its items are read in one batch).
        guard let listed = listed(fh, from: start, count: max(1, capacity / 96)) else {
            return coffer_fuse_reply_err(request, EBADF).ignored
        }
        let part: [ListedEntry]
        switch listed {
        case .success(let entries): part = entries
        case .failure(let error): return reply(request, error)
        }
        guard !part.isEmpty else { return coffer_fuse_reply_buf(request, nil, 0).ignored }
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        var used = 0
        var counted: [UInt64] = []
        var nodes: [InodeTable.Item: FileNode] = [:]
        if plus {
            // Items the listing gave (S3's pages) are used as they are; the others are read together.
            for entry in part { if let item = entry.item, let node = entry.node { nodes[item] = node } }
            let paths = part.compactMap { entry -> VirtualPath? in
                if entry.node == nil, case .path(let path)? = entry.item { return path }
                return nil
            }
            let session = session
            if !paths.isEmpty,
               case .success(let found) = run({ () async throws(CofferError) in try await session.perform(StatItems(paths)) }) {
                for node in found.compactMap({ $0 }) { nodes[.path(node.path)] = node }
            }
        }
        // Files open with changes not yet sent are described by what is open (as getattr does).
        let unsent = plus ? Set(allHandles().filter(\.isUnsentCopy).map(\.ino)) : []
        for (index, entry) in zip(start..., part) {
            let remaining = capacity - used
            let next = Int64(index + 1)
            var written: Int
            if plus, let item = entry.item, let facts = describe(item, nodes[item], unsent: unsent) {
                let number = facts.number
                var facts = facts.stat
                written = entry.name.withCString {
                    coffer_fuse_add_direntry_plus(request, buffer + used, remaining, $0, number, 0, &facts,
                                                  options.attributeTimeout, options.attributeTimeout, next)
                }
                if written > remaining { table.forget(number, 1) } else { counted.append(number) }
            } else {
                var facts = stat()
                facts.st_ino = ino_t(entry.item.map(table.shownNumber) ?? ino)
                facts.st_mode = entry.kind == .folder ? S_IFDIR : S_IFREG
                written = entry.name.withCString {
                    plus
                        ? coffer_fuse_add_direntry_plus(request, buffer + used, remaining, $0, 0, 0, &facts, 0, 0, next)
                        : coffer_fuse_add_direntry(request, buffer + used, remaining, $0, &facts, next)
                }
            }
            if written > remaining { break }
            used += written
        }
        // The kernel that stopped waiting learned none of the names counted.
        if coffer_fuse_reply_buf(request, buffer, used) != 0 { for number in counted { table.forget(number, 1) } }
    }

    /// The attributes `readdirplus` gives `item` (looked up, so counted: the caller forgets it
    /// again if the entry does not fit), from an open copy not yet sent or from `node`; `nil`
    /// when neither is known.
    private func describe(_ item: InodeTable.Item, _ node: FileNode?, unsent: Set<UInt64>) -> (number: UInt64, stat: stat)? {
        let open = unsent.isEmpty ? nil : table.existingNumber(item).flatMap { number in
            unsent.contains(number) ? handles(of: number).firstValue { $0.isUnsentCopy ? Self.openAttributes($0) : nil } : nil
        }
        guard open != nil || node != nil else { return nil }
        let number = table.lookUp(item)
        guard var facts = open else { return (number, attributes(node!, number: number)) }
        facts.st_ino = ino_t(number)
        return (number, facts)
    }

    // MARK: Replies

    /// Answers with the entry of `node`, counting the kernel's lookup.
    func replyEntry(_ request: OpaquePointer, _ node: FileNode) {
        let number = table.lookUp(.path(node.path))
        var facts = attributes(node, number: number)
        if coffer_fuse_reply_entry(request, number, 0, &facts, options.attributeTimeout, options.attributeTimeout) != 0 {
            table.forget(number, 1)
        }
    }

    /// Answers an open with a new handle for `handle` (closed again when the kernel did not
    /// take it).
    ///
    /// For a file (`decidingCache`), the kernel keeps what it read from one open to the next when
    /// the file is as it was then, or as the mount's own writes left it (``cacheStamp(_:_:)``);
    /// otherwise the open drops it, and once the kernel has taken the answer its pages stand for
    /// what the file shows now. That is decided after the handle is open, so that opens of two
    /// files under one number at once see each other. Changes made elsewhere while it is open
    /// are sent by the ``KernelNotifier``; a change of size the kernel sees drops its pages too.
    func replyOpen(_ request: OpaquePointer, _ handle: OpenHandle, directIO: Bool, decidingCache: Bool = false) {
        replyOpen(request, handle, number: open(handle), directIO: directIO, decidingCache: decidingCache)
    }

    /// Answers an open with `handle`, already open as `number`.
    func replyOpen(_ request: OpaquePointer, _ handle: OpenHandle, number: UInt64, directIO: Bool, decidingCache: Bool) {
        var decision: (keep: Bool, ticket: UInt64) = (true, 0)
        var stamp: ContentStamp?
        if decidingCache, let content = handle.current {
            stamp = cacheStamp(handle.ino, content)
            decision = table.opened(handle.ino, content: stamp)
        }
        if coffer_fuse_reply_open(request, number, directIO ? 1 : 0, decision.keep ? 1 : 0) != 0 {
            close(number)
        } else if !decision.keep {
            table.dropped(handle.ino, ticket: decision.ticket, content: stamp)
        }
    }

    func reply(_ request: OpaquePointer, _ error: CofferError) {
        coffer_fuse_reply_err(request, Self.errno(error))
    }

    /// What `fstat` says of an open local file.
    static func openAttributes(_ handle: OpenHandle) -> stat? {
        var facts = stat()
        let found: Bool? = switch handle.current {
        case .reading(let reader)?: reader.withDescriptor { fstat($0, &facts) == 0 }
        case .updating(let file)?: file.withDescriptor { fstat($0, &facts) == 0 }
        default: nil
        }
        // A copy on local disk is shown as the file it stands for.
        if case .updating(let file)? = handle.current, file.isStaged { facts.st_mode = S_IFREG | 0o644 }
        return found == true ? facts : nil
    }
}

extension Int32 {
    /// For answers whose outcome changes nothing (the kernel stopped waiting).
    var ignored: Void { () }
}
