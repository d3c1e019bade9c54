import CofferCore
import Foundation
import Synchronization

/// One WebDAV write lock (RFC 4918, 6 and 9.10): who may change an item, and its members when
/// the lock is deep, until it times out or is released.
struct DAVLock: Codable, Equatable, Sendable {
    /// `opaquelocktoken:` and a random UUID.
    var token: String
    /// The item locked.
    var root: VirtualPath
    var isCollection: Bool
    /// Whether the lock covers the members of a collection, however deep (`Depth: infinity`).
    var isDeep: Bool
    var isExclusive: Bool
    /// The `DAV:owner` the client sent, as XML (its contents, each element declaring its namespace).
    var owner: String?
    /// The timeout asked for, in seconds.
    var seconds: Int
    var expires: Date

    /// Whether the lock governs `path`: it is the root, or the root's member under a deep lock.
    func covers(_ path: VirtualPath) -> Bool { root == path || (isDeep && root.contains(path)) }
}

/// The locks of WebDAV clients, kept in a file of the container so that a restarted server
/// still honours them (Windows and Finder hold a lock for as long as a document is open).
///
/// Locks bind WebDAV's requests: a write without the lock's token is `423 Locked`. Coffer's
/// other front ends do not take part in WebDAV's locking (`Decisions.md`).
final class DAVLocks: Sendable {
    /// What a lock is given when the client asks for none, and the most it is given.
    static let defaultSeconds = 3600, maximumSeconds = 7 * 24 * 3600
    /// At most this many locks are held; more are refused (503) rather than filling the file.
    static let limit = 10_000

    private let locks: Mutex<[DAVLock]>
    private let file: String?

    /// The locks in `file` (none when it is missing or unreadable); `nil` keeps them in memory only.
    init(file: String?) {
        self.file = file
        var found: [DAVLock] = []
        if let file, let data = FileManager.default.contents(atPath: file),
           let read = try? JSONDecoder().decode([DAVLock].self, from: data) {
            found = read.filter { $0.expires > Date() }
        }
        locks = Mutex(found)
    }

    /// Why a lock cannot be taken: another lock on the way conflicts, or there are too many.
    enum Refusal: Error, Equatable {
        case conflicts(with: DAVLock)
        case tooMany
    }

    /// The live locks that govern `path`.
    func covering(_ path: VirtualPath) -> [DAVLock] {
        live { $0.filter { $0.covers(path) } }
    }

    /// Takes a lock on `root`. An exclusive lock conflicts with any other lock that governs
    /// `root` or (when deep) a member of it; a shared lock only with an exclusive one.
    func lock(_ root: VirtualPath, isCollection: Bool, isDeep: Bool, isExclusive: Bool, owner: String?,
              seconds: Int) throws(Refusal) -> DAVLock {
        let made = DAVLock(token: "opaquelocktoken:" + UUID().uuidString.lowercased(), root: root, isCollection: isCollection, isDeep: isDeep,
                           isExclusive: isExclusive, owner: owner, seconds: seconds, expires: Date().addingTimeInterval(Double(seconds)))
        let outcome = live { locks -> Result<DAVLock, Refusal> in
            let overlapping = locks.filter { $0.covers(root) || (isDeep && root.contains($0.root)) }
            if let conflict = overlapping.first(where: { isExclusive || $0.isExclusive }) { return .failure(.conflicts(with: conflict)) }
            guard locks.count < Self.limit else { return .failure(.tooMany) }
            locks.append(made)
            return .success(made)
        }
        save()
        return try outcome.get()
    }

    /// Gives the lock among `tokens` that governs `path` a new timeout; `nil` when none does.
    func refresh(_ tokens: Set<String>, at path: VirtualPath, seconds: Int) -> DAVLock? {
        let refreshed = live { locks -> DAVLock? in
            guard let index = locks.firstIndex(where: { tokens.contains($0.token) && $0.covers(path) }) else { return nil }
            locks[index].seconds = seconds
            locks[index].expires = Date().addingTimeInterval(Double(seconds))
            return locks[index]
        }
        if refreshed != nil { save() }
        return refreshed
    }

    /// Releases the lock `token` when it governs `path`; whether it did.
    func unlock(_ token: String, at path: VirtualPath) -> Bool {
        let released = live { locks -> Bool in
            guard let index = locks.firstIndex(where: { $0.token == token && $0.covers(path) }) else { return false }
            locks.remove(at: index)
            return true
        }
        if released { save() }
        return released
    }

    /// Forgets the locks on `path` and on its members: the item is gone (deleted, moved away or
    /// replaced), and a lock does not follow an item (RFC 4918, 7.5).
    func forget(within path: VirtualPath) {
        let before = live { locks -> Int in
            let count = locks.count
            locks.removeAll { path.contains($0.root) }
            return count - locks.count
        }
        if before > 0 { save() }
    }

    /// The first lock that forbids changing `path` (and, with `members`, anything inside it)
    /// to a request that showed `tokens`; `nil` when the change may go ahead. Of several shared
    /// locks on one item, the token of any one of them is enough.
    func blocking(_ path: VirtualPath, members: Bool, tokens: Set<String>) -> DAVLock? {
        live { locks -> DAVLock? in
            let governing = locks.filter { $0.covers(path) || (members && path.contains($0.root)) }
            let shown = governing.filter { tokens.contains($0.token) }
            return governing.first { lock in
                !tokens.contains(lock.token) && !(lock.isExclusive == false && shown.contains { $0.root == lock.root })
            }
        }
    }

    /// The lock as `DAV:lockdiscovery` shows it (RFC 4918, 14.1).
    static func activeLock(_ lock: DAVLock) -> String {
        let remaining = max(0, Int(lock.expires.timeIntervalSinceNow.rounded(.up)))
        return "<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope>\(lock.isExclusive ? "<D:exclusive/>" : "<D:shared/>")"
            + "</D:lockscope><D:depth>\(lock.isDeep ? "infinity" : "0")</D:depth>"
            + (lock.owner.map { "<D:owner>\($0)</D:owner>" } ?? "")
            + "<D:timeout>Second-\(remaining)</D:timeout><D:locktoken><D:href>\(DAVXML.escaped(lock.token))</D:href></D:locktoken>"
            + "<D:lockroot><D:href>\(DAVXML.escaped(DAVPath.href(lock.root, isCollection: lock.isCollection)))</D:href></D:lockroot>"
            + "</D:activelock>"
    }

    /// `DAV:supportedlock`: exclusive and shared write locks.
    static let supported = "<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>"
        + "<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>"

    /// Runs `body` on the locks that have not expired (the expired ones are dropped first).
    private func live<T>(_ body: (inout [DAVLock]) -> T) -> T {
        locks.withLock { locks in
            let now = Date()
            locks.removeAll { $0.expires <= now }
            return body(&locks)
        }
    }

    /// Writes the locks to the file, whole, under a temporary name put in place at once (while
    /// holding them, so two writes never interleave).
    private func save() {
        guard let file else { return }
        locks.withLock { locks in
            guard let data = try? JSONEncoder().encode(locks) else { return }
            let temporary = file + ".partial"
            guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]) else { return }
            if rename(temporary, file) != 0 { unlink(temporary) }
        }
    }
}
