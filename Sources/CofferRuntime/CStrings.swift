#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` with `strings` as C strings, valid for the call: what the C shims (libcurl's
/// headers, libvips' PNG chunks) take.
public func withCStrings<T>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) })
}

extension String {
    /// The text a C function wrote into `buffer`, up to its first NUL (a message, a path).
    public init(cBuffer buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
