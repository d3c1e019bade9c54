public import Foundation

/// The one error type of Coffer.
///
/// Every failure has a stable ``Kind`` (what front ends and clients switch on), the
/// virtual path it concerns, and the underlying cause kept for logs and debugging.
/// What a person reads is decided in one place, ``CofferError/userMessage(in:hints:)``;
/// no message ever includes a host path of the container.
public struct CofferError: Error, Sendable, CustomStringConvertible {
    /// A stable identifier of what went wrong.
    ///
    /// A struct around a private enum, so kinds can be added without breaking
    /// exhaustive switches in applications.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Code: String, CaseIterable {
            case noSuchFile, fileExists, notADirectory, isADirectory, directoryNotEmpty
            case noPermission, outOfSpace, corruptFile, invalidName, outsideSandbox
            case readOnly, cancelled, unsupported, invalidOperation, ioError
            case unknownMount, damagedContainer, invalidArgument
            case typeNotAllowed, staleBookmark, hostAccessDenied, tooLarge, notFoundUpload
            case changedSinceRead, notEncodable
        }
        fileprivate let code: Code

        /// The item does not exist (`ENOENT`).
        public static let noSuchFile = Kind(code: .noSuchFile)
        /// Something with that name is already there (`EEXIST`).
        public static let fileExists = Kind(code: .fileExists)
        /// A folder was expected (`ENOTDIR`).
        public static let notADirectory = Kind(code: .notADirectory)
        /// A file was expected but this is a folder (`EISDIR`).
        public static let isADirectory = Kind(code: .isADirectory)
        /// The folder is not empty (`ENOTEMPTY`).
        public static let directoryNotEmpty = Kind(code: .directoryNotEmpty)
        /// The system refused access (`EACCES`, `EPERM`).
        public static let noPermission = Kind(code: .noPermission)
        /// The disk or quota is full (`ENOSPC`, `EDQUOT`).
        public static let outOfSpace = Kind(code: .outOfSpace)
        /// The content could not be read as expected.
        public static let corruptFile = Kind(code: .corruptFile)
        /// The name has `/` or NUL, is `.`/`..`, empty, or longer than 255 bytes.
        public static let invalidName = Kind(code: .invalidName)
        /// The path would leave its mount (a `..` above the root, a link pointing out).
        public static let outsideSandbox = Kind(code: .outsideSandbox)
        /// The mount does not accept changes (`EROFS` or a read-only mount).
        public static let readOnly = Kind(code: .readOnly)
        /// The caller cancelled the operation; nothing half-done was left.
        public static let cancelled = Kind(code: .cancelled)
        /// The item or backend does not support this (a link, a FIFO, a device).
        public static let unsupported = Kind(code: .unsupported)
        /// The request makes no sense for these items (a folder into itself).
        public static let invalidOperation = Kind(code: .invalidOperation)
        /// A read or write failed at the device (`EIO`) or for another system reason.
        public static let ioError = Kind(code: .ioError)
        /// No mount has that name.
        public static let unknownMount = Kind(code: .unknownMount)
        /// A part of the container that must be a folder is something else.
        public static let damagedContainer = Kind(code: .damagedContainer)
        /// A command or request was given arguments it cannot use.
        public static let invalidArgument = Kind(code: .invalidArgument)

        /// The item's type (by its content, not only its name) is not among those allowed.
        public static let typeNotAllowed = Kind(code: .typeNotAllowed)
        /// A bookmarked host file was deleted or replaced since it was opened.
        public static let staleBookmark = Kind(code: .staleBookmark)
        /// The front end may not use this host path (outside the folders allowed at start).
        public static let hostAccessDenied = Kind(code: .hostAccessDenied)

        /// The data is larger than this request may carry (an inline write, an upload chunk).
        public static let tooLarge = Kind(code: .tooLarge)
        /// No upload in progress has that identifier (finished, aborted, or expired).
        public static let notFoundUpload = Kind(code: .notFoundUpload)
        /// A conditional save (`ifVersion`) found the file changed, deleted or replaced since
        /// the version it names was read; nothing was written.
        public static let changedSinceRead = Kind(code: .changedSinceRead)
        /// Text has a character the encoding it is to be written in cannot hold; the detail
        /// is the line it is on. Nothing was written.
        public static let notEncodable = Kind(code: .notEncodable)

        /// Every kind, for documentation and tests.
        public static var allKinds: [Kind] { Code.allCases.map(Kind.init(code:)) }

        /// The stable name, as used in RPC `data.kind` (`"noSuchFile"`).
        public var identifier: String { code.rawValue }
        public var description: String { identifier }

        /// The kind with this stable name.
        public init?(identifier: String) {
            guard let code = Code(rawValue: identifier) else { return nil }
            self.code = code
        }

        fileprivate init(code: Code) { self.code = code }
    }

    /// What went wrong, stably: what programs switch on.
    public var kind: Kind
    /// The virtual path the failure concerns, if any.
    public var path: VirtualPath?
    /// A short machine-oriented detail (`"too-long"` for names, the offending text of a path).
    public var detail: String?
    /// The system error number behind the failure, if there was one.
    public var errno: Int32?
    /// The underlying error, kept for logs.
    public var underlying: (any Error & Sendable)?

    /// An error of `kind` about `path`.
    public init(_ kind: Kind, path: VirtualPath? = nil, detail: String? = nil,
                errno: Int32? = nil, underlying: (any Error & Sendable)? = nil) {
        self.kind = kind
        self.path = path
        self.detail = detail
        self.errno = errno
        self.underlying = underlying
    }

    public var description: String {
        var text = "CofferError.\(kind)"
        if let path { text += " \(path)" }
        if let detail { text += " (\(detail))" }
        if let errno { text += " errno \(errno)" }
        return text
    }
}

extension CofferError {
    /// This error naming `path` instead of what it named (nothing, or a host detail).
    public func naming(_ path: VirtualPath) -> CofferError {
        var renamed = self
        renamed.path = path
        return renamed
    }

    /// This error naming `path` when it named something in `mount`, an area (the export
    /// stage, the uploads) the caller never sees.
    public func naming(_ path: VirtualPath, insteadOf mount: String) -> CofferError {
        guard self.path?.mount == mount else { return self }
        var renamed = self
        renamed.path = path
        return renamed
    }

    /// This error naming what the user asked for when it named something inside a hidden
    /// partial (``PartialName``): the item at `destination` that partial was becoming, or
    /// the same item inside it (`…/.coffer-partial-…/b/c.txt` becomes `destination/b/c.txt`).
    public func namingPartial(as destination: VirtualPath) -> CofferError {
        guard let path, let index = path.components.firstIndex(where: PartialName.isPartial) else { return self }
        var renamed = self
        renamed.path = path.components[(index + 1)...].reduce(destination) { $0.appending(trustedName: $1) }
        return renamed
    }

    /// The detail of a ``Kind/readOnly`` error from storage the system will not write (`EROFS`).
    public static let readOnlyStorage = "read-only-storage"

    /// Wraps any error as a `CofferError`, keeping Coffer's own and turning
    /// `CancellationError` into ``Kind/cancelled``; any other becomes ``Kind/ioError`` about
    /// `path`, its description the detail.
    public static func wrapping(_ error: any Error, path: VirtualPath? = nil) -> CofferError {
        switch error {
        case let error as CofferError:
            return error
        case is CancellationError:
            return CofferError(.cancelled, path: path)
        default:
            return CofferError(.ioError, path: path, detail: String(describing: error))
        }
    }
}

extension CofferError {
    /// A conditional save refused: the item at `path` is no longer the version that was read.
    /// `current` is what is there now (its modification time is what the message names), or
    /// `nil` when nothing is: then the detail is `deleted`.
    public static func changedSinceRead(_ path: VirtualPath?, now current: FileNode?) -> CofferError {
        CofferError(.changedSinceRead, path: path, detail: current.map { changeTime($0.modificationDate) } ?? "deleted")
    }

    /// The same for a host file, named in the message as `host:/NAME` by its last component
    /// (never by its folders): `modified` is its modification time now, `nil` when it is gone.
    public static func changedSinceRead(hostFileNamed name: String, modified: Date?) -> CofferError {
        let path = try? VirtualPath.root(of: "host").appending(name)
        return CofferError(.changedSinceRead, path: path, detail: modified.map(changeTime) ?? "deleted")
    }

    /// When a file changed, as the message shows it: the local date and time to the second.
    static func changeTime(_ date: Date) -> String { Timestamp.local(date, separator: " ") }
}
