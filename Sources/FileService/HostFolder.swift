import Foundation

/// Reading folders of the host machine, outside any mount: what a person at the REPL may
/// name for `import`, `export` and `open`. Nothing here reads inside a container.
public enum HostFolder {
    /// One item of a host folder.
    public struct Entry: Sendable, Equatable {
        /// Its name in the folder.
        public var name: String
        /// A folder, or a link to one (host paths follow links, as a shell does).
        public var isFolder: Bool
    }

    /// The items of the host folder at `path`, unsorted; empty when it cannot be read.
    public static func entries(atPath path: String) -> [Entry] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        let folder = path.hasSuffix("/") ? path : path + "/"
        return names.map { name in
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: folder + name, isDirectory: &isDirectory)
            return Entry(name: name, isFolder: exists && isDirectory.boolValue)
        }
    }
}
