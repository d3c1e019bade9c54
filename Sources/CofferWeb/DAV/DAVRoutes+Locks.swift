import CofferCore
import CofferHTTPServer
import CofferRuntime
import FileService
import Foundation

/// WebDAV's class 2 at ``DAVRoutes``: `LOCK` and `UNLOCK`, the check every change passes, and
/// the `If` header (``DAVLocks`` keeps the locks).
extension DAVRoutes {
    /// `LOCK` (RFC 4918, 9.10): a new lock, `201` with an empty file when nothing was there
    /// (Windows locks a name before it writes it); without a body, a refresh of the lock whose
    /// token the `If` header shows.
    func lock(_ exchange: HTTPExchange, _ item: VirtualPath?, tokens: Set<String>) -> Int {
        guard let item else { return reply(exchange, 405, text: "/dav/, the collection of mounts, cannot be locked.") }
        let body: [UInt8]
        switch exchange.readBody(limit: Self.bodyLimit) {
        case .failure: return reply(exchange, 413, text: "A LOCK body is at most \(Self.bodyLimit) bytes.")
        case .success(let read): body = read
        }
        let seconds = DAVHeaders.timeout(exchange.header("Timeout"), default: DAVLocks.defaultSeconds, maximum: DAVLocks.maximumSeconds)
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }) {
            guard let refreshed = locks.refresh(tokens, at: item, seconds: seconds) else {
                return reply(exchange, 412, text: "A LOCK without a body refreshes a lock: the If header shows its token.")
            }
            return lockAnswer(exchange, 200, refreshed, headers: "")
        }
        let request: LockRequest
        do throws(DAVXML.Refusal) { request = try LockRequest(body: body) } catch {
            return reply(exchange, error == .unavailable ? 500 : 400, text: "The LOCK body: \(error)")
        }
        guard let depth = DAVHeaders.Depth(exchange.header("Depth"), default: .infinity), depth != .one else {
            return reply(exchange, 400, text: "A LOCK takes Depth: 0 or infinity.")
        }
        let session = session
        // Finder's files are locked in their own store, and made there (``DAVAppleFiles``).
        let isApple = DAVAppleFiles.holds(item)
        let (target, existing) = isApple ? (DAVPath.composed(item), apple.node(DAVPath.composed(item)) ?? (try? stat(item).get()))
            : existing(item)
        if existing == nil, let status = locked(exchange, target, creating: true, tokens: tokens) { return status }
        if existing == nil, isApple, let parent = item.parent, case .failure(let error) = stat(parent) {
            return failure(exchange, error, missingParentIsConflict: true)
        }
        let owner = request.owner.map { String(decoding: DAVDeadProperties.value(of: $0), as: UTF8.self) }
        let made: DAVLock
        do throws(DAVLocks.Refusal) {
            made = try locks.lock(target, isCollection: existing.map { $0.kind != .file } ?? false, isDeep: depth == .infinity,
                                  isExclusive: request.exclusive, owner: owner, seconds: seconds)
        } catch {
            guard case .conflicts(let other) = error else { return reply(exchange, 503, text: "Too many locks are held.") }
            return lockError(exchange, 423, "no-conflicting-lock", other)
        }
        if existing == nil, isApple {
            guard apple.write([], for: target) else {
                _ = locks.unlock(made.token, at: target)
                return reply(exchange, 507, text: "Finder's \(target.name) could not be kept.")
            }
        } else if existing == nil {
            let created = web.blocking(in: session) { () async throws(CofferError) in
                try await session.perform(WriteFile(target, bytes: [], conflict: .policy(.fail)))
            }
            if case .failure(let error) = created {
                _ = locks.unlock(made.token, at: target)
                return failure(exchange, error, missingParentIsConflict: true)
            }
        }
        return lockAnswer(exchange, existing == nil ? 201 : 200, made, headers: "Lock-Token: <\(made.token)>\r\n")
    }

    /// `UNLOCK` (9.11). The token comes in `Lock-Token`, in angle brackets, or without them as
    /// Windows sends it.
    func unlock(_ exchange: HTTPExchange, _ item: VirtualPath?) -> Int {
        guard let item, var token = exchange.header("Lock-Token")?.trimmingCharacters(in: .whitespaces), !token.isEmpty else {
            return reply(exchange, 400, text: "UNLOCK names the lock in the Lock-Token header.")
        }
        if token.hasPrefix("<") && token.hasSuffix(">") { token = String(token.dropFirst().dropLast()) }
        guard locks.unlock(token, at: item) else {
            return xml(exchange, 409, Array(("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:error xmlns:D=\"DAV:\">"
                                             + "<D:lock-token-matches-request-uri/></D:error>\n").utf8))
        }
        return reply(exchange, 204, text: "")
    }

    /// `423 Locked` when a lock forbids changing `path` (with `members`, anything inside it;
    /// `creating`, the folder that gains or loses it too) and the request did not show its
    /// token; `nil` when the change may go ahead.
    func locked(_ exchange: HTTPExchange, _ path: VirtualPath, members: Bool = false, creating: Bool = false,
                        tokens: Set<String>) -> Int? {
        var lock = locks.blocking(path, members: members, tokens: tokens)
        if lock == nil, creating, let parent = path.parent { lock = locks.blocking(parent, members: false, tokens: tokens) }
        guard let lock else { return nil }
        return lockError(exchange, 423, "lock-token-submitted", lock)
    }

    func lockError(_ exchange: HTTPExchange, _ status: Int, _ condition: String, _ lock: DAVLock) -> Int {
        let href = DAVXML.escaped(DAVPath.href(lock.root, isCollection: lock.isCollection))
        return xml(exchange, status, Array(("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:error xmlns:D=\"DAV:\"><D:\(condition)>"
                                            + "<D:href>\(href)</D:href></D:\(condition)></D:error>\n").utf8))
    }

    func lockAnswer(_ exchange: HTTPExchange, _ status: Int, _ lock: DAVLock, headers: String) -> Int {
        let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:prop xmlns:D=\"DAV:\"><D:lockdiscovery>"
            + DAVLocks.activeLock(lock) + "</D:lockdiscovery></D:prop>\n"
        return exchange.answer(status, Array(body.utf8), type: "application/xml; charset=utf-8",
                               headers: headers + "Cache-Control: no-store\r\n")
    }

    /// Whether the `If` header holds for the request's item: lock tokens are compared with the
    /// locks that govern each item it names, entity tags with the file's version.
    func holds(_ condition: DAVIfHeader, for item: VirtualPath?) -> Bool {
        let locks = locks, served = access.served
        return condition.holds(for: item, item: { url -> VirtualPath?? in
            do throws(DAVPath.Problem) { return .some(try DAVPath.destination(url, isServed: served.isNamed(by:))) } catch { return .none }
        }, tokens: { Set(locks.covering($0).map(\.token)) }, etag: { path in
            (try? stat(path).get()).flatMap(DAVProperties.etag(of:))
        })
    }
}
