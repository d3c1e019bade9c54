import CofferCore
import Foundation

/// The name a download is saved under: the one the server suggests in `Content-Disposition`
/// (RFC 6266; `filename*` in the RFC 5987 form wins over `filename`), else the last
/// component of the URL's path, percent-decoded; then made safe for the file system.
public enum DownloadName {
    /// What a download with no usable name is called.
    public static let fallback = "download"

    /// The name for a response from `url` with this `Content-Disposition` header, if any.
    public static func suggested(contentDisposition: String?, url: String) -> String {
        let offered = contentDisposition.flatMap(fromContentDisposition) ?? fromURL(url)
        return sanitized(offered ?? "")
    }

    // MARK: Content-Disposition

    /// The file name a `Content-Disposition` value gives, or `nil` when it gives none.
    public static func fromContentDisposition(_ value: String) -> String? {
        let parameters = self.parameters(of: value)
        if let extended = parameters["filename*"], let decoded = decodeExtended(extended) { return decoded }
        return parameters["filename"]
    }

    /// A header's parameters (`attachment; filename="a b.txt"; filename*=UTF-8''a%20b.txt`),
    /// names lowercased, quoted strings unescaped. The disposition type comes first and is
    /// not a parameter.
    static func parameters(of value: String) -> [String: String] {
        var result: [String: String] = [:]
        var characters = Substring(value)
        // Skip the disposition type.
        guard let firstSemicolon = characters.firstIndex(of: ";") else { return [:] }
        characters = characters[characters.index(after: firstSemicolon)...]
        while !characters.isEmpty {
            characters = characters.drop { $0 == " " || $0 == "\t" || $0 == ";" }
            guard let equals = characters.firstIndex(of: "=") else { break }
            let name = characters[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            characters = characters[characters.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
            var parsed = ""
            if characters.first == "\"" {
                characters = characters.dropFirst()
                var escaped = false
                while let character = characters.first {
                    characters = characters.dropFirst()
                    if escaped { parsed.append(character); escaped = false; continue }
                    if character == "\\" { escaped = true; continue }
                    if character == "\"" { break }
                    parsed.append(character)
                }
                characters = characters.drop { $0 != ";" }
            } else {
                let end = characters.firstIndex(of: ";") ?? characters.endIndex
                parsed = characters[..<end].trimmingCharacters(in: .whitespaces)
                characters = characters[end...]
            }
            // The first occurrence counts (a repeated parameter is malformed: RFC 6266 §4.1).
            if !name.isEmpty, result[name] == nil { result[name] = parsed }
        }
        return result
    }

    /// An RFC 5987 `ext-value` (`UTF-8'en'%E2%82%AC%20rates`), decoded; `nil` when it is
    /// malformed or in a charset other than UTF-8 and ISO-8859-1.
    static func decodeExtended(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let charset = parts[0].lowercased()
        guard let bytes = percentDecodedBytes(parts[2]) else { return nil }
        switch charset {
        case "utf-8": return String(validating: bytes, as: UTF8.self)
        case "iso-8859-1": return String(decoding: bytes.map { UInt16($0) }, as: UTF16.self)
        default: return nil
        }
    }

    /// `%XX` escapes decoded to bytes; `nil` for a malformed escape.
    static func percentDecodedBytes(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: The URL

    /// The last non-empty component of the URL's path, percent-decoded (as UTF-8, or
    /// ISO-8859-1 bytes when it is not), or `nil` for a URL without one.
    public static func fromURL(_ url: String) -> String? {
        guard let components = URLComponents(string: url) else { return nil }
        let path = components.percentEncodedPath
        guard let last = path.split(separator: "/").last, !last.isEmpty else { return nil }
        guard let bytes = percentDecodedBytes(last) else { return String(last) }
        return String(validating: bytes, as: UTF8.self) ?? String(decoding: bytes.map { UInt16($0) }, as: UTF16.self)
    }

    // MARK: Safe names

    /// `name` made safe to save: `/` and `\` become `_`, NUL and control characters are
    /// dropped, and so are the invisible characters that make a name read as another
    /// (`invoice‮fdp.exe` shown as `invoiceexe.pdf`): bidirectional embeddings, overrides and
    /// isolates, marks and zero-width spaces (the zero-width joiner of emoji stays); leading
    /// dots, dashes and spaces (hidden files, options) and trailing dots and spaces are
    /// removed, and a name over 255 bytes is shortened, keeping its extension. What is left
    /// empty is ``fallback``.
    public static func sanitized(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in name.precomposedStringWithCanonicalMapping.unicodeScalars {
            switch scalar.value {
            case 0x2F, 0x5C: scalars.append("_")
            case 0..<0x20, 0x7F, 0x80..<0xA0: continue
            case 0x061C, 0x180E, 0x200B, 0x200C, 0x200E, 0x200F, 0x202A...0x202E, 0x2060...0x2064, 0x2066...0x2069,
                 0xFEFF: continue
            default: scalars.append(scalar)
            }
        }
        var result = String(scalars)
        while let first = result.first, first == "." || first == "-" || first == " " { result.removeFirst() }
        while let last = result.last, last == "." || last == " " { result.removeLast() }
        if result.isEmpty { return fallback }
        return shortened(result)
    }

    /// At most ``FileName/maximumByteCount`` bytes of UTF-8, cut between characters,
    /// keeping an extension of up to 16 bytes.
    static func shortened(_ name: String) -> String {
        let limit = FileName.maximumByteCount
        guard name.utf8.count > limit else { return name }
        var stem = Substring(name)
        var ext = Substring("")
        if let dot = name.lastIndex(of: "."), dot != name.startIndex, name[dot...].utf8.count <= 16 {
            stem = name[..<dot]
            ext = name[dot...]
        }
        let kept = FileName.prefix(of: stem, fittingIn: limit - ext.utf8.count)
        return kept + ext
    }
}
