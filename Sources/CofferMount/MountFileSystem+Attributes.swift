import CCofferFUSE
import CofferCore
import FileService
import Foundation

/// Extended attributes: `user.*` are Coffer's attributes of the item (what WebDAV's dead
/// properties are kept in), and `user.xdg.tags` its tags, changed as `tag` changes them. Other
/// namespaces (`security.`, `trusted.`, `system.`) are not kept (`ENOTSUP`).
extension MountFileSystem {
    func getxattr(_ request: OpaquePointer, ino: UInt64, name: String, size: Int) {
        guard let path = table.path(ino) else { return coffer_fuse_reply_err(request, ENODATA).ignored }
        guard name.hasPrefix("user.") else { return coffer_fuse_reply_err(request, ENODATA).ignored }
        switch attributes(of: path) {
        case .success(let attributes):
            guard let value = attributes[name] else { return coffer_fuse_reply_err(request, ENODATA).ignored }
            answer(request, value, size: size)
        case .failure(let error): reply(request, error)
        }
    }

    func listxattr(_ request: OpaquePointer, ino: UInt64, size: Int) {
        guard let path = table.path(ino) else { return answer(request, [], size: size) }
        switch attributes(of: path) {
        case .success(let attributes):
            answer(request, attributes.keys.sorted().flatMap { Array($0.utf8) + [0] }, size: size)
        case .failure(let error): reply(request, error)
        }
    }

    func setxattr(_ request: OpaquePointer, ino: UInt64, name: String, value: UnsafeRawBufferPointer, flags: Int32) {
        guard let path = table.path(ino) else { return coffer_fuse_reply_err(request, EROFS).ignored }
        guard name.hasPrefix("user.") else { return coffer_fuse_reply_err(request, ENOTSUP).ignored }
        notifier.noteOwn(path)
        if case .failure(let error) = sendOpenCopy(at: path) { return reply(request, error) }
        let bytes = [UInt8](value)
        let session = session
        let changed = run { () async throws(CofferError) in
            let present = try await session.perform(ReadAttributes(path))[name] != nil
            // XATTR_CREATE (1) wants a new attribute, XATTR_REPLACE (2) an existing one.
            if flags & 1 != 0 && present { throw CofferError(.fileExists, path: path) }
            if flags & 2 != 0 && !present { throw CofferError(.noSuchFile, path: path, detail: "no-attribute") }
            if name == FileTags.attribute {
                try await self.setTags(FileTags.parse(bytes), of: path)
                return
            }
            let lost = try await session.perform(ChangeAttributes(path, setting: [name: bytes]))
            if !lost.isEmpty { throw CofferError(.tooLarge, path: path, detail: name) }
        }
        switch changed {
        case .success: coffer_fuse_reply_err(request, 0)
        case .failure(let error) where error.detail == "no-attribute": coffer_fuse_reply_err(request, ENODATA)
        case .failure(let error) where error.kind == .tooLarge: coffer_fuse_reply_err(request, E2BIG)
        case .failure(let error): reply(request, error)
        }
    }

    func removexattr(_ request: OpaquePointer, ino: UInt64, name: String) {
        guard let path = table.path(ino) else { return coffer_fuse_reply_err(request, EROFS).ignored }
        guard name.hasPrefix("user.") else { return coffer_fuse_reply_err(request, ENOTSUP).ignored }
        notifier.noteOwn(path)
        if case .failure(let error) = sendOpenCopy(at: path) { return reply(request, error) }
        let session = session
        let removed = run { () async throws(CofferError) -> Bool in
            guard try await session.perform(ReadAttributes(path))[name] != nil else { return false }
            if name == FileTags.attribute {
                try await self.setTags([], of: path)
            } else {
                _ = try await session.perform(ChangeAttributes(path, removing: [name]))
            }
            return true
        }
        switch removed {
        case .success(true): coffer_fuse_reply_err(request, 0)
        case .success(false): coffer_fuse_reply_err(request, ENODATA)
        case .failure(let error): reply(request, error)
        }
    }

    private func attributes(of path: VirtualPath) -> Result<UserAttributes, CofferError> {
        let session = session
        return run { () async throws(CofferError) -> UserAttributes in
            do throws(CofferError) {
                return try await session.perform(ReadAttributes(path))
            } catch where error.kind == .unsupported {
                return [:]   // a mount that keeps none has none
            }
        }
    }

    /// Gives the item exactly `tags`, through ``TagItems`` (every tag checked as `tag` checks it).
    private func setTags(_ tags: [String], of path: VirtualPath) async throws(CofferError) {
        let present = try await session.perform(ReadTags(path))
        let outcome = try await session.perform(TagItems([path], adding: tags.filter { !present.contains($0) },
                                                         removing: present.filter { !tags.contains($0) }))
        if case .failure(let error)? = outcome.first?.tags { throw error }
    }

    /// Answers a `getxattr` or `listxattr`: the size when asked with 0, else the bytes, or
    /// `ERANGE` when they do not fit.
    private func answer(_ request: OpaquePointer, _ bytes: [UInt8], size: Int) {
        if size == 0 { return coffer_fuse_reply_xattr(request, bytes.count).ignored }
        guard bytes.count <= size else { return coffer_fuse_reply_err(request, ERANGE).ignored }
        _ = bytes.withUnsafeBytes { coffer_fuse_reply_buf(request, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
    }
}
