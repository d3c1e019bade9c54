import CofferBackends
import CofferCore
import CofferTestSupport
import FileService
import Foundation
import Synchronization
import Testing

/// An operation reports what it did: when another process moves the new item away at once,
/// a write, copy or move that took effect still answers with success, never "no such file".
struct ConcurrentMoverTests {
    let directory = TemporaryDirectory("mover")
    let service: FileService

    init() throws {
        directory.make(["files/In/": "", "files/Sources/": "", "away/": ""])
        let files = try LocalSandboxBackend(rootPath: directory.url("files"), syncBeforeCommit: false)
        service = FileService(mounts: [Mount(name: "files", backend: files)])
    }

    /// Moves whatever appears in `files/In` out of the mount, as fast as it can, until stopped.
    func withMover(_ body: () async throws -> Void) async rethrows -> Int {
        let stop = Atomic<Bool>(false)
        let moved = Atomic<Int>(0)
        let folder = directory.url("files/In")
        let away = directory.url("away")
        let done = DispatchSemaphore(value: 0)
        Thread {
            var serial = 0
            while !stop.load(ordering: .relaxed) {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
                where !name.hasPrefix(".coffer-partial-") {
                    serial += 1
                    if rename(folder + "/" + name, away + "/\(serial)") == 0 { moved.add(1, ordering: .relaxed) }
                }
            }
            done.signal()
        }.start()
        defer {
            stop.store(true, ordering: .relaxed)
            done.wait()
        }
        try await body()
        return moved.load(ordering: .relaxed)
    }

    @Test func writesCopiesAndMovesThatHappenedAreReportedAsDone() async throws {
        directory.make(["files/Sources/s.txt": "source"])
        let session = try service.openSession(SessionOptions(frontEnd: "test"))
        var failures: [String] = []
        let moved = try await withMover {
            for index in 0..<300 {
                let target = try VirtualPath(parsing: "/In/f\(index).txt")
                do throws(CofferError) {
                    let node = index % 2 == 0
                        ? try await session.perform(WriteFile(target, bytes: Array("\(index)".utf8)))
                        : try await session.perform(CopyItem(try VirtualPath(parsing: "/Sources/s.txt"), to: .named(target)))
                    if node.path != target || node.kind != .file { failures.append("\(index): \(node.path)") }
                } catch {
                    failures.append("\(index): \(error)")
                }
                // A move out of a folder of its own, into the mover's folder.
                directory.make(["files/Sources/m\(index).txt": "m"])
                do throws(CofferError) {
                    let node = try await session.perform(MoveItem(try VirtualPath(parsing: "/Sources/m\(index).txt"),
                                                                  to: .named(try VirtualPath(parsing: "/In/m\(index).txt"))))
                    if node.size != 1 { failures.append("move \(index): size \(node.size)") }
                } catch {
                    failures.append("move \(index): \(error)")
                }
            }
        }
        #expect(failures.count == 0, "\(failures.prefix(5))")
        #expect(moved > 0)
    }
}
