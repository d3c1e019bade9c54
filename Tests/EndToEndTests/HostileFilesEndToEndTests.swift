import CofferTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Untrusted files are decoded in a child process of `coffer`, bounded in processor time,
/// memory and wall-clock time, and killed when the request is cancelled or the server
/// stops (issue 32). A PDF that would keep poppler busy for hours is the test.
@Suite(.ownsProcesses) struct HostileFilesEndToEndTests {
    let directory = TemporaryDirectory("e2e-hostile")
    var container: String { directory.url("container") }

    func prepare(_ names: [String]) async throws {
        _ = try await CofferBinary.running(["--container", container, "-c", "ls"])
        for name in names {
            try HostileFiles.nestedFormsPDF().write(to: URL(fileURLWithPath: directory.url("container/Documents/UserFiles/\(name)")))
        }
    }

    /// The decoders running for the server `parent` now.
    static func decoders(of parent: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  status.contains("\nPPid:\t\(parent)\n"),
                  let command = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: command, as: UTF8.self).contains("--coffer-decoder")
        }
    }

    @Test func aPDFThatWouldRenderForHoursIsStoppedAndRemembered() async throws {
        try await prepare(["forms.pdf"])
        let rpc = try RPCProcess(container: container)
        try rpc.initialize()
        // Bounded: the child is stopped after 20 s of processor time or 30 s in all.
        let answer = try await rpc.awaitCall("files/thumbnail", ["path": "/forms.pdf", "size": 128], timeout: 120)
        #expect(errorKind(answer) == "tooLarge", "\(answer)")
        #expect(errorMessage(answer)?.contains("more time or memory than a preview may use") == true, "\(answer)")
        // Remembered: asked again, it fails from the record, with no decoder started.
        let again = try rpc.call("files/thumbnail", ["path": "/forms.pdf", "size": 128], timeout: 10)
        #expect(errorKind(again) == "tooLarge")
        #expect(Self.decoders(of: rpc.pid).isEmpty)
        let failures = (try? FileManager.default.contentsOfDirectory(
            atPath: directory.url("container/Library/Caches/Thumbnails/fail/coffer-1.0"))) ?? []
        #expect(failures.count == 1, "\(failures)")
        rpc.closeInput()
        #expect(try rpc.waitForExit() == 0)
    }

    @Test func sigtermEndsTheServerWhileADecoderRuns() async throws {
        try await prepare(["slow.pdf"])
        let rpc = try RPCProcess(container: container)
        try rpc.initialize()
        let request = rpc.sendRequest("files/thumbnail", ["path": "/slow.pdf", "size": 256])
        // Watched from a thread of its own, and signalled the moment a decoder shows: on a
        // loaded machine the test's task may wait longer for the shared pool than the
        // decoder's 30 s bound. (Up to a minute to appear: a bound, not a timing.)
        let pid = rpc.pid
        let running = try await offPool { () -> [Int32] in
            let deadline = ContinuousClock.now + .seconds(60)
            var found: [Int32] = []
            while found.isEmpty && ContinuousClock.now < deadline {
                found = Self.decoders(of: pid)
                if found.isEmpty { usleep(5_000) }
            }
            if !found.isEmpty { rpc.signal(SIGTERM) }
            return found
        }
        if running.isEmpty {
            let answer = try? rpc.response(to: request, timeout: 5)
            Issue.record("no decoder started; the server answered \(String(describing: answer))")
            return
        }
        #expect(running.count == 1, "one decoder started")
        // The server ends at once (a hang throws), and its decoder with it.
        let status = try await offPool { try rpc.waitForExit(timeout: 10) }
        #expect(status == 143 || status == 0, "\(status)")
        for pid in running {
            var gone = false
            for _ in 0..<200 where !gone {
                let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
                gone = state.isEmpty || state.contains(") Z ")
                if !gone { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(gone, "decoder \(pid) ended with the server")
        }
    }
}
