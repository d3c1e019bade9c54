@testable import CofferApp
import CofferCore
import FileService
import Foundation
import Synchronization
import Testing

/// An application's own front end, through the public door (`CofferFrontEnd`): its command
/// and options parsed beside Coffer's, a session on the service the application composed.
@Suite(.serialized)
struct FrontEndDoorTests {
    /// What `Probe` saw, for the test to read after `run` returns.
    struct Seen: Sendable {
        var arguments: [String] = []
        var language: Language?
        var programName = ""
        var listed: [String] = []
    }
    static let seen = Mutex(Seen())

    /// `door-test probe [--fail] …`: makes a folder and lists the root in a session.
    struct Probe: CofferFrontEnd {
        static let command = "probe"
        static let summary = LocalizedText("Look around", "看看")
        static let usage: LocalizedText? = LocalizedText("[--x VALUE]", "[--x 值]")
        let arguments: [String]

        init(arguments: [String]) throws(CofferError) {
            if arguments.contains("--bad") { throw CofferError(.invalidArgument, detail: "probe: --bad is bad") }
            self.arguments = arguments
        }

        func run(_ context: FrontEndContext) async -> Int32 {
            let arguments = arguments
            return await context.withSession { session in
                if arguments.contains("--fail") { _ = try await session.perform(StatItem(try VirtualPath(parsing: "/nowhere"))) }
                _ = try await session.perform(CreateFolder(try VirtualPath(parsing: "/报告 2026")))
                let listed = try await session.perform(ListFolder(.root(of: "files"))).items.map(\.name)
                FrontEndDoorTests.seen.withLock {
                    $0 = Seen(arguments: arguments, language: context.language, programName: context.programName, listed: listed)
                }
            }
        }
    }

    static func container() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("coffer-door-\(UUID().uuidString)").path
    }

    @Test @MainActor func aFrontEndGetsItsOwnArgumentsAndASessionOnTheService() async throws {
        let folder = Self.container()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let application = CofferApplication(name: "door-test", frontEnds: [Probe.self])
        // Coffer's service options are read before and after the command; the rest is the probe's,
        // and everything after `--`, however it looks.
        let status = await application.run(arguments: ["--lang", "zh-Hans", "probe", "--x", "value", "--container", folder,
                                                       "--", "--lang", "-h", "--"],
                                           environment: ["HOME": folder])
        #expect(status == 0)
        let seen = Self.seen.withLock { $0 }
        #expect(seen.arguments == ["--x", "value", "--lang", "-h", "--"])
        #expect(seen.language == .simplifiedChinese)
        #expect(seen.programName == "door-test")
        #expect(seen.listed.contains("报告 2026"))
        // The session is audited under the front end's command.
        let audit = try String(contentsOfFile: try await Container.open(at: folder).auditLogPath, encoding: .utf8)
        #expect(audit.split(separator: "\n").contains { $0.contains("\"probe\"") && $0.contains("createFolder") })
    }

    @Test @MainActor func aFailureInTheSessionIsStatusOne() async {
        let folder = Self.container()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let application = CofferApplication(name: "door-test", frontEnds: [Probe.self])
        #expect(await application.run(arguments: ["--container", folder, "probe", "--fail"], environment: ["HOME": folder]) == 1)
    }

    @Test @MainActor func badArgumentsStopWithStatusTwoBeforeAnythingIsOpened() async {
        let folder = Self.container()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let application = CofferApplication(name: "door-test", frontEnds: [Probe.self])
        #expect(await application.run(arguments: ["--container", folder, "probe", "--bad"], environment: ["HOME": folder]) == 2)
        #expect(!FileManager.default.fileExists(atPath: folder))
    }

    @Test @MainActor func helpAfterTheCommandIsTheFrontEndsAndOpensNothing() async {
        let folder = Self.container()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let application = CofferApplication(name: "door-test", frontEnds: [Probe.self])
        #expect(await application.run(arguments: ["--container", folder, "probe", "--x", "--help"], environment: ["HOME": folder]) == 0)
        #expect(await application.run(arguments: ["--container", folder, "probe", "-h"], environment: ["HOME": folder]) == 0)
        #expect(!FileManager.default.fileExists(atPath: folder))
        #expect(CofferApplication.usage(of: Probe.self, program: "door-test", .english) == "door-test probe: Look around\n\n[--x VALUE]")
        #expect(CofferApplication.usage(of: Taken.self, program: "door-test", .english) == "door-test serve: ")
    }

    @Test @MainActor func aReservedCommandStopsTheProgramWithStatusOne() async {
        let folder = Self.container()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let application = CofferApplication(name: "door-test", frontEnds: [Probe.self, Untypeable.self])
        #expect(await application.run(arguments: ["--container", folder, "probe"], environment: ["HOME": folder]) == 1)
        #expect(!FileManager.default.fileExists(atPath: folder))
    }

    @Test func theCommandIsParsedOnlyWhereACommandCanStand() throws {
        let options = try LaunchOptions(arguments: ["probe", "rpc", "--lang=en", "-c", "ls"], environment: [:], commands: ["probe"])
        #expect(options.action == .custom("probe", ["rpc", "-c", "ls"]))
        #expect(options.language == .english)
        // After another front end's word, the command is just an unexpected argument.
        #expect(throws: CofferError.self) {
            try LaunchOptions(arguments: ["rpc", "probe"], environment: [:], commands: ["probe"])
        }
        #expect(try LaunchOptions(arguments: ["rpc"], environment: [:], commands: ["probe"]).action == .rpc)
    }

    struct Taken: CofferFrontEnd {
        static let command = "serve"
        static let summary = LocalizedText("", "")
        init(arguments: [String]) throws(CofferError) {}
        func run(_ context: FrontEndContext) async -> Int32 { 0 }
    }

    struct Untypeable: CofferFrontEnd {
        static let command = "my status"
        static let summary = LocalizedText("", "")
        init(arguments: [String]) throws(CofferError) {}
        func run(_ context: FrontEndContext) async -> Int32 { 0 }
    }

    struct SessionName: CofferFrontEnd {
        static let command = "share"
        static let summary = LocalizedText("", "")
        init(arguments: [String]) throws(CofferError) {}
        func run(_ context: FrontEndContext) async -> Int32 { 0 }
    }

    @Test func commandsMustBeTypeableAndFree() throws {
        #expect(throws: CofferError.self) { try CofferApplication(name: "a", frontEnds: [SessionName.self]).checkFrontEnds() }
        #expect(throws: CofferError.self) { try CofferApplication(name: "a", frontEnds: [Taken.self]).checkFrontEnds() }
        #expect(throws: CofferError.self) { try CofferApplication(name: "a", frontEnds: [Untypeable.self]).checkFrontEnds() }
        #expect(throws: CofferError.self) { try CofferApplication(name: "a", frontEnds: [Probe.self, Probe.self]).checkFrontEnds() }
        try CofferApplication(name: "a", frontEnds: [Probe.self]).checkFrontEnds()
    }

    @Test func usageListsTheApplicationsCommandsInBothLanguages() {
        let application = CofferApplication(name: "door-test", frontEnds: [Probe.self])
        #expect(application.usage(.english).hasSuffix("The application's own commands:\n  door-test probe  Look around"))
        #expect(application.usage(.simplifiedChinese).hasSuffix("本应用自己的命令：\n  door-test probe  看看"))
        #expect(!CofferApplication(name: "coffer").usage(.english).contains("own commands"))
    }
}
