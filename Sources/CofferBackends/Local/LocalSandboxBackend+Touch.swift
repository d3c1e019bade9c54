public import CofferCore
import CofferRuntime
import Foundation

extension LocalSandboxBackend: TouchingBackend {
    public func touch(_ path: VirtualPath) async throws {
        try await BlockingIO.run { _ throws(CofferError) in
            guard !path.isRoot else { throw CofferError(.invalidOperation, path: path) }
            let parent = try self.openParent(of: path)
            // Both times to now, on the entry itself (a link is touched, never followed).
            guard utimensat(parent.raw, path.name, nil, AT_SYMLINK_NOFOLLOW) == 0 else {
                throw CofferError.lastSystemError("utimensat", path: path)
            }
        }
    }
}
