import CMagic
public import CofferCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Recognises what a file is by its content, with libmagic.
///
/// A libmagic handle is not safe to share between threads, and loading its database
/// costs a few milliseconds, so handles are kept in a small pool: each check borrows
/// one, and checks on different threads never share one.
public final class ContentSniffer: Sendable {
    /// The sniffer every part of Coffer uses.
    public static let shared = ContentSniffer()

    /// How much of a file is looked at. libmagic's own rules read well within this.
    public static let sampleSize = 256 << 10

    private let pool = Mutex<[MagicHandle]>([])

    public init() {}

    /// The MIME type libmagic sees in `bytes` (`image/png`, `text/plain`), or `nil` when the
    /// magic database cannot be loaded.
    public func mimeType(of bytes: UnsafeRawBufferPointer) -> String? {
        guard let handle = borrow() else { return nil }
        defer { giveBack(handle) }
        guard let answer = magic_buffer(handle.cookie, bytes.baseAddress, bytes.count) else { return nil }
        return String(cString: answer)
    }

    /// The MIME type of `bytes`.
    public func mimeType(of bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { mimeType(of: $0) }
    }

    /// The MIME type of a file that starts with `sample`: the type of `registry`'s whose
    /// declared content rules match, when one does (an application knows its own formats
    /// better than libmagic, and the desktop, given the same rules, agrees), else libmagic's.
    public func mimeType(of sample: [UInt8], registry: TypeRegistry) -> String? {
        registry.mimeType(matchingDeclaredMagicIn: sample) ?? mimeType(of: sample)
    }

    /// How much of a file to read for ``mimeType(of:registry:)``.
    public static func sampleSize(for registry: TypeRegistry) -> Int { max(sampleSize, registry.magicReach) }

    /// The MIME type of an open regular file, from its first bytes read with `pread` (the
    /// file position is left alone).
    func mimeType(of file: Descriptor, registry: TypeRegistry) -> String? {
        guard let sample = try? file.read(at: 0, length: Self.sampleSize(for: registry)) else { return nil }
        return mimeType(of: sample, registry: registry)
    }

    private func borrow() -> MagicHandle? {
        if let handle = pool.withLock({ $0.popLast() }) { return handle }
        return MagicHandle()
    }

    private func giveBack(_ handle: MagicHandle) {
        pool.withLock { handles in
            if handles.count < 8 { handles.append(handle) }
        }
    }
}

/// One libmagic handle with its database loaded; used by one thread at a time.
private final class MagicHandle: @unchecked Sendable {
    let cookie: magic_t

    init?() {
        guard let cookie = magic_open(coffer_magic_flags()) else { return nil }
        guard magic_load(cookie, nil) == 0 else {
            magic_close(cookie)
            return nil
        }
        self.cookie = cookie
    }

    deinit { magic_close(cookie) }
}
