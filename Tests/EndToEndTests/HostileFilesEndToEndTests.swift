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
    func decoders(of parent: Int32) -> [Int32] {
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
        #expect(decoders(of: rpc.pid).isEmpty)
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
        _ = rpc.sendRequest("files/thumbnail", ["path": "/slow.pdf", "size": 256])
        var running: [Int32] = []
        // (Up to a minute: a loaded machine starts a decoder late; this is a bound, not a timing.)
        for _ in 0..<2400 where running.isEmpty {
            running = decoders(of: rpc.pid)
            if running.isEmpty { try await Task.sleep(for: .milliseconds(25)) }
        }
        #expect(running.count == 1, "a decoder started")
        rpc.signal(SIGTERM)
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
