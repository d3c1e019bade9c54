import CCivetWeb
import CofferCore
import CofferJSONRPC
import Dispatch
import Foundation

/// The bridge: JSON-RPC over a WebSocket at `/rpc`, one session per socket, served as
/// `coffer rpc` serves its clients (every method, progress, cancellation, `files/didChange`).
extension WebHandler {
    /// A socket may open when its `Host` is served, its `Origin` is the page's own (a page of
    /// another site is refused, whatever cookies its browser sends), and it shows the token.
    func connect(_ connection: UnsafeMutableRawPointer, _ request: coffer_web_request) -> Int32 {
        let host = request.host.map { String(cString: $0) }
        guard !configuration.shareOnly, hostIsServed(host) else { return 1 }
        if let origin = request.origin.map({ String(cString: $0) }), origin.lowercased() != "http://\(host!.lowercased())" {
            return 1
        }
        guard let shown = shownToken(request, allowQuery: false), isCurrent(shown) else { return 1 }
        let socket = WebSocketConnection(connection, token: shown, maxMessageBytes: configuration.limits.maxMessageBytes,
                                         maxUnsentBytes: configuration.limits.maxPendingBytes)
        let full = sockets.withLock { sockets -> Bool in
            guard sockets.count < configuration.maxConnections else { return true }
            sockets[UInt(bitPattern: connection)] = socket
            return false
        }
        return full ? 1 : 0
    }

    func ready(_ connection: UnsafeMutableRawPointer) {
        guard let socket = sockets.withLock({ $0[UInt(bitPattern: connection)] }) else { return }
        var rpc = RPCServer.Configuration(language: configuration.language, version: configuration.version)
        rpc.frontEnd = "web"
        // The page's users see messages, never methods or command-line options.
        rpc.hints = .none
        rpc.limits = configuration.limits
        guard let client = try? RPCConnection(service: service, connection: socket, configuration: rpc) else {
            socket.close()
            return
        }
        clients.serve(client)
    }

    func data(_ connection: UnsafeMutableRawPointer, bits: Int32, _ bytes: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        guard let socket = sockets.withLock({ $0[UInt(bitPattern: connection)] }) else { return 0 }
        let opcode = bits & 0xF
        // RFC 6455 §5.2: no extension was agreed, so a reserved bit set or a reserved opcode
        // fails the connection; so does a continuation with no message begun (§5.4).
        guard bits & 0x70 == 0 else { return 0 }
        switch opcode {
        case 0x8: return 0  // the browser closes
        case 0x9, 0xA: return 1  // ping and pong are CivetWeb's
        case 0x0, 0x1, 0x2:
            let buffer = UnsafeBufferPointer(start: UnsafeRawPointer(bytes)?.assumingMemoryBound(to: UInt8.self), count: length)
            return socket.received(buffer, final: bits & 0x80 != 0, continuing: opcode == 0x0) ? 1 : 0
        default:
            return 0
        }
    }

    func closed(_ connection: UnsafeMutableRawPointer) {
        guard let socket = sockets.withLock({ $0.removeValue(forKey: UInt(bitPattern: connection)) }) else { return }
        socket.closedByPeer()
        // Its session and what it holds are let go on a thread of Dispatch's: CivetWeb's
        // threads have small stacks, too small for releasing a whole session.
        DispatchQueue.global().async { withExtendedLifetime(socket) {} }
    }

    /// Ends every session: what runs is cancelled, sockets are closed.
    func stopAll() async {
        await clients.stopAll()
    }
}
