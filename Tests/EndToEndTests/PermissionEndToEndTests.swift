import CofferTestSupport
import Foundation
import Testing

/// Permission faults as an unprivileged user meets them (the tests run `coffer` as `nobody`
/// through `setpriv` when they run as root): every message names the item at fault, on the
/// side it is at fault, and nothing is skipped in silence.
@Suite(.serialized, .ownsProcesses)
struct PermissionEndToEndTests {
    let directory = TemporaryDirectory("e2e-permissions")
    var container: String { directory.url("container") }
    static let nobody: uid_t = 65534
    static let asRoot = getuid() == 0

    init() throws {
        chmod(directory.url(""), 0o777)
        // The container is made by the user who runs coffer, as on a first start.
        let result = try coffer("ls")
        #expect(result.status == 0, "\(result.errors)")
    }

    func coffer(_ commands: String) throws -> CofferBinary.Result {
        let launcher = Self.asRoot ? ["/usr/bin/setpriv", "--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups"] : []
        return try CofferBinary.run(["--container", container, "--lang", "en", "-c", commands], launcher: launcher)
    }

    /// Makes `files` (relative to `files:`) owned by the user coffer runs as.
    func make(_ files: [String: String], modes: [String: mode_t]) {
        for (path, contents) in files {
            let full = directory.url("container/Documents/UserFiles/" + path)
            try? FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                     withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: full, contents: Data(contents.utf8))
        }
        for path in files.keys.flatMap({ Self.prefixes(of: $0) }) {
            let full = directory.url("container/Documents/UserFiles/" + path)
            if Self.asRoot { chown(full, Self.nobody, Self.nobody) }
        }
        for (path, mode) in modes { chmod(directory.url("container/Documents/UserFiles/" + path), mode) }
    }

    static func prefixes(of path: String) -> [String] {
        let parts = path.split(separator: "/")
        return (1...parts.count).map { parts.prefix($0).joined(separator: "/") }
    }

    @Test func aCopyOfAnUnreadableFileBlamesTheSourceNotTheDestination() throws {
        make(["Folder/ok.txt": "ok", "Folder/secret.txt": "secret"], modes: ["Folder/secret.txt": 0])
        let result = try coffer("cp -r Folder Copy")
        #expect(result.status == 1)
        #expect(result.errors.contains("“files:/Folder/secret.txt”"), "\(result.errors)")
        #expect(!result.errors.contains("Copy"), "\(result.errors)")
        // Nothing half-made is left, visible or hidden.
        #expect(directory.names("container/Documents/UserFiles") == ["Download", "Folder", "Import"])
    }

    @Test func duNamesWhatItCouldNotReadAndSaysSoInItsStatus() throws {
        make(["Tree/a.txt": "12345", "Tree/Locked/b.txt": "b"], modes: ["Tree/Locked": 0])
        let result = try coffer("du Tree")
        #expect(result.status == 1)
        #expect(result.errors.contains("“files:/Tree/Locked”"), "\(result.errors)")
        #expect(result.output.contains("\t5\tfiles:/Tree\t"), "\(result.output)")
    }

    @Test func anUnreadableFilesFolderIsNamed() throws {
        chmod(directory.url("container/Documents/UserFiles"), 0)
        defer { chmod(directory.url("container/Documents/UserFiles"), 0o755) }
        let result = try coffer("ls")
        #expect(result.status == 1)
        #expect(result.errors.contains("“files:/”"), "\(result.errors)")
    }
}
