import CofferCore
import CofferHTTPServer
import CofferJSONRPC
import Dispatch
import Foundation
import Synchronization

/// The bridge: JSON-RPC over a WebSocket at `/rpc`, one session per socket, served as
/// `coffer rpc` serves its clients (every method, progress, cancellation, `files/didChange`).
final class PageSocket: Sendable {
    let web: WebContext
    let access: PageAccess
    /// The open WebSockets, by their peer.
    private let sockets = Mutex<[WebSocketPeer: WebSocketConnection]>([:])
    private let clients = RPCClients()

    init(web: WebContext, access: PageAccess) {
        self.web = web
        self.access = access
    }

    /// A socket may open when its `Host` is served, its `Origin` is the page's own (a page of
    /// another site is refused, whatever cookies its browser sends), and it shows the token.
    func accepts(_ exchange: HTTPExchange, _ peer: WebSocketPeer) -> Bool {
        // (Beyond loopback the page is not served, nor its WebSocket.)
        guard !web.configuration.shareOnly, !web.isRemote, access.rules.isServed(exchange), access.rules.originAllowed(exchange) else { return false }
        guard let shown = access.shownToken(exchange, allowQuery: false), access.isCurrent(shown) else { return false }
        let socket = WebSocketConnection(peer, token: shown, maxMessageBytes: web.configuration.limits.maxMessageBytes,
                                         maxUnsentBytes: web.configuration.limits.maxPendingBytes)
        return sockets.withLock { sockets -> Bool in
            guard sockets.count < web.configuration.maxConnections else { return false }
            sockets[peer] = socket
            return true
        }
    }

    func opened(_ peer: WebSocketPeer) {
        guard let socket = sockets.withLock({ $0[peer] }) else { return }
        var rpc = RPCServer.Configuration(language: web.configuration.language, version: web.configuration.version)
        rpc.frontEnd = "web"
        // The page's users see messages, never methods or command-line options.
        rpc.hints = .none
        rpc.limits = web.configuration.limits
        guard let client = try? RPCConnection(service: web.service, connection: socket, configuration: rpc) else {
            socket.close()
            return
        }
        clients.serve(client)
    }

    func received(_ peer: WebSocketPeer, bits: Int, _ payload: UnsafeRawBufferPointer) -> Bool {
        guard let socket = sockets.withLock({ $0[peer] }) else { return false }
        let opcode = bits & 0xF
        // RFC 6455 §5.2: no extension was agreed, so a reserved bit set or a reserved opcode
        // fails the connection; so does a continuation with no message begun (§5.4).
        guard bits & 0x70 == 0 else { return false }
        switch opcode {
        case 0x8: return false  // the browser closes
        case 0x9, 0xA: return true  // ping and pong are CivetWeb's
        case 0x0, 0x1, 0x2:
            return socket.received(payload, final: bits & 0x80 != 0, continuing: opcode == 0x0)
        default:
            return false
        }
    }

    func closed(_ peer: WebSocketPeer) {
        guard let socket = sockets.withLock({ $0.removeValue(forKey: peer) }) else { return }
        socket.closedByPeer()
        // Its session and what it holds are let go on a thread of Dispatch's: CivetWeb's
        // threads have small stacks, too small for releasing a whole session.
        DispatchQueue.global().async { withExtendedLifetime(socket) {} }
    }

    /// Closes the sockets opened with a token that was replaced since.
    func closeStale() {
        for socket in sockets.withLock({ Array($0.values) }) where !access.isCurrent(socket.token) { socket.close() }
    }

    /// Ends every session: what runs is cancelled, sockets are closed.
    func stopAll() async {
        await clients.stopAll()
    }
}
