import CofferCore
import CofferRuntime
import CofferTestSupport
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The harness owns what it starts: no child inherits another's pipes, every wait ends, and a
/// test's processes end with the test.
@Suite(.ownsProcesses)
struct HarnessTests {
    /// The pipes (by inode) and other descriptors a process holds, from `/proc/PID/fd`.
    static func descriptors(of pid: Int32) -> [Int: String] {
        let folder = "/proc/\(pid)/fd"
        var found: [Int: String] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            guard let number = Int(name),
                  let target = try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + name) else { continue }
            found[number] = target
        }
        return found
    }

    @Test func fiftyChildrenStartedFromEightThreadsHoldOnlyTheirOwnPipes() async throws {
        let started = Mutex<[TestProcess]>([])
        let failures = Mutex<[String]>([])
        let owner = try #require(ProcessOwner.current)
        // Eight threads released together, each starting its share as fast as it can.
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for thread in 0..<8 {
            done.enter()
            Thread.detachNewThread {
                ProcessOwner.$current.withValue(owner) {
                    gate.wait()
                    for _ in stride(from: thread, to: 50, by: 8) {
                        do {
                            let child = try TestProcess(["/bin/cat"])
                            started.withLock { $0.append(child) }
                        } catch {
                            failures.withLock { $0.append("\(error)") }
                        }
                    }
                }
                done.leave()
            }
        }
        for _ in 0..<8 { gate.signal() }
        try await offPool { done.wait() }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let children = started.withLock { $0 }
        #expect(children.count == 50)

        // Each child holds 0, 1 and 2, three pipes of its own, and nothing else.
        var owners: [String: Int32] = [:]
        for child in children {
            let held = Self.descriptors(of: child.pid)
            #expect(held.keys.sorted() == [0, 1, 2], "child \(child.pid) holds \(held)")
            for (_, target) in held where target.hasPrefix("pipe:") {
                if let other = owners[target], other != child.pid {
                    Issue.record("\(target) is held by both \(other) and \(child.pid)")
                }
                owners[target] = child.pid
            }
            #expect(Set(held.values).count == 3, "child \(child.pid) holds \(held)")
        }
        #expect(owners.count == 150)

        // And each is still its own: what goes in one comes out of it alone.
        for (index, child) in children.enumerated() {
            child.write(Data("child \(index)\n".utf8))
            child.closeInput()
        }
        for (index, child) in children.enumerated() {
            #expect(try await offPool { try child.waitForExit(timeout: 30) } == 0)
            try child.waitForOutput(timeout: 10, "its echo") { $0.count >= "child \(index)\n".utf8.count }
            #expect(String(decoding: child.output, as: UTF8.self) == "child \(index)\n")
        }
    }

    @Test func aChildThatNeverExitsFailsWithinItsDeadlineAndLeavesNothing() async throws {
        // It ignores SIGTERM and leaves a grandchild in its group; both must go.
        let mark = "\(900_000 + Int.random(in: 0..<99_999)).5"
        let script = "echo 'about to wait for ever' >&2; trap '' TERM; sleep \(mark) & wait"
        // Timed on the thread that waits (not across the hop back to the test's task, which a
        // busy cooperative pool can delay by as much again).
        let took = Mutex<Duration?>(nil)
        let error = await #expect(throws: ProcessTimeout.self) {
            try await offPool {
                let began = ContinuousClock.now
                defer { took.withLock { $0 = ContinuousClock.now - began } }
                _ = try TestProcess.run(["/bin/sh", "-c", script], timeout: 1)
            }
        }
        let elapsed = try #require(took.withLock { $0 })
        // A bound on a hang, not a timing: the deadline was 1 s, and a loaded machine may be slow to end it.
        #expect(elapsed < .seconds(60), "the deadline was 1 s, and the harness took \(elapsed)")
        let message = error?.description ?? ""
        #expect(message.contains("sh -c"), "\(message)")
        #expect(message.contains("waited 1."), "\(message)")
        #expect(message.contains("about to wait for ever"), "\(message)")
        #expect(Self.processes(running: mark).isEmpty, "left behind: \(Self.processes(running: mark))")
    }

    @Test func whatATestLeavesRunningIsEndedWithItEvenWhenItIgnoresSIGTERM() async throws {
        let mark = "\(800_000 + Int.random(in: 0..<99_999)).25"
        let owner = ProcessOwner(name: "a test that forgets its children")
        let child = try ProcessOwner.$current.withValue(owner) {
            try TestProcess(["/bin/sh", "-c", "trap '' TERM; sleep \(mark) & sleep \(mark); wait"])
        }
        // The shell and its two sleeps.
        #expect(await eventually { Self.processes(running: mark).count == 3 })
        #expect(child.isRunning)
        // Timed on the thread that ends them (not across the hop back to this task).
        let took = try await offPool { () -> Duration in
            let began = ContinuousClock.now
            owner.endAll(grace: 0.5)
            return ContinuousClock.now - began
        }
        #expect(took < .seconds(60), "ending took too long: a hang, not a slow machine")
        #expect(!child.isRunning)
        #expect(child.exitStatus == 128 + SIGKILL)
        #expect(Self.processes(running: mark).isEmpty, "left behind: \(Self.processes(running: mark))")
    }

    @Test func aProcessStartedOutsideATestThatOwnsItIsRefused() throws {
        let error = #expect(throws: HarnessError.self) {
            try ProcessOwner.$current.withValue(nil) { try TestProcess(["/bin/true"]) }
        }
        #expect(error?.description.contains(".ownsProcesses") == true)
    }

    @Test func waitingForOutputThatNeverComesEndsAtItsDeadline() async throws {
        let child = try TestProcess(["/bin/sh", "-c", "echo waiting >&2; exec sleep 60"])
        let began = ContinuousClock.now
        let error = #expect(throws: ProcessTimeout.self) {
            try child.waitForOutput(timeout: 0.5, "a line") { $0.contains(UInt8(ascii: "\n")) }
        }
        #expect(ContinuousClock.now - began < .seconds(60))
        #expect(error?.description.contains("a line") == true, "\(String(describing: error))")
    }

    /// Process ids whose command line contains `mark`, zombies aside.
    static func processes(running mark: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else { return false }
            return String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self).contains(mark)
        }
    }
}

/// The product's own children (``ChildProcess``): decoders, editors, applications, tools.
@Suite struct ChildProcessTests {
    /// The blocked and ignored signal masks of `pid`, from `/proc/PID/status`.
    static func signalMasks(of pid: Int32) -> (blocked: String, ignored: String)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func field(_ name: String) -> String? {
            text.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
        }
        guard let blocked = field("SigBlk"), let ignored = field("SigIgn") else { return nil }
        return (blocked, ignored)
    }

    @Test func aChildStartedFromAWorkerThreadHasCleanSignalsAndOnlyItsStandardDescriptors() async throws {
        // A descriptor this process leaves inheritable (as a library might) must not reach it.
        var leaky: [Int32] = [-1, -1]
        #expect(pipe(&leaky) == 0)
        defer { leaky.forEach { close($0) } }
        // A thread that blocks every signal, as Swift's and Dispatch's workers block many; SIGPIPE
        // is ignored in this whole process.
        let child = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                var blocked = sigset_t()
                sigfillset(&blocked)
                pthread_sigmask(SIG_BLOCK, &blocked, nil)
                continuation.resume(with: Result { () throws(CofferError) in
                    try ChildProcess.start(["/bin/sleep", "600"], grouping: .ownGroup)
                })
            }
        }
        defer {
            child.signal(SIGKILL)
            _ = child.wait()
        }
        // posix_spawn has returned, so the child runs the new program already.
        // Of the standard signals (1–31), none is blocked or ignored. (glibc keeps two real-time
        // signals of its own to itself: whatever this process inherited of those stays.)
        let masks = try #require(Self.signalMasks(of: child.pid))
        let standard: UInt64 = 0x7FFF_FFFF
        #expect(UInt64(masks.blocked, radix: 16).map { $0 & standard } == 0, "blocked: \(masks.blocked)")
        #expect(UInt64(masks.ignored, radix: 16).map { $0 & standard } == 0, "ignored: \(masks.ignored)")
        #expect(HarnessTests.descriptors(of: child.pid).keys.sorted() == [0, 1, 2])
        // SIGTERM ends it, group and all.
        child.signal(SIGTERM)
        #expect(child.wait(timeout: .seconds(10)) == 128 + SIGTERM)
    }

    @Test func anOutputQuestionHasADeadline() {
        let began = ContinuousClock.now
        #expect(ChildProcess.output(of: ["/bin/sh", "-c", "echo partial; exec sleep 60"], timeout: .milliseconds(300)) == nil)
        #expect(ContinuousClock.now - began < .seconds(60))
        let answer = ChildProcess.output(of: ["printf", "a\\nb"], searchingPath: true)
        #expect(answer?.status == 0)
        #expect(answer.map { String(decoding: $0.output, as: UTF8.self) } == "a\nb")
    }

    @Test func aMissingProgramIsNoSuchFile() {
        #expect(throws: CofferError.self) { try ChildProcess.start(["/nonexistent/program"]) }
    }
}

/// Every child, in the tests and in the product, is started one way: the tests through
/// ``TestProcess``, the product through ``ChildProcess``. Foundation's `Process` and `Pipe` give a
/// child whatever this process has open while it starts, and the signal mask of the thread that
/// started it.
@Suite struct OneWayToStartAChildTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `file:line: text` for each line of the Swift files under `folders` matching `pattern`,
    /// but in `allowed` files; comments are not code.
    static func uses(of pattern: String, in folders: [String], except allowed: Set<String>) -> [String] {
        let expression = try! NSRegularExpression(pattern: pattern)
        var found: [String] = []
        for folder in folders {
            let base = root.appendingPathComponent(folder).path
            let files = FileManager.default.enumerator(atPath: base)?.compactMap { $0 as? String } ?? []
            for file in files where file.hasSuffix(".swift") && !allowed.contains((file as NSString).lastPathComponent) {
                guard let text = try? String(contentsOfFile: base + "/" + file, encoding: .utf8) else { continue }
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = String(line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
                    if expression.firstMatch(in: code, range: NSRange(code.startIndex..., in: code)) != nil {
                        found.append("\(folder)/\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                    }
                }
            }
        }
        return found
    }

    @Test func noTestStartsAProcessButThroughTheHarness() {
        let found = Self.uses(of: #"\bProcess\(\)|\bProcess\.run\(|\bPipe\(\)|posix_spawnp?\(|\bfork\(\)"#,
                              in: ["Tests", "Examples"], except: ["OneWayToStartAChildTests.swift", "HarnessTests.swift"])
        #expect(found.isEmpty, "start it with TestProcess:\n\(found.joined(separator: "\n"))")
    }

    @Test func theProductStartsEveryChildThroughChildProcess() {
        let found = Self.uses(of: #"\bProcess\(\)|\bProcess\.run\(|\bPipe\(\)|posix_spawnp?\(|\bfork\(\)|\bpipe\(&"#,
                              in: ["Sources"], except: ["ChildProcess.swift"])
        #expect(found.isEmpty, "start it with ChildProcess:\n\(found.joined(separator: "\n"))")
    }
}
