public import CofferCore
import CofferRuntime
import Synchronization

extension S3Backend: PagedListingBackend {
    /// The folder's listing a `ListObjectsV2` page (1,000 keys) at a time; the first is read here.
    public func folderPages(at path: VirtualPath) async throws -> any FolderPages {
        let pages = S3FolderPages(path, in: self)
        try await pages.readFirst()
        return pages
    }
}

/// A folder of a bucket listed as a program reads it: a request for each page when the one
/// before has been taken, so the first entries come after one request and at most a page of
/// items is held.
final class S3FolderPages: FolderPages {
    private struct State {
        var listing: S3Backend.FolderListing
        /// The first page, read when the folder was opened and not yet taken.
        var first: [FileNode]?
    }

    private let backend: S3Backend
    private let state: Mutex<State>
    /// Keys a page asks for (1,000, S3's most; fewer in tests).
    private let pageSize: Int

    init(_ path: VirtualPath, in backend: S3Backend, pageSize: Int = 1_000) {
        self.backend = backend
        self.pageSize = pageSize
        state = Mutex(State(listing: S3Backend.FolderListing(path, in: backend)))
    }

    /// Reads the first page: a folder with nothing under it (not even its marker) is not there.
    func readFirst() async throws(CofferError) {
        let items = try await read()
        let listing = state.withLock { $0.listing }
        if !listing.sawAnything && !listing.path.isRoot { throw CofferError(.noSuchFile, path: listing.path) }
        state.withLock { $0.first = items }
    }

    func nextPage() async throws -> [FileNode] {
        if let first = state.withLock({ state in defer { state.first = nil }; return state.first }), !first.isEmpty {
            return first
        }
        // A page may show nothing (a page of partial uploads' names): the next is read then.
        while !state.withLock({ $0.listing.ended }) {
            let items = try await read()
            if !items.isEmpty { return items }
        }
        return []
    }

    /// The next page's items.
    private func read() async throws(CofferError) -> [FileNode] {
        let (folder, continuation) = state.withLock { ($0.listing.folder, $0.listing.continuation) }
        let client = backend.client, pageSize = pageSize
        let page = try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in
            try client.list(prefix: folder, continuation: continuation, maxKeys: pageSize)
        }
        return state.withLock { $0.listing.nodes(of: page) }
    }
}
