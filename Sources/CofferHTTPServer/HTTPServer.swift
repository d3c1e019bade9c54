import CCivetWeb
import CofferRuntime
import Foundation

/// What answers an ``HTTPServer``'s requests: a set of routes (the web page, files, share
/// links, tus, MCP's Streamable HTTP), or several of them composed.
///
/// Every call runs on a thread with a large stack while one of CivetWeb's workers waits for
/// it; an exchange is valid only during the call it is given to.
public protocol HTTPRoutes: AnyObject, Sendable {
    /// Answers a request, writing its whole answer; returns the status sent.
    func answer(_ exchange: HTTPExchange) -> Int

    /// Whether a WebSocket may open (the request is its upgrade). Refused by default.
    func acceptsWebSocket(_ exchange: HTTPExchange, socket: WebSocketPeer) -> Bool
    /// The WebSocket accepted is open.
    func webSocketOpened(_ socket: WebSocketPeer)
    /// A frame came (its opcode with the FIN bit, 0x80); `false` closes the socket.
    func webSocketReceived(_ socket: WebSocketPeer, bits: Int, _ payload: UnsafeRawBufferPointer) -> Bool
    /// The WebSocket closed, by either side.
    func webSocketClosed(_ socket: WebSocketPeer)
}

extension HTTPRoutes {
    public func acceptsWebSocket(_ exchange: HTTPExchange, socket: WebSocketPeer) -> Bool { false }
    public func webSocketOpened(_ socket: WebSocketPeer) {}
    public func webSocketReceived(_ socket: WebSocketPeer, bits: Int, _ payload: UnsafeRawBufferPointer) -> Bool { false }
    public func webSocketClosed(_ socket: WebSocketPeer) {}
}

/// Coffer's one HTTP/1.1 and WebSocket server, on the system's CivetWeb (loaded when the
/// first server starts): every HTTP front end is a set of ``HTTPRoutes`` on it.
public final class HTTPServer: @unchecked Sendable {
    /// The port it listens on (the one chosen by the system when asked for 0).
    public let port: Int
    private let server: OpaquePointer
    private let context: UnsafeMutableRawPointer
    private var stopped = false

    /// Listens on `address` (`127.0.0.1`, `::1`, `0.0.0.0`…) and `port` (0: the system
    /// chooses) with `threads` workers (each open WebSocket and each request being answered
    /// holds one).
    /// - Throws: ``HTTPServerError`` with CivetWeb's reason (the port taken, the library missing).
    public convenience init(address: String, port: Int, threads: Int, routes: some HTTPRoutes) throws(HTTPServerError) {
        try self.init(address: address, port: port, threads: threads, routes: routes, tls: nil)
    }

    /// The same, and with `tls` every connection is HTTPS: TLS 1.2 or later, with the system's
    /// OpenSSL (loaded now), the certificate and key read before anything listens.
    /// - Throws: ``HTTPServerError`` also when OpenSSL is missing or a file cannot be used.
    public init(address: String, port: Int, threads: Int, routes: some HTTPRoutes, tls: TLSFiles?) throws(HTTPServerError) {
        let listen = address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
        let box = Unmanaged.passRetained(RoutesBox(routes))
        let handlers = coffer_web_handlers(
            request: { context, connection, request in
                LargeStack.run {
                    Int32(RoutesBox.from(context).routes.answer(HTTPExchange(connection!, request!.pointee)))
                }
            },
            ws_connect: { context, connection, request in
                LargeStack.run {
                    RoutesBox.from(context).routes.acceptsWebSocket(HTTPExchange(connection!, request!.pointee),
                                                                    socket: WebSocketPeer(connection!)) ? 0 : 1
                }
            },
            ws_ready: { context, connection in
                LargeStack.run { RoutesBox.from(context).routes.webSocketOpened(WebSocketPeer(connection!)) }
            },
            ws_data: { context, connection, bits, data, length in
                LargeStack.run {
                    RoutesBox.from(context).routes.webSocketReceived(WebSocketPeer(connection!), bits: Int(bits),
                                                                     UnsafeRawBufferPointer(start: data, count: length)) ? 1 : 0
                }
            },
            ws_closed: { context, connection in
                LargeStack.run { RoutesBox.from(context).routes.webSocketClosed(WebSocketPeer(connection!)) }
            })
        var chosen: Int32 = 0
        var error = [CChar](repeating: 0, count: 256)
        guard let server = coffer_web_start_tls(listen, Int32(threads), handlers, box.toOpaque(), tls?.certificate, tls?.key,
                                                &chosen, &error, error.count) else {
            box.release()
            throw HTTPServerError(reason: String(cBuffer: error))
        }
        self.server = server
        self.context = box.toOpaque()
        self.port = Int(chosen)
    }

    /// Stops listening, ends every connection (each open WebSocket hears
    /// ``HTTPRoutes/webSocketClosed(_:)``) and waits for the answers under way. Later calls
    /// do nothing.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        coffer_web_stop(server)
        Unmanaged<RoutesBox>.fromOpaque(context).release()
    }

    deinit { stop() }
}

/// A server's TLS identity: its certificate (with any intermediate certificates after it) and
/// its private key, as unencrypted PEM files.
public struct TLSFiles: Sendable, Hashable {
    /// The certificate chain's PEM file.
    public var certificate: String
    /// The private key's PEM file.
    public var key: String

    /// The identity in these two files.
    public init(certificate: String, key: String) { (self.certificate, self.key) = (certificate, key) }
}

/// Why a server could not start.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}

/// The routes, as CivetWeb's callbacks reach them.
private final class RoutesBox {
    let routes: any HTTPRoutes
    init(_ routes: any HTTPRoutes) { self.routes = routes }
    static func from(_ context: UnsafeMutableRawPointer?) -> RoutesBox {
        Unmanaged<RoutesBox>.fromOpaque(context!).takeUnretainedValue()
    }
}

/// An open WebSocket: CivetWeb's connection, valid from its acceptance until
/// ``HTTPRoutes/webSocketClosed(_:)``. Equal peers are the same socket.
public struct WebSocketPeer: Hashable, @unchecked Sendable {
    let connection: UnsafeMutableRawPointer

    init(_ connection: UnsafeMutableRawPointer) { self.connection = connection }

    /// Sends one message: a text (opcode 1) or binary (2) one, or a close (8).
    /// - Returns: `false` when the peer is gone.
    @discardableResult
    public func send(opcode: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        coffer_web_ws_send(connection, Int32(opcode), bytes.baseAddress, bytes.count) >= 0
    }

    /// Sends a close frame with no reason.
    public func close() { _ = coffer_web_ws_send(connection, 8, nil, 0) }

    public static func == (a: Self, b: Self) -> Bool { a.connection == b.connection }
    public func hash(into hasher: inout Hasher) { hasher.combine(UInt(bitPattern: connection)) }
}
