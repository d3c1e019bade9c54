import CofferTestSupport
import Foundation
import Testing

/// Favourites (issue 35): `fav` in the REPL, shown by `mounts` and offered first by `cd`'s
/// completion, the same list over RPC; host folders in GTK's bookmarks only when asked.
@Suite(.serialized, .ownsProcesses)
struct FavouritesEndToEndTests {
    let directory = TemporaryDirectory("e2e-favourites")
    var container: String { directory.url("container") }
    var home: String { URL(fileURLWithPath: directory.url("home")).standardizedFileURL.path }

    init() throws {
        directory.make(["home/Documents/.keep": "", "home/Music/.keep": "", "home/.config/gtk-3.0/bookmarks": "file:///srv/shared Shared\n"])
        #expect(try CofferBinary.run(["--container", container, "-c", "mkdir Projects Old Zebra"]).status == 0)
    }

    func coffer(_ commands: String) throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", "en", "-c", commands],
                             environment: ["HOME": home, "XDG_CONFIG_HOME": home + "/.config"])
    }

    var gtkBookmarks: String { directory.contents("home/.config/gtk-3.0/bookmarks") ?? "" }

    @Test func favouritesAreListedMarkedAndSharedWithTheDesktopOnlyWhenAsked() throws {
        let added = try coffer("fav add Zebra; fav add Old; fav add host:~/Music; fav add --desktop host:~/Documents")
        #expect(added.status == 0, "\(added.errors)")
        #expect(gtkBookmarks == "file:///srv/shared Shared\nfile://\(home)/Documents\n", "only --desktop writes GTK's bookmarks, keeping others' lines")
        #expect(try coffer("rm Old").status == 0)
        let listed = try coffer("fav")
        #expect(listed.output == "files:/Zebra\nfiles:/Old  (missing)\nhost:\(home)/Music\nhost:\(home)/Documents  (desktop)\n", "\(listed.output)")
        #expect(try coffer("mounts").output.contains("Favourites:\n  files:/Zebra\n"))
        #expect(try coffer("fav rm host:~/Documents; fav rm Old").status == 0)
        #expect(gtkBookmarks == "file:///srv/shared Shared\n")
        #expect(try coffer("fav").output == "files:/Zebra\nhost:\(home)/Music\n")
        #expect(try coffer("fav add Missing").status == 1)
        #expect(try coffer("fav add --desktop Zebra").errors.contains("--desktop is for folders of this computer"))
    }

    @Test func cdCompletesFavouritesFirstAndRPCSeesTheSameList() async throws {
        #expect(try coffer("fav add Zebra").status == 0)
        let session = try TerminalSession([CofferBinary.url.path, "--container", container, "--lang", "en"],
                                          environment: ["TERM": "screen", "LANG": "C.UTF-8", "HOME": home, "NO_COLOR": "1"])
        try session.waitForLastLine("files:/>")
        try session.type("cd ")
        try session.press("Tab")
        try session.press("Tab")
        let screen = try session.wait { $0.contains("Projects/") }
        let candidates = screen.components(separatedBy: "\n").last { $0.contains("Projects/") } ?? ""
        #expect(candidates.hasPrefix("files:/Zebra/"), "favourites come first: \(candidates)")

        let rpc = try RPCProcess(container: container, environment: ["HOME": home])
        defer { rpc.closeInput() }
        _ = try await rpc.awaitCall("initialize", ["locale": "en"])
        _ = try await rpc.awaitCall("favourites/add", ["path": "/Projects"])
        let listed = try #require(result(try await rpc.awaitCall("favourites/list")))
        let paths = (listed["favourites"] as? [[String: Any]])?.compactMap { $0["path"] as? String }
        #expect(paths == ["files:/Zebra", "files:/Projects"])
        _ = try await rpc.awaitCall("favourites/remove", ["path": "/Zebra"])
        #expect(try coffer("fav").output == "files:/Projects\n")
    }
}
