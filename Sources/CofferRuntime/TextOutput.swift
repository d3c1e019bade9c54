#if canImport(Glibc)
import Glibc
#endif

/// Buffered text output to a file descriptor (standard output or error), or to memory.
///
/// Listing 20,000 names must not cost 20,000 writes: text is gathered and written in
/// large blocks, and flushed at the end of every command.
public final class TextOutput {
    private let fd: Int32?
    private var buffer: [UInt8] = []
    /// Everything written, when capturing to memory (for tests).
    public private(set) var captured: [UInt8] = []

    /// Output to a descriptor (1 for standard output, 2 for standard error).
    public init(fd: Int32) {
        self.fd = fd
        buffer.reserveCapacity(1 << 16)
    }

    /// Output kept in memory; read it with ``text``.
    public init() { self.fd = nil }

    public static func standardOutput() -> TextOutput { TextOutput(fd: 1) }
    public static func standardError() -> TextOutput { TextOutput(fd: 2) }

    /// Whether the descriptor is a terminal.
    public var isTerminal: Bool { fd.map { isatty($0) == 1 } ?? false }

    /// The captured text, for outputs kept in memory.
    public var text: String { String(decoding: captured + buffer, as: UTF8.self) }

    public func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// `count` spaces (for aligning columns without building a string of them).
    public func write(spaces count: Int) {
        if count > 0 { buffer.append(contentsOf: repeatElement(UInt8(ascii: " "), count: count)) }
    }

    public func line(_ text: String = "") {
        write(text)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= 1 << 16 { flush() }
    }

    public func flush() {
        guard !buffer.isEmpty else { return }
        guard let fd else { captured += buffer; buffer.removeAll(keepingCapacity: true); return }
        Self.writeAll(buffer, to: fd)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes all of `bytes` to `fd`, retrying after signals; on a closed pipe or another
    /// error the rest is dropped.
    public static func writeAll(_ bytes: [UInt8], to fd: Int32) {
        _ = bytes.withUnsafeBytes { WriteAll.bytes($0, to: fd) }
    }

    deinit { flush() }
}
