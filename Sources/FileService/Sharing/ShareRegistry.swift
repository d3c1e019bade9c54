import CofferCore
import CofferRuntime
import Foundation

/// Share links (``Share``), kept in a private JSON file (`AppData/shares.json` in a standard
/// container): made, listed and revoked by sessions; looked up and counted by the server that
/// answers them. Wrong passwords are remembered while the service runs, per share and client.
public final class ShareRegistry: ServiceFeature {
    private let store: JSONListStore<Share>
    /// Wrong share-link passwords, per share and client, while the service runs.
    let attempts = ShareAttempts()

    /// Share links kept in the JSON file at `path` (readable by its owner only).
    public init(path: String) {
        store = JSONListStore(path: path, label: "shares", isPrivate: true)
    }

    /// Shares `path` of `service`: a file, or a folder (with `upload`, as a drop box).
    func create(_ path: VirtualPath, in service: FileService, expires: Date?, password: String?, downloadLimit: Int?,
                upload: Bool) async throws(CofferError) -> Share {
        let node = try await service.stat(path)
        if node.linkTarget != nil || node.special != nil { throw CofferError(.unsupported, path: path, detail: "not a file or folder") }
        let isFolder = node.kind != .file
        if upload {
            guard isFolder else { throw CofferError(.invalidArgument, detail: "“\(path)” is a file: only a folder can take uploads") }
            _ = try service.writableMount(for: path)
        }
        if let downloadLimit, downloadLimit < 1 { throw CofferError(.invalidArgument, detail: "a download limit is at least 1") }
        if let password, password.isEmpty { throw CofferError(.invalidArgument, detail: "an empty password") }
        var hash: PasswordHash?
        if let password { hash = try await BlockingIO.run { _ throws(CofferError) in try PasswordHash(password) } }
        let share = Share(id: Share.makeID(), path: path.description, isFolder: isFolder, created: Date(), expires: expires,
                          password: hash, downloadLimit: downloadLimit, downloads: 0, allowsUpload: upload)
        try await BlockingIO.run { [store] _ throws(CofferError) in
            try store.update { (shares: inout [Share]) throws(CofferError) in shares.append(share) }
        }
        return share
    }

    /// Every share, oldest first.
    func all() async throws(CofferError) -> [Share] {
        try await BlockingIO.run { [store] _ throws(CofferError) in store.load() }
    }

    /// The share `id`, if there is one (revoked ones are gone).
    func share(_ id: String) async -> Share? {
        guard Share.isWellFormedID(id) else { return nil }
        return try? await BlockingIO.run { [store] _ throws(CofferError) in store.load().first { $0.id == id } }
    }

    /// Ends a share: its link answers 404 from the next request on.
    func revoke(_ id: String) async throws(CofferError) -> Share {
        try await BlockingIO.run { [store] _ throws(CofferError) -> Share in
            try store.update { (shares: inout [Share]) throws(CofferError) -> Share in
                guard let index = shares.firstIndex(where: { $0.id == id }) else {
                    throw CofferError(.invalidArgument, detail: "there is no share “\(id)” (shares lists them)")
                }
                return shares.remove(at: index)
            }
        }
    }

    /// Counts a finished download of share `id`, under the store's lock; returns the share as
    /// it is now (`nil` when it was revoked meanwhile).
    func countDownload(of id: String) async -> Share? {
        try? await BlockingIO.run { [store] _ throws(CofferError) -> Share? in
            try store.update { (shares: inout [Share]) throws(CofferError) -> Share? in
                guard let index = shares.firstIndex(where: { $0.id == id }) else { return nil }
                shares[index].downloads += 1
                return shares[index]
            }
        }
    }

    /// The item a visitor of `share` names by `components` (below the shared folder; none for
    /// the shared item itself): pinned to what was shared. A file share answers only for the
    /// file; in a folder share no name may be `..`, `.`, empty or hold a `/` or NUL (checked as
    /// any name is), and no item on the way may be a link, whatever it points to (inside the
    /// mount or not: a link could name a sibling the share does not cover).
    func item(_ share: Share, _ components: [String], in service: FileService) async throws(CofferError) -> FileNode {
        guard let root = share.virtualPath else { throw CofferError(.noSuchFile) }
        if !share.isFolder && !components.isEmpty { throw CofferError(.noSuchFile) }
        var path = root
        for name in components { path = try path.appending(name) }
        var walked = root
        var node = try await service.stat(root)
        for name in components {
            guard node.kind != .file, node.linkTarget == nil else { throw CofferError(.noSuchFile, path: path) }
            walked = walked.appending(trustedName: name)
            node = try await service.stat(walked)
        }
        if node.linkTarget != nil || node.special != nil { throw CofferError(.noSuchFile, path: path) }
        if components.isEmpty && (node.kind != .file) != share.isFolder { throw CofferError(.noSuchFile, path: path) }
        return node
    }
}
