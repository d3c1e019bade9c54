public import CofferCore
#if canImport(Glibc)
import Glibc
#endif

/// Turns a failed system call into a ``CofferError``: one place decides what each errno means.
extension CofferError {
    /// The error for `code` (an errno value) from `call`, concerning `path`.
    public static func system(_ code: Int32, _ call: StaticString, path: VirtualPath?) -> CofferError {
        let kind: Kind = switch code {
        case ENOENT: .noSuchFile
        case EEXIST: .fileExists
        case ENOTEMPTY: .directoryNotEmpty
        case ENOTDIR: .notADirectory
        case EISDIR: .isADirectory
        case EACCES, EPERM: .noPermission
        case ENOSPC, EDQUOT, EFBIG: .outOfSpace
        case EROFS: .readOnly
        // A symbolic link where a folder or file was expected: Coffer never follows one.
        case ELOOP: .unsupported
        // openat2's RESOLVE_BENEATH refused a path that would leave the root.
        case EXDEV: .outsideSandbox
        case ENAMETOOLONG: .invalidName
        case EINVAL: .invalidOperation
        case ENOSYS, EOPNOTSUPP, ENXIO, ENODEV: .unsupported
        case ECANCELED: .cancelled
        default: .ioError
        }
        let detail = switch code {
        case ENAMETOOLONG: FileName.Problem.tooLong.rawValue
        // Descriptors ran out (this process's limit, or the system's): not the disk's fault.
        case EMFILE, ENFILE: CofferError.tooManyOpenFiles
        // Not a read-only mount of Coffer's (trash:) but storage the system will not write.
        case EROFS: CofferError.readOnlyStorage
        default: "\(call)"
        }
        return CofferError(kind, path: path, detail: detail, errno: code)
    }

    /// The detail of a ``CofferError/Kind/readOnly`` host folder that takes no new files
    /// (`/proc`, `/sys`).
    public static let takesNoFiles = "takes-no-files"

    /// The detail of an ``CofferError/Kind/ioError`` for `EMFILE` and `ENFILE`.
    public static let tooManyOpenFiles = "too-many-open-files"

    /// The error for the current `errno`.
    public static func lastSystemError(_ call: StaticString, path: VirtualPath?) -> CofferError {
        system(Glibc.errno, call, path: path)
    }
}
