public import CofferCore
import Foundation

/// The rules every HTTP front end answers by, kept once.
public enum HTTPRules {
    /// The status an error of `kind` is answered with: the client's fault (4xx) where it is,
    /// a taken name or a changed file the client's to settle (409: a tus client tries a 5xx
    /// again, for nothing), a full disk 507, anything else the server's (500).
    public static func status(for kind: CofferError.Kind) -> Int {
        switch kind {
        case .noSuchFile, .unknownMount: 404
        case .invalidArgument, .invalidName, .isADirectory, .unsupported, .outsideSandbox: 400
        case .noPermission, .hostAccessDenied, .readOnly: 403
        case .fileExists, .changedSinceRead: 409
        case .tooLarge: 413
        case .outOfSpace: 507
        default: 500
        }
    }

    /// One range of `bytes=FIRST-LAST`, `bytes=FIRST-` or `bytes=-SUFFIX` (RFC 9110 §14.1.2)
    /// of a body of `size` bytes; `nil` when it cannot be satisfied. Several ranges are
    /// answered as the first.
    public static func byteRange(_ header: String, size: Int64) -> (first: Int64, last: Int64)? {
        guard header.hasPrefix("bytes="), size > 0 else { return nil }
        let first = header.dropFirst(6).split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let parts = first.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            guard !parts[1].isEmpty, parts[1].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isNumber) else { return nil }
            let suffix = Int64(parts[1]) ?? Int64.max
            guard suffix > 0 else { return nil }
            return (max(0, size - suffix), size - 1)
        }
        guard let start = Int64(parts[0]), start < size else { return nil }
        guard !parts[1].isEmpty else { return (start, size - 1) }
        // A last position past the end (even past what 64 bits hold) means the end (§14.1.2).
        guard parts[1].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isNumber) else { return nil }
        let last = Int64(parts[1]) ?? Int64.max
        guard last >= start else { return nil }
        return (start, min(last, size - 1))
    }

    /// `filename="…"` in ASCII and `filename*=UTF-8''…` (RFC 6266) for the real name.
    public static func dispositionName(_ name: String) -> String {
        let ascii = String(name.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" ? Character($0) : "_" })
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let encoded = name.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ascii
        return "filename=\"\(ascii)\"; filename*=UTF-8''\(encoded)"
    }

    /// The client a request comes from: the socket's address, or — only when the server was
    /// told to trust a reverse proxy the user set up — the first of `X-Forwarded-For`.
    public static func client(of exchange: HTTPExchange, trustingForwardedFor: Bool) -> String {
        if trustingForwardedFor, let forwarded = exchange.forwardedFor,
           let first = forwarded.split(separator: ",").first?.trimmingCharacters(in: .whitespaces), !first.isEmpty {
            return first
        }
        return exchange.remoteAddress
    }
}
