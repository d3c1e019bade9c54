import CofferCore
import CofferRuntime
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What a browser holds instead of the access token.
///
/// Browsers send a cookie of 127.0.0.1 to every port of it, so the cookie must not be the
/// token: it is named for the port (`coffer_8790`: two servers keep theirs apart) and holds a
/// key derived from the token and the port (HMAC-SHA-256), which lets in this server only, and
/// from which the token cannot be learnt. The same token and port give the same key, so a
/// page survives the server's restart; `--new-token` changes both.
struct BrowserKey {
    let cookieName: String
    let value: String

    init(token: String, port: Int) throws(CofferError) {
        cookieName = "coffer_\(port)"
        value = Digest.hex(try Digest.hmacSHA256(key: Array(token.utf8), Array("coffer serve browser key, port \(port)".utf8)))
    }
}

/// Addresses that let a browser in once (`/?once=CODE`), for `--open`: the code is traded for
/// the cookie at the first use and is worth nothing after it, or after two minutes.
final class OneTimeCodes: Sendable {
    private let codes = Mutex<[String: ContinuousClock.Instant]>([:])
    static let lifetime: Duration = .seconds(120)

    func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let code = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        codes.withLock { codes in
            let now = ContinuousClock.now
            codes = codes.filter { $0.value > now }
            codes[code] = now + Self.lifetime
        }
        return code
    }

    /// Whether `code` lets in now; it never does again.
    func redeem(_ code: String) -> Bool {
        codes.withLock { codes in
            guard let expiry = codes.removeValue(forKey: code) else { return false }
            return expiry > ContinuousClock.now
        }
    }
}

/// The file `--open` hands the browser, as Jupyter does: a page readable by its owner only
/// that sends the browser to a one-time address, so neither the token nor a usable address
/// appears in the opener's arguments (`/proc/PID/cmdline` is readable by every local user).
enum RedirectFile {
    /// Writes it in `folder` (the user's runtime folder, or the container's AppData) and
    /// returns its path.
    static func make(address: String, port: Int, in folder: String) throws(CofferError) -> String {
        let path = folder + "/coffer-serve-\(port).html"
        let escaped = ShareText.escape(address)
        let page = """
            <!DOCTYPE html>
            <html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=\(escaped)">
            <title>Coffer</title></head>
            <body><p><a href="\(escaped)">Open Coffer</a></p></body></html>

            """
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw CofferError(.ioError, detail: "the page that opens the browser cannot be written") }
        defer { close(fd) }
        let bytes = Array(page.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            unlink(path)
            throw CofferError(.ioError, detail: "the page that opens the browser cannot be written")
        }
        return path
    }

    /// The user's runtime folder (`$XDG_RUNTIME_DIR`, which only they can enter) when there
    /// is one, else `fallback`.
    static func folder(fallback: String) -> String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            var info = stat()
            if lstat(runtime, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(),
               info.st_mode & 0o077 == 0 {
                return runtime
            }
        }
        return fallback
    }
}
