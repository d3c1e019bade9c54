/// Rules for a single file or folder name, shared by every backend.
///
/// A name may hold any Unicode text except `/` and NUL, may not be `.` or `..`,
/// and is at most 255 bytes of UTF-8 (the ext4 and most POSIX limits). Names are
/// kept byte for byte: Coffer never normalises NFC/NFD, so two names that look
/// alike but are encoded differently stay two different files, as on disk.
public enum FileName {
    /// The longest name, in UTF-8 bytes.
    public static let maximumByteCount = 255

    /// Why a name was refused, or `nil` if it is acceptable.
    public static func problem(with name: String) -> Problem? {
        if name.isEmpty { return .empty }
        if name == "." || name == ".." { return .dotName }
        var count = 0
        for byte in name.utf8 {
            if byte == 0 { return .containsNUL }
            if byte == UInt8(ascii: "/") { return .containsSlash }
            count += 1
        }
        if count > maximumByteCount { return .tooLong }
        if PartialName.isPartial(name) { return .reserved }
        return nil
    }

    /// The longest start of `text` that fits in `limit` bytes of UTF-8, cut between characters:
    /// how a name too long for a place is shortened (a download's, a trash ID, an S3 key's).
    public static func prefix(of text: some StringProtocol, fittingIn limit: Int) -> String {
        var kept = ""
        var bytes = 0
        for character in text {
            let size = character.utf8.count
            guard bytes + size <= limit else { break }
            kept.append(character)
            bytes += size
        }
        return kept
    }

    /// Throws ``CofferError/Kind/invalidName`` unless `name` is acceptable.
    public static func validate(_ name: String, path: VirtualPath? = nil) throws(CofferError) {
        if let problem = problem(with: name) {
            throw CofferError(.invalidName, path: path, detail: problem.rawValue)
        }
    }

    /// Why a name cannot be used; its raw value is the error's detail.
    public enum Problem: String, Sendable {
        /// `empty`: no name; `dot-name`: `.` or `..`; `nul`: it holds NUL; `slash`: it
        /// holds `/`; `too-long`: more than 255 bytes of UTF-8.
        case empty, dotName = "dot-name", containsNUL = "nul", containsSlash = "slash", tooLong = "too-long"
        /// The shape of Coffer's own unfinished results (``PartialName``).
        case reserved
    }

    /// Whether two names are the same bytes (not merely canonically equivalent).
    @inlinable
    public static func same(_ a: String, _ b: String) -> Bool {
        a.utf8.elementsEqual(b.utf8)
    }
}
