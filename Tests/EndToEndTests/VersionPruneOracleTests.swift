import CofferTestSupport
import Foundation
import Testing

/// `versions --prune` through the built binary, checked against restic 0.14's `forget`: one file
/// saved over 42 times through `coffer`, each replaced content's date planted beforehand (its
/// modification time, which the next save keeps as the version's date), and a restic repository
/// with a snapshot at each of the same moments. For each rule set, the versions Coffer would
/// keep are the snapshots restic would keep, for the same reasons; the dry runs drop nothing,
/// and a real prune leaves exactly what its dry run said it would keep.
///
/// restic 0.14 is looked for in `PATH`, then at `/usr/bin/restic`; without it the test is
/// skipped, unless `COFFER_REQUIRE_RESTIC=1` makes that a failure. Both programs run in UTC,
/// so that hours, days, weeks and months are the same buckets for both.
@Suite(.ownsProcesses) struct VersionPruneOracleTests {
    let directory = TemporaryDirectory("e2e-prune-oracle")
    var container: String { directory.url("container") }
    /// The live file on disk, whose modification time is planted before each save.
    var liveFile: String { directory.url("container/Documents/UserFiles/plan.txt") }

    /// The versions' dates (UTC, ascending, none at the same second), all in the past: about
    /// three months, Monday 28 July to Friday 31 October 2025, across the ends of July, August,
    /// September and October and of ISO weeks (each Sunday night to Monday), with ten in the
    /// last day and six in one hour of it, some a minute or a second apart. The newest,
    /// 31 October at noon, is the reference of the "within" rules: 10 days before it is
    /// 21 October at noon; a month before it is 1 October at noon (31 September run over, as
    /// Go does); two months before it is 31 August at noon. A version sits exactly on each of
    /// those limits (not "within": restic wants later than the limit) and a second either side.
    static let planted = [
        "2025-07-28 08:00:00", "2025-07-31 23:59:59", "2025-08-01 00:00:00", "2025-08-03 22:00:00",
        "2025-08-04 06:00:00", "2025-08-15 12:00:00", "2025-08-24 23:30:00", "2025-08-25 00:30:00",
        "2025-08-31 11:00:00", "2025-08-31 11:59:59", "2025-08-31 12:00:00", "2025-08-31 12:00:01",
        "2025-09-01 00:00:01", "2025-09-10 14:00:00", "2025-09-21 18:00:00", "2025-09-22 07:00:00",
        "2025-09-30 23:59:00", "2025-10-01 11:59:59", "2025-10-01 12:00:00", "2025-10-01 12:00:01",
        "2025-10-05 20:00:00", "2025-10-06 08:00:00", "2025-10-12 10:00:00", "2025-10-19 10:00:00",
        "2025-10-20 10:00:00", "2025-10-21 11:59:59", "2025-10-21 12:00:00", "2025-10-21 12:00:01",
        "2025-10-26 09:00:00", "2025-10-27 09:00:00", "2025-10-29 15:00:00", "2025-10-30 12:00:00",
        "2025-10-30 23:59:59", "2025-10-31 00:00:00", "2025-10-31 08:00:00", "2025-10-31 09:00:00",
        "2025-10-31 09:01:00", "2025-10-31 09:02:00", "2025-10-31 09:59:59", "2025-10-31 10:00:00",
        "2025-10-31 11:59:00", "2025-10-31 12:00:00",
    ]

    /// The rule sets, as both `coffer versions --prune` and `restic forget` take them. The last
    /// is the one then pruned for real.
    static let ruleSets: [[String]] = [
        ["--keep-daily", "5"],
        ["--keep-weekly", "3", "--keep-monthly", "2"],
        ["--keep-last", "4", "--keep-hourly", "3"],
        ["--keep-within", "10d"],
        ["--keep-within", "2m", "--keep-daily", "3"],
        ["--keep-within", "1m"],
        ["--keep-hourly", "12", "--keep-weekly", "6"],
        ["--keep-monthly", "10"],
        ["--keep-last", "0", "--keep-within", "1d12h"],
        ["--keep-last", "2", "--keep-hourly", "2", "--keep-daily", "4", "--keep-weekly", "4", "--keep-monthly", "3",
         "--keep-within", "1d"],
    ]

    /// What one side would keep: each kept date (seconds since 1970) with its reasons in order,
    /// and the dates that would go.
    struct Verdict: Equatable, CustomStringConvertible {
        var kept: [Int: [String]]
        var removed: Set<Int>
        /// The kept dates with their reasons, oldest first, and how many would go.
        var description: String {
            let lines = kept.keys.sorted().map { "  keep \(Self.text($0)) (\($0)): \(kept[$0]!.joined(separator: ", "))" }
            return (lines + ["  and \(removed.count) removed"]).joined(separator: "\n")
        }
        static func text(_ seconds: Int) -> String { PruneOracleClock.text(Date(timeIntervalSince1970: Double(seconds))) }
    }

    func coffer(_ commands: String, input: String = "") throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", "en", "-c", commands], input: input,
                             environment: ["TZ": "UTC"], timeout: 60)
    }

    @Test(.enabled(if: PruneOracleRestic.executable != nil || PruneOracleRestic.required,
                   "restic 0.14 not found in PATH or at /usr/bin/restic: skipped (COFFER_REQUIRE_RESTIC=1 makes this a failure)"))
    func pruneKeepsWhatResticForgetKeeps() async throws {
        let dates = Self.planted.map(PruneOracleClock.date)
        #expect(zip(dates, dates.dropFirst()).allSatisfy { $0 < $1 }, "the planted dates are ascending, none twice")
        #expect(dates.allSatisfy { $0 < Date() })
        // restic's snapshots are made beside Coffer's saves (each is mostly key derivation).
        let restic = try PruneOracleRestic(in: directory)
        async let snapshots: Void = restic.snapshot(at: dates)
        try await offPool { try plant(dates) }
        try await snapshots

        // `versions` lists every one, newest first, at its planted date.
        let listing = try coffer("versions plan.txt")
        #expect(listing.status == 0, "\(listing.errors)")
        let listed = Self.listedDates(listing.output)
        #expect(listed == Array(Self.planted.reversed()), "\(listing.output)")
        #expect(Set(try versionDates()) == Set(dates.map(PruneOracleClock.seconds)))

        // Every rule set: Coffer's dry run and restic's, side by side.
        let theirs = try await restic.forget(Self.ruleSets)
        var lastDryRun: Verdict?
        for (rules, resticVerdict) in zip(Self.ruleSets, theirs) {
            let flags = rules.joined(separator: " ")
            let dryRun = try coffer("versions --prune --dry-run --json \(flags) plan.txt")
            try #require(dryRun.status == 0, "\(flags): \(dryRun.errors)")
            let ours = try Self.cofferVerdict(dryRun.output)
            #expect(ours.kept.count + ours.removed.count == dates.count, "\(flags)")
            #expect(resticVerdict.kept.count + resticVerdict.removed.count == dates.count, "\(flags)")
            #expect(Set(ours.kept.keys) == Set(resticVerdict.kept.keys),
                    "\(flags): kept dates differ\nCoffer:\n\(ours)\nrestic:\n\(resticVerdict)")
            #expect(ours.removed == resticVerdict.removed, """
                \(flags): removed dates differ; removed by Coffer alone: \(ours.removed.subtracting(resticVerdict.removed).sorted().map(Verdict.text)), \
                by restic alone: \(resticVerdict.removed.subtracting(ours.removed).sorted().map(Verdict.text))
                """)
            for (date, reasons) in ours.kept.sorted(by: { $0.key < $1.key }) {
                guard let expected = resticVerdict.kept[date] else { continue }
                #expect(reasons == expected, "\(flags): \(Verdict.text(date)) kept by Coffer for \(reasons), by restic for \(expected)")
            }
            // Nothing went in a dry run.
            #expect(try versionDates().count == dates.count, "\(flags): the dry run dropped versions")
            lastDryRun = ours
        }
        let listingAfter = try coffer("versions plan.txt")
        #expect(Self.listedDates(listingAfter.output).count == dates.count, "\(listingAfter.output)")

        // The last rule set for real: what is left is exactly what its dry run kept.
        let rules = try #require(Self.ruleSets.last).joined(separator: " ")
        let expected = try #require(lastDryRun)
        let pruned = try coffer("versions --prune \(rules) plan.txt")
        #expect(pruned.status == 0, "\(pruned.errors)")
        #expect(pruned.output.contains("\(expected.kept.count) kept, \(expected.removed.count) dropped"), "\(pruned.output)")
        let left = try versionDates()
        #expect(left.count == Set(left).count)
        #expect(Set(left) == Set(expected.kept.keys), "left: \(left.sorted().map(Verdict.text))")
        #expect(Self.listedDates(try coffer("versions plan.txt").output).count == expected.kept.count)
        // And the live file is still the last content written.
        #expect(directory.contents("container/Documents/UserFiles/plan.txt") == Self.content(dates.count))
    }

    /// The content of save `index`: different every time.
    static func content(_ index: Int) -> String { "plan, draft \(index)\n" }

    /// Saves `plan.txt` once for each date, and once more: before each save after the first,
    /// the content then live is dated to the date before, so that save keeps it as a version
    /// with that date.
    func plant(_ dates: [Date]) throws {
        for index in 0...dates.count {
            if index > 0 {
                try FileManager.default.setAttributes([.modificationDate: dates[index - 1]], ofItemAtPath: liveFile)
            }
            let saved = try coffer("write --replace plan.txt", input: Self.content(index))
            guard saved.status == 0 else { throw HarnessError("save \(index) failed (\(saved.status)): \(saved.errors)") }
        }
    }

    /// The dates (seconds since 1970) `versions --json plan.txt` gives.
    func versionDates() throws -> [Int] {
        let result = try coffer("versions --json plan.txt")
        guard result.status == 0 else { throw HarnessError("versions --json failed: \(result.errors)") }
        let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        guard let versions = object?["versions"] as? [[String: Any]] else {
            throw HarnessError("versions --json wrote \(result.output)")
        }
        return try versions.map { entry in
            guard let text = entry["date"] as? String else { throw HarnessError("a version without a date: \(entry)") }
            return try PruneOracleClock.seconds(PruneOracleClock.iso8601(text))
        }
    }

    /// The dates in the plain listing (`ID  YYYY-MM-DD HH:MM:SS  SIZE  FRONTEND SESSION`), in order.
    static func listedDates(_ output: String) -> [String] {
        output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 3, Int(fields[0]) != nil else { return nil }
            return String(fields[1]) + " " + String(fields[2])
        }
    }

    /// Coffer's `versions --prune --dry-run --json` for the one file.
    static func cofferVerdict(_ output: String) throws -> Verdict {
        guard let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
              object["dryRun"] as? Bool == true, let files = object["files"] as? [[String: Any]] else {
            throw HarnessError("versions --prune --dry-run --json wrote \(output)")
        }
        guard files.count == 1, files[0]["path"] as? String == "files:/plan.txt" else {
            throw HarnessError("expected files:/plan.txt alone: \(output)")
        }
        var verdict = Verdict(kept: [:], removed: [])
        for entry in files[0]["keep"] as? [[String: Any]] ?? [] {
            guard let text = entry["date"] as? String, let reasons = entry["reasons"] as? [String] else {
                throw HarnessError("a kept version without a date or reasons: \(entry)")
            }
            let seconds = PruneOracleClock.seconds(try PruneOracleClock.iso8601(text))
            guard verdict.kept.updateValue(reasons, forKey: seconds) == nil else { throw HarnessError("\(text) kept twice") }
        }
        for entry in files[0]["remove"] as? [[String: Any]] ?? [] {
            guard let text = entry["date"] as? String else { throw HarnessError("a removed version without a date: \(entry)") }
            if let reasons = entry["reasons"] as? [String], !reasons.isEmpty {
                throw HarnessError("\(text) removed with reasons \(reasons)")
            }
            verdict.removed.insert(PruneOracleClock.seconds(try PruneOracleClock.iso8601(text)))
        }
        return verdict
    }
}

/// Dates as this test writes and reads them, all in UTC.
enum PruneOracleClock {
    /// `2025-10-31 12:00:00`, in UTC.
    static func date(_ text: String) -> Date {
        guard let date = formatter().date(from: text) else { fatalError("not a date: \(text)") }
        return date
    }

    static func text(_ date: Date) -> String { formatter().string(from: date) }

    static func seconds(_ date: Date) -> Int { Int(date.timeIntervalSince1970.rounded(.down)) }

    /// An ISO 8601 time with its zone (`Z` or an offset), with or without fractions of a second.
    static func iso8601(_ text: String) throws -> Date { try ResticForget.time(text) }

    private static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter
    }
}

/// restic 0.14 in a temporary folder: a repository, a snapshot of one small file at each date
/// asked for, and what `forget --dry-run --json` would keep. Every command has a deadline, runs
/// in UTC with no cache and nothing of the caller's environment.
struct PruneOracleRestic: Sendable {
    static let executable: String? = {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin"]
        for folder in folders where FileManager.default.isExecutableFile(atPath: folder + "/restic") {
            guard let version = try? TestProcess.run([folder + "/restic", "version"], timeout: 30) else { continue }
            if version.status == 0 && version.outputText.hasPrefix("restic 0.14.") { return folder + "/restic" }
        }
        return nil
    }()

    static let required = ProcessInfo.processInfo.environment["COFFER_REQUIRE_RESTIC"] == "1"

    /// Commands run at once: each spends most of its time deriving the key on one core.
    static let width = max(4, min(2 * ProcessInfo.processInfo.activeProcessorCount, 8))

    let executable: String
    let folder: String
    let file: String
    let environment: [String: String]

    init(in directory: TemporaryDirectory) throws {
        guard let executable = Self.executable else {
            throw HarnessError("restic 0.14 not found in PATH or at /usr/bin/restic (COFFER_REQUIRE_RESTIC=1)")
        }
        self.executable = executable
        directory.make(["restic/data/plan.txt": "a plan\n", "restic/home/": ""])
        folder = directory.url("restic")
        file = directory.url("restic/data/plan.txt")
        environment = ["RESTIC_REPOSITORY": directory.url("restic/repository"), "RESTIC_PASSWORD": "coffer", "TZ": "UTC",
                       "HOME": directory.url("restic/home"), "XDG_CACHE_HOME": directory.url("restic/home"),
                       "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"]
        try run(["init"])
    }

    @discardableResult
    func run(_ arguments: [String]) throws -> Data {
        let result = try TestProcess.run([executable, "--no-cache", "--quiet"] + arguments, environment: environment,
                                         workingDirectory: folder, timeout: 60)
        guard result.status == 0 else {
            throw HarnessError("restic \(arguments.joined(separator: " ")) ended with \(result.status): \(result.errorText)")
        }
        return result.output
    }

    func snapshot(at dates: [Date]) async throws {
        _ = try await concurrently(dates) { date in
            try run(["backup", "--host", "h", "--time", PruneOracleClock.text(date), file])
        }
    }

    /// What `forget --dry-run --json` says for each rule set.
    func forget(_ ruleSets: [[String]]) async throws -> [VersionPruneOracleTests.Verdict] {
        try await concurrently(ruleSets) { rules in
            try Self.verdict(run(["forget", "--dry-run", "--no-lock", "--json", "--host", "h"] + rules), rules: rules)
        }
    }

    static func verdict(_ output: Data, rules: [String]) throws -> VersionPruneOracleTests.Verdict {
        guard let answer = try ResticForget.read(output) else {
            throw HarnessError("restic forget \(rules.joined(separator: " ")) answered nothing")
        }
        var verdict = VersionPruneOracleTests.Verdict(kept: [:], removed: [])
        for (date, reasons) in answer.kept {
            guard verdict.kept.updateValue(reasons, forKey: PruneOracleClock.seconds(date)) == nil else {
                throw HarnessError("restic kept \(date) twice")
            }
        }
        verdict.removed = Set(answer.removed.map(PruneOracleClock.seconds))
        return verdict
    }

    /// `body` for each item, at most ``width`` at once, each waited for on a thread of its own;
    /// the results in the items' order.
    func concurrently<Item: Sendable, Output: Sendable>(_ items: [Item],
                                                         _ body: @escaping @Sendable (Item) throws -> Output) async throws -> [Output] {
        try await withThrowingTaskGroup(of: (Int, Output).self) { group in
            var results = [Output?](repeating: nil, count: items.count)
            var next = 0
            while next < min(Self.width, items.count) {
                let index = next
                group.addTask { (index, try await offPool { try body(items[index]) }) }
                next += 1
            }
            while let (index, output) = try await group.next() {
                results[index] = output
                if next < items.count {
                    let index = next
                    group.addTask { (index, try await offPool { try body(items[index]) }) }
                    next += 1
                }
            }
            return results.map { $0! }
        }
    }
}
