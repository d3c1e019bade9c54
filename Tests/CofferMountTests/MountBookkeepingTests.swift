import CofferCore
@testable import CofferMount
import Foundation
import Testing

/// What `coffer mount` keeps between the kernel's calls: inode numbers that follow renames and
/// outlive deletions, and deletions held back so `rm -r` leaves one folder in the trash. (The
/// mount itself is checked with real programs by `.ci/mount_check.py`.)
struct MountBookkeepingTests {
    func path(_ text: String) throws -> VirtualPath { try VirtualPath(parsing: text) }

    @Test func numbersFollowRenamesAndOutliveDeletions() throws {
        let table = InodeTable(root: .path(.root()))
        let folder = table.lookUp(.path(try path("/a")))
        let file = table.lookUp(.path(try path("/a/b/c.txt")))
        #expect(folder != file && folder > 1)
        #expect(table.lookUp(.path(try path("/a"))) == folder)   // the same number, counted twice
        table.move(try path("/a"), to: try path("/z"), withContents: true)
        #expect(table.path(file) == (try path("/z/b/c.txt")))
        #expect(table.path(folder) == (try path("/z")))
        // Deleted: the number no longer names the path (a new file there gets another).
        table.detach(try path("/z/b/c.txt"), withContents: false)
        #expect(table.path(file) == nil && !table.isAttached(file))
        #expect(table.lookUp(.path(try path("/z/b/c.txt"))) != file)
        // Forgotten as often as looked up, the number goes.
        table.forget(folder, 1)
        #expect(table.path(folder) != nil)
        table.forget(folder, 1)
        #expect(table.item(folder) == nil)
        #expect(table.item(1) == .path(.root()))
    }

    @Test func aRenameOverAnItemDetachesIt() throws {
        let table = InodeTable(root: .mounts)
        let old = table.lookUp(.path(try path("/report.odt")))
        let new = table.lookUp(.path(try path("/lu123.tmp")))
        table.move(try path("/lu123.tmp"), to: try path("/report.odt"), withContents: false)
        #expect(table.path(new) == (try path("/report.odt")))
        #expect(table.path(old) == nil)
        #expect(table.path(1) == nil && table.item(1) == .mounts)
    }

    @Test func heldDeletionsGoAsTheirTopFolder() throws {
        let pending = PendingDeletes()
        for file in ["/P/src/a.txt", "/P/src/b.txt", "/P/c.txt"] { _ = pending.hold(try path(file)) }
        #expect(pending.holdsAll(["a.txt", "b.txt"], in: try path("/P/src")))
        #expect(!pending.holdsAll(["a.txt", "other"], in: try path("/P/src")))
        _ = pending.hold(try path("/P/src"))
        _ = pending.hold(try path("/P"))
        _ = pending.hold(try path("/loose.txt"))
        #expect(pending.hides(try path("/P/src/a.txt")))
        #expect(pending.hides(try path("/P/anything")))
        #expect(!pending.hides(try path("/Q")))
        // Not yet: deletions were just made.
        #expect(pending.take(all: false).isEmpty)
        #expect(pending.take(all: true) == [try path("/P"), try path("/loose.txt")])
        // Still hidden until it is in the trash.
        #expect(pending.hides(try path("/P")))
        pending.gone(try path("/P"))
        #expect(!pending.hides(try path("/P")))
    }

    @Test func aNewItemTakesAHeldNameAtOnce() throws {
        let pending = PendingDeletes()
        _ = pending.hold(try path("/notes.txt"))
        _ = pending.hold(try path("/Old/x"))
        _ = pending.hold(try path("/Old"))
        #expect(pending.take(covering: try path("/notes.txt")) == (try path("/notes.txt")))
        #expect(pending.take(covering: try path("/Old")) == (try path("/Old")))
        #expect(pending.take(covering: try path("/Other")) == nil)
        #expect(pending.take(all: true).isEmpty)
    }

    @Test func linksThatLeadOutAreNotShown() throws {
        let link = try path("/a/b/link")
        #expect(link.linkStaysInside("target.txt"))
        #expect(link.linkStaysInside("../../x"))
        #expect(!link.linkStaysInside("../../../etc/passwd"))
        #expect(!link.linkStaysInside("/etc/passwd"))
        // A `..` after a name climbs from wherever that name leads, if it is a link: refused.
        #expect(!link.linkStaysInside("up/../.."))
        #expect(!link.linkStaysInside("x/../y"))
        #expect(link.linkStaysInside("./../../x/./y"))
        #expect(!(try path("/link")).linkStaysInside(".."))
    }
}
