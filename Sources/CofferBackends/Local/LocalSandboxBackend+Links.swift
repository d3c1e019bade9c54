public import CofferCore
import CofferRuntime
import Foundation

extension LocalSandboxBackend: LinkResolvingBackend {
    /// At most this many links are followed for one path (Linux's own limit).
    static let maxLinks = 40

    /// Follows the links along `path` component by component, from the root each time one is
    /// met: an absolute target must lie below the root (as given, or as `realpath` gives it), a
    /// relative one is read from the link's folder and may not climb above the root. A
    /// component that does not exist ends the walk: what follows it is kept as written (a file
    /// about to be made).
    public func resolvingLinks(_ path: VirtualPath) async throws(CofferError) -> VirtualPath {
        try await BlockingIO.run { _ throws(CofferError) in try self.followLinks(path) }
    }

    func followLinks(_ path: VirtualPath) throws(CofferError) -> VirtualPath {
        var pending = path.components[...]
        var resolved: [String] = []
        var followed = 0
        let roots = [rootPath, canonicalRootPath]
        while let name = pending.first {
            let candidate = resolved + [name]
            var info = stat()
            guard lstat(rootPath + "/" + candidate.joined(separator: "/"), &info) == 0 else {
                if errno == ENOENT || errno == ENOTDIR { return rebuilt(path, resolved + pending) }
                throw CofferError.lastSystemError("lstat", path: path)
            }
            guard (info.st_mode & S_IFMT) == S_IFLNK else {
                resolved = candidate
                pending = pending.dropFirst()
                continue
            }
            followed += 1
            guard followed <= Self.maxLinks else { throw CofferError(.unsupported, path: path, detail: "too many links") }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(rootPath + "/" + candidate.joined(separator: "/"), &buffer, buffer.count - 1)
            guard count > 0 else { throw CofferError.lastSystemError("readlink", path: path) }
            let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            var base: [String]
            var written: Substring
            if target.hasPrefix("/") {
                guard let root = roots.first(where: { target == $0 || target.hasPrefix($0 + "/") }) else {
                    throw CofferError(.outsideSandbox, path: path)
                }
                base = []
                written = target.dropFirst(root.count)
            } else {
                base = resolved
                written = target[...]
            }
            for part in written.split(separator: "/") where part != "." {
                if part == ".." {
                    guard !base.isEmpty else { throw CofferError(.outsideSandbox, path: path) }
                    base.removeLast()
                } else {
                    base.append(String(part))
                }
            }
            // From the root again: the target's own components may hold links.
            pending = (base + pending.dropFirst())[...]
            resolved = []
        }
        return rebuilt(path, resolved)
    }

    private func rebuilt(_ original: VirtualPath, _ components: [String]) -> VirtualPath {
        components.reduce(VirtualPath.root(of: original.mount)) { $0.appending(trustedName: $1) }
    }

    /// The root as `realpath` gives it: a link's absolute target may name the root either way.
    var canonicalRootPath: String {
        guard let pointer = realpath(rootPath, nil) else { return rootPath }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}

extension LocalSandboxBackend: LinkingBackend {
    public func createSymbolicLink(at path: VirtualPath, target: String) async throws {
        try requireWritable(path)
        guard path.linkStaysInside(target) else { throw CofferError(.outsideSandbox, path: path, detail: "a link that leads out of its mount") }
        try await BlockingIO.run { _ throws(CofferError) in
            let parent = try self.openParent(of: path)
            guard symlinkat(target, parent.raw, path.name) == 0 else {
                throw CofferError.lastSystemError("symlinkat", path: path)
            }
        }
    }
}
