import CofferBackends
import CofferCore
import CofferTestSupport
import Foundation
import Testing

/// Which host paths a front end may use: prefix tricks, `..`, links, and the container.
struct HostAccessPolicyTests {
    let directory = TemporaryDirectory("policy")

    init() {
        directory.make(["allowed/in.txt": "in", "allowed-not/out.txt": "out", "allowed/Sub/deep.txt": "deep",
                        "container/inside.txt": "x"])
        directory.link("allowed/link-out.txt", to: directory.url("allowed-not/out.txt"))
        directory.link("allowed/link-in.txt", to: "Sub/deep.txt")
        directory.link("allowed/up", to: "..")
    }

    func kind(_ policy: HostAccessPolicy, _ path: String) -> CofferError.Kind? {
        do {
            _ = try policy.open(path)
            return nil
        } catch {
            return error.kind
        }
    }

    @Test func onlyAllowedFoldersAndWhatIsBelowThem() throws {
        let policy = try HostAccessPolicy.only([directory.url("allowed")])
        #expect(kind(policy, directory.url("allowed/in.txt")) == nil)
        #expect(kind(policy, directory.url("allowed/Sub/../in.txt")) == nil)
        #expect(kind(policy, directory.url("allowed/link-in.txt")) == nil)
        #expect(kind(policy, directory.url("allowed")) == nil)
        // A shared string prefix is not a parent folder.
        #expect(kind(policy, directory.url("allowed-not/out.txt")) == .hostAccessDenied)
        #expect(kind(policy, directory.url("allowed/../allowed-not/out.txt")) == .hostAccessDenied)
        #expect(kind(policy, directory.url("allowed/link-out.txt")) == .hostAccessDenied)
        #expect(kind(policy, directory.url("allowed/up/allowed-not/out.txt")) == .hostAccessDenied)
        #expect(kind(policy, directory.url("allowed/missing.txt")) == .noSuchFile)
        #expect(kind(policy, "/etc/hostname") == .hostAccessDenied)
    }

    @Test func whatOpensIsWhatWasNamed() throws {
        let item = try HostAccessPolicy.anywhere.open(directory.url("allowed/link-in.txt"))
        #expect(item.name == "link-in.txt")
        #expect(item.path.hasSuffix("/allowed/Sub/deep.txt"))
        #expect(item.size == 4)
        #expect(!item.isFolder)
    }

    @Test func nowhereAndTheContainerAreClosed() {
        #expect(kind(.nowhere, directory.url("allowed/in.txt")) == .hostAccessDenied)
        let policy = HostAccessPolicy.anywhere.excluding(directory.url("container"))
        #expect(kind(policy, directory.url("container/inside.txt")) == .hostAccessDenied)
        #expect(kind(policy, directory.url("container")) == .hostAccessDenied)
        #expect(kind(policy, directory.url("allowed/in.txt")) == nil)
    }

    @Test func pipesAreRefusedWithoutBlocking() {
        #expect(mkfifo(directory.url("allowed/pipe"), 0o600) == 0)
        #expect(kind(.anywhere, directory.url("allowed/pipe")) == .unsupported)
    }

    @Test func allowingAFolderThatIsNotThereIsAnError() {
        #expect(throws: CofferError.self) { try HostAccessPolicy.only([directory.url("nope")]) }
        #expect(throws: CofferError.self) { try HostAccessPolicy.only([directory.url("allowed/in.txt")]) }
    }
}
