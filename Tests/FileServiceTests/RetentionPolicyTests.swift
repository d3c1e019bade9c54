import CofferTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import FileService

/// Pruning versions by restic's `forget` policy: durations read and printed, each rule on
/// small lists made by hand, Go's calendar arithmetic, and the whole policy checked against
/// restic 0.14 itself (``ResticOracle``).
struct RetentionPolicyTests {
    let utc = TimeZone(secondsFromGMT: 0)!

    /// `text` (`2025-03-31 12:00:00`) as a moment, read in UTC unless told otherwise.
    static func date(_ text: String, in timeZone: TimeZone = TimeZone(secondsFromGMT: 0)!) -> Date {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        guard let date = formatter.date(from: text) else { fatalError("not a date: \(text)") }
        return date
    }

    /// `date` written as ``date(_:in:)`` reads it, in UTC.
    static func text(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: date)
    }

    /// The dates `policy` keeps out of `texts` (in UTC), each with its reasons, newest first.
    func kept(_ policy: RetentionPolicy, _ texts: [String], now: Date = Date()) -> [String] {
        let decisions = policy.apply(to: texts.map { Self.date($0) }, timeZone: utc, now: now)
        #expect(decisions.map(\.index) == Array(texts.indices))
        #expect(decisions.allSatisfy { $0.keep == !$0.reasons.isEmpty })
        return decisions.filter(\.keep).sorted { texts[$0.index] > texts[$1.index] }
            .map { texts[$0.index] + " " + $0.reasons.joined(separator: ", ") }
    }

    // MARK: Durations

    @Test func durationsAreReadInResticsForm() throws {
        let cases: [(String, RetentionDuration)] = [
            ("2y5m7d3h", RetentionDuration(years: 2, months: 5, days: 7, hours: 3)),
            ("7d", RetentionDuration(days: 7)),
            ("1m", RetentionDuration(months: 1)),
            ("100y", RetentionDuration(years: 100)),
            ("1y2h", RetentionDuration(years: 1, hours: 2)),
            ("36h", RetentionDuration(hours: 36)),
            ("007d", RetentionDuration(days: 7)),
            ("0d", RetentionDuration()),
            ("0y0m0d0h", RetentionDuration()),
        ]
        for (text, expected) in cases {
            #expect(RetentionDuration(parsing: text) == expected, "\(text)")
        }
    }

    @Test func anythingElseIsNotADuration() {
        for text in ["", "d", "7", "7x", "7D", "-1d", "+1d", "1.5d", "1d2y", "1h1d", "1d1d", " 1d", "1d ", "1 d",
                     "１d", "99999999999999999999y", "1y-2m", "y1"] {
            #expect(RetentionDuration(parsing: text) == nil, "\(text)")
        }
    }

    @Test func durationsPrintAsResticPrintsThem() {
        #expect(RetentionDuration(years: 2, months: 5, days: 7, hours: 3).description == "2y5m7d3h")
        #expect(RetentionDuration(years: 1, days: 2).description == "1y2d")
        #expect(RetentionDuration(hours: 36).description == "36h")
        #expect(RetentionDuration(parsing: "0y1m0d")?.description == "1m")
        // restic prints a zero duration as nothing at all.
        #expect(RetentionDuration().description == "")
        #expect(RetentionDuration().isZero && !RetentionDuration(hours: 1).isZero)
    }

    @Test func goingBackRunsOverTheEndOfAMonthAsGoDoes() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        func back(_ duration: String, from text: String) -> String {
            Self.text(RetentionDuration(parsing: duration)!.subtracted(from: Self.date(text), in: calendar))
        }
        // 31 February is 3 March (2 March in a leap year); the clock time stays.
        #expect(back("1m", from: "2025-03-31 12:00:00") == "2025-03-03 12:00:00")
        #expect(back("1m", from: "2024-03-31 12:00:00") == "2024-03-02 12:00:00")
        #expect(back("1m", from: "2024-12-31 08:00:00") == "2024-12-01 08:00:00")
        #expect(back("2m", from: "2025-01-31 00:00:00") == "2024-12-01 00:00:00")
        #expect(back("1m", from: "2025-01-15 00:00:00") == "2024-12-15 00:00:00")
        #expect(back("1y", from: "2024-02-29 10:00:00") == "2023-03-01 10:00:00")
        #expect(back("1d", from: "2024-03-01 10:00:00") == "2024-02-29 10:00:00")
        #expect(back("1y1m1d", from: "2025-03-01 00:00:00") == "2024-01-31 00:00:00")
        #expect(back("2h", from: "2025-01-01 01:00:00") == "2024-12-31 23:00:00")
        #expect(back("1d2h", from: "2025-03-01 01:00:00") == "2025-02-27 23:00:00")
        #expect(back("100y", from: "2025-03-31 12:00:00") == "1925-03-31 12:00:00")
    }

    @Test func daysAreCalendarDaysAndHoursElapsedTimeAcrossASummerTimeChange() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "Europe/London"))
        let london = calendar.timeZone
        // Noon on 31 March 2024 (summer time began at 1:00 that morning): a day back is noon
        // the day before, 23 hours earlier; 24 hours back is 11:00.
        let noon = Self.date("2024-03-31 12:00:00", in: london)
        #expect(RetentionDuration(days: 1).subtracted(from: noon, in: calendar) == Self.date("2024-03-30 12:00:00", in: london))
        #expect(RetentionDuration(hours: 24).subtracted(from: noon, in: calendar) == Self.date("2024-03-30 11:00:00", in: london))
        // 1:30 on 31 March 2024 did not happen in London; Go's time.Date makes it 1:30 UTC.
        let skipped = RetentionDuration(days: 1).subtracted(from: Self.date("2024-04-01 01:30:00", in: london), in: calendar)
        #expect(skipped == Self.date("2024-03-31 01:30:00"))
        // 1:30 on 27 October 2024 happened twice; Go's time.Date takes the second (GMT).
        let repeated = RetentionDuration(days: 1).subtracted(from: Self.date("2024-10-28 01:30:00", in: london), in: calendar)
        #expect(repeated == Self.date("2024-10-27 01:30:00"))
    }

    // MARK: Each rule

    @Test func keepLastKeepsTheNewest() {
        let dates = ["2025-01-01 10:00:00", "2025-01-03 10:00:00", "2025-01-02 10:00:00", "2025-01-04 10:00:00"]
        #expect(kept(RetentionPolicy(keepLast: 2), dates) == ["2025-01-04 10:00:00 last snapshot",
                                                             "2025-01-03 10:00:00 last snapshot"])
        #expect(kept(RetentionPolicy(keepLast: 10), dates).count == 4)
    }

    @Test func keepHourlyKeepsTheNewestOfEachHour() {
        let dates = ["2025-01-01 10:05:00", "2025-01-01 10:50:00", "2025-01-01 11:10:00", "2025-01-01 11:59:59",
                     "2025-01-01 12:00:00", "2025-01-01 08:00:00"]
        #expect(kept(RetentionPolicy(keepHourly: 3), dates) == ["2025-01-01 12:00:00 hourly snapshot",
                                                               "2025-01-01 11:59:59 hourly snapshot",
                                                               "2025-01-01 10:50:00 hourly snapshot"])
    }

    @Test func keepDailyMonthlyAndYearlyKeepTheNewestOfEach() {
        let dates = ["2023-12-31 23:59:59", "2024-01-01 00:00:00", "2024-01-01 18:00:00", "2024-01-31 09:00:00",
                     "2024-02-01 09:00:00", "2024-02-01 08:00:00"]
        #expect(kept(RetentionPolicy(keepDaily: 3), dates) == ["2024-02-01 09:00:00 daily snapshot",
                                                              "2024-01-31 09:00:00 daily snapshot",
                                                              "2024-01-01 18:00:00 daily snapshot"])
        #expect(kept(RetentionPolicy(keepMonthly: 5), dates) == ["2024-02-01 09:00:00 monthly snapshot",
                                                                "2024-01-31 09:00:00 monthly snapshot",
                                                                "2023-12-31 23:59:59 monthly snapshot"])
        #expect(kept(RetentionPolicy(keepYearly: 1), dates) == ["2024-02-01 09:00:00 yearly snapshot"])
    }

    @Test func weeksAreISOWeeksAcrossTheTurnOfTheYear() {
        // 29 December 2024 (a Sunday) ends week 52 of 2024; 30 December begins week 1 of 2025,
        // which ends on 5 January. 31 December 2020 and 3 January 2021 are both in week 53 of 2020.
        let dates = ["2024-12-29 10:00:00", "2024-12-30 00:00:00", "2025-01-01 12:00:00", "2025-01-05 23:59:59",
                     "2025-01-06 00:00:00", "2024-12-23 00:00:00", "2024-12-22 23:59:59",
                     "2020-12-31 12:00:00", "2021-01-03 12:00:00", "2020-12-27 12:00:00"]
        #expect(kept(RetentionPolicy(keepWeekly: 10), dates) == ["2025-01-06 00:00:00 weekly snapshot",
                                                                "2025-01-05 23:59:59 weekly snapshot",
                                                                "2024-12-29 10:00:00 weekly snapshot",
                                                                "2024-12-22 23:59:59 weekly snapshot",
                                                                "2021-01-03 12:00:00 weekly snapshot",
                                                                "2020-12-27 12:00:00 weekly snapshot"])
    }

    @Test func bucketsAreTheTimeZones() {
        // 23:30 and 00:30 UTC are two days in UTC, one day five hours west of it.
        let dates = [Self.date("2025-01-01 23:30:00"), Self.date("2025-01-02 00:30:00")]
        let daily = RetentionPolicy(keepDaily: 5)
        #expect(daily.apply(to: dates, timeZone: utc).map(\.keep) == [true, true])
        #expect(daily.apply(to: dates, timeZone: TimeZone(secondsFromGMT: -5 * 3600)!).map(\.keep) == [false, true])
    }

    @Test func keepWithinCountsBackFromTheNewestNotFromNow() {
        let dates = ["2020-05-10 12:00:00", "2020-05-09 12:00:01", "2020-05-09 12:00:00", "2020-05-01 00:00:00"]
        // Exactly one day before the newest is not within a day (restic's "after", not "at or after").
        #expect(kept(RetentionPolicy(keepWithin: RetentionDuration(days: 1)), dates) == ["2020-05-10 12:00:00 within 1d",
                                                                                        "2020-05-09 12:00:01 within 1d"])
        #expect(kept(RetentionPolicy(keepWithin: RetentionDuration(days: 9, hours: 13)), dates).count == 4)
    }

    @Test func aDateAfterNowIsJudgedButIsNotTheReference() {
        let now = Self.date("2025-03-31 13:00:00")
        let dates = ["2025-03-31 12:00:00", "2025-03-30 12:30:00", "2025-03-29 12:00:00", "2025-06-01 00:00:00"]
        #expect(kept(RetentionPolicy(keepWithin: RetentionDuration(days: 1)), dates, now: now)
                == ["2025-06-01 00:00:00 within 1d", "2025-03-31 12:00:00 within 1d", "2025-03-30 12:30:00 within 1d"])
        // With every date after now, restic counts back from Go's zero time: all are within.
        #expect(kept(RetentionPolicy(keepWithin: RetentionDuration(days: 1)), dates, now: Self.date("2000-01-01 00:00:00")).count == 4)
    }

    @Test func withinRulesKeepOneABucketInsideTheirSpan() {
        let dates = ["2025-03-31 12:00:00", "2025-03-31 11:30:00", "2025-03-31 09:59:00", "2025-03-30 23:00:00",
                     "2025-03-30 13:00:00", "2025-03-30 12:00:00", "2025-03-29 12:00:00"]
        #expect(kept(RetentionPolicy(keepWithinHourly: RetentionDuration(hours: 2)), dates)
                == ["2025-03-31 12:00:00 hourly within 2h", "2025-03-31 11:30:00 hourly within 2h"])
        #expect(kept(RetentionPolicy(keepWithinDaily: RetentionDuration(days: 1)), dates)
                == ["2025-03-31 12:00:00 daily within 1d", "2025-03-30 23:00:00 daily within 1d"])
        #expect(kept(RetentionPolicy(keepWithinWeekly: RetentionDuration(months: 1)), dates)
                == ["2025-03-31 12:00:00 weekly within 1m", "2025-03-30 23:00:00 weekly within 1m"])
        #expect(kept(RetentionPolicy(keepWithinMonthly: RetentionDuration(years: 1),
                                     keepWithinYearly: RetentionDuration(years: 1)), dates)
                == ["2025-03-31 12:00:00 monthly within 1y, yearly within 1y"])
    }

    @Test func reasonsComeInResticsOrder() {
        let policy = RetentionPolicy(keepLast: 1, keepHourly: 1, keepDaily: 1, keepWeekly: 1, keepMonthly: 1, keepYearly: 1,
                                     keepWithin: RetentionDuration(days: 1), keepWithinHourly: RetentionDuration(days: 1),
                                     keepWithinDaily: RetentionDuration(days: 1), keepWithinWeekly: RetentionDuration(days: 1),
                                     keepWithinMonthly: RetentionDuration(days: 1), keepWithinYearly: RetentionDuration(days: 1))
        let decision = policy.apply(to: [Self.date("2025-03-31 12:00:00")], timeZone: utc)
        #expect(decision[0].reasons == ["within 1d", "last snapshot", "hourly snapshot", "daily snapshot", "weekly snapshot",
                                        "monthly snapshot", "yearly snapshot", "hourly within 1d", "daily within 1d",
                                        "weekly within 1d", "monthly within 1d", "yearly within 1d"])
    }

    @Test func theEmptyPolicyKeepsEverything() {
        let dates = [Self.date("2025-03-31 12:00:00"), Self.date("2001-01-01 00:00:00")]
        for policy in [RetentionPolicy(), RetentionPolicy(keepLast: 0, keepWithin: RetentionDuration(), keepWithinDaily: RetentionDuration(days: 0))] {
            #expect(policy.isEmpty)
            #expect(policy.apply(to: dates) == [RetentionDecision(index: 0, keep: true, reasons: ["policy is empty"]),
                                                RetentionDecision(index: 1, keep: true, reasons: ["policy is empty"])])
        }
        #expect(!RetentionPolicy.standard.isEmpty)
        #expect(RetentionPolicy(keepLast: 3).apply(to: []).isEmpty)
    }

    @Test func aNegativeCountIsARuleThatKeepsNothing() {
        // restic 0.14 has no "unlimited": `--keep-daily -1` keeps nothing, and alone lets everything go.
        let dates = ["2025-03-31 12:00:00", "2025-03-30 12:00:00"]
        #expect(!RetentionPolicy(keepDaily: -1).isEmpty)
        #expect(kept(RetentionPolicy(keepDaily: -1), dates).isEmpty)
        #expect(kept(RetentionPolicy(keepDaily: -1, keepWithin: RetentionDuration(hours: 1)), dates) == ["2025-03-31 12:00:00 within 1h"])
    }

    @Test func equalDatesKeepTheirOrder() {
        let same = Self.date("2025-03-31 12:00:00")
        let dates = [Self.date("2025-03-30 12:00:00"), same, same, same]
        let last = RetentionPolicy(keepLast: 2).apply(to: dates, timeZone: utc)
        #expect(last.map(\.keep) == [false, true, true, false])
        let daily = RetentionPolicy(keepDaily: 7).apply(to: dates, timeZone: utc)
        #expect(daily.map(\.keep) == [true, true, false, false])
        #expect(daily.map(\.index) == [0, 1, 2, 3])
    }

    @Test func theStandardPolicy() {
        let standard = RetentionPolicy.standard
        #expect(standard == RetentionPolicy(keepWithin: RetentionDuration(days: 1), keepWithinHourly: RetentionDuration(days: 7),
                                            keepWithinDaily: RetentionDuration(months: 1),
                                            keepWithinWeekly: RetentionDuration(years: 100)))
        let dates = ["2025-03-31 12:00:00", "2025-03-31 11:00:00", "2025-03-30 09:10:00", "2025-03-30 09:05:00",
                     "2025-03-20 10:00:00", "2025-03-20 08:00:00", "2025-01-15 10:00:00", "2025-01-14 10:00:00"]
        #expect(kept(standard, dates) == [
            "2025-03-31 12:00:00 within 1d, hourly within 7d, daily within 1m, weekly within 100y",
            "2025-03-31 11:00:00 within 1d, hourly within 7d",
            "2025-03-30 09:10:00 hourly within 7d, daily within 1m, weekly within 100y",
            "2025-03-20 10:00:00 daily within 1m, weekly within 100y",
            "2025-01-15 10:00:00 weekly within 100y",
        ])
    }

    @Test func tenThousandDatesAreQuick() {
        let start = Self.date("2020-01-01 00:00:00")
        // Every 37 minutes or so, for eight months and more, given out of order.
        let dates = (0..<10_000).map { start.addingTimeInterval(Double(($0 * 7_919) % 10_000) * 2_213.5) }
        let everything = RetentionPolicy(keepLast: 50, keepHourly: 500, keepDaily: 100, keepWeekly: 30, keepMonthly: 12, keepYearly: 5,
                                         keepWithin: RetentionDuration(days: 1), keepWithinHourly: RetentionDuration(days: 7),
                                         keepWithinDaily: RetentionDuration(months: 1), keepWithinWeekly: RetentionDuration(years: 100),
                                         keepWithinMonthly: RetentionDuration(years: 1), keepWithinYearly: RetentionDuration(years: 5))
        let london = TimeZone(identifier: "Europe/London") ?? utc
        for policy in [RetentionPolicy.standard, everything] {
            _ = policy.apply(to: dates, timeZone: london)
            let clock = ContinuousClock()
            var fastest = Duration.seconds(60)
            for _ in 0..<3 {
                fastest = min(fastest, clock.measure { _ = policy.apply(to: dates, timeZone: london) })
            }
            // Under 10 ms in a release build; a debug build, loaded by other tests, is given more room.
            #expect(fastest < .milliseconds(250), "\(fastest)")
        }
    }

    // MARK: restic itself

    /// Snapshots planted over three months and a bit, with several in one hour and one day,
    /// some a minute or a second apart, two at the same second, across the ends of months, the
    /// turn of the year (and of ISO weeks), and one in the future. The newest before now is
    /// 31 March 2025 at noon: a month before it is 3 March at noon (31 February run over).
    static let planted = [
        "2024-12-20 08:00:00", "2024-12-23 09:15:00", "2024-12-29 10:00:00", "2024-12-29 23:59:00",
        "2024-12-30 00:01:00", "2024-12-31 12:00:00", "2024-12-31 23:59:59",
        "2025-01-01 00:00:00", "2025-01-01 00:00:00", "2025-01-05 18:00:00", "2025-01-06 07:00:00",
        "2025-01-31 23:30:00", "2025-02-01 00:30:00", "2025-02-16 10:00:00", "2025-02-17 10:00:00",
        "2025-02-28 22:00:00", "2025-03-01 01:00:00",
        "2025-03-02 23:59:59", "2025-03-03 11:59:59", "2025-03-03 12:00:00", "2025-03-03 12:00:01",
        "2025-03-10 09:00:00", "2025-03-17 09:00:00", "2025-03-23 20:00:00", "2025-03-24 08:00:00",
        "2025-03-24 12:00:00", "2025-03-24 12:30:00", "2025-03-28 09:00:00",
        "2025-03-29 14:00:00", "2025-03-30 11:00:00", "2025-03-30 12:00:00", "2025-03-30 12:00:01",
        "2025-03-30 18:45:00", "2025-03-31 08:00:00", "2025-03-31 09:00:00", "2025-03-31 09:01:00",
        "2025-03-31 09:59:59", "2025-03-31 10:00:00", "2025-03-31 11:00:00", "2025-03-31 11:59:00",
        "2025-03-31 12:00:00",
        "2099-06-01 00:00:00",
    ]

    /// The rule sets checked: each rule alone, the "within" rules, combinations, a negative
    /// count (with `--keep-within 1d`, and alone), the empty policy and Coffer's standard one.
    static let ruleSets: [RetentionPolicy] = [
        RetentionPolicy(keepLast: 5),
        RetentionPolicy(keepHourly: 8),
        RetentionPolicy(keepDaily: 10),
        RetentionPolicy(keepWeekly: 20),
        RetentionPolicy(keepMonthly: 4),
        RetentionPolicy(keepYearly: 3),
        RetentionPolicy(keepWithin: RetentionDuration(months: 1)),
        RetentionPolicy(keepWithinHourly: RetentionDuration(days: 1, hours: 12)),
        RetentionPolicy(keepWithinDaily: RetentionDuration(months: 1)),
        RetentionPolicy(keepWithinWeekly: RetentionDuration(months: 2)),
        RetentionPolicy(keepWithinMonthly: RetentionDuration(months: 2), keepWithinYearly: RetentionDuration(years: 1)),
        RetentionPolicy(keepLast: 3, keepHourly: 4, keepDaily: 5, keepWeekly: 3, keepMonthly: 2, keepYearly: 1,
                        keepWithin: RetentionDuration(days: 2)),
        RetentionPolicy(keepDaily: 3, keepWithin: RetentionDuration(hours: 3), keepWithinDaily: RetentionDuration(days: 10),
                        keepWithinWeekly: RetentionDuration(months: 1, days: 5)),
        RetentionPolicy(keepDaily: -1, keepWithin: RetentionDuration(days: 1)),
        RetentionPolicy(keepLast: -1),
        RetentionPolicy(),
        RetentionPolicy.standard,
    ]

    @Test(.enabled(if: ResticOracle.executable != nil || ResticOracle.required, "restic 0.14 not found"), .ownsProcesses)
    func keepsWhatResticKeepsForTheSameReasons() throws {
        let directory = TemporaryDirectory("coffer-restic")
        let oracle = try ResticOracle(in: directory)
        let dates = Self.planted.map { Self.date($0) }
        try oracle.snapshot(at: dates)
        let answers = try oracle.forget(Self.ruleSets)
        for (policy, answer) in zip(Self.ruleSets, answers) {
            let flags = ResticOracle.arguments(for: policy).joined(separator: " ")
            let decisions = policy.apply(to: dates, timeZone: utc)
            let ours = decisions.filter(\.keep).map { Self.text(dates[$0.index]) + " " + $0.reasons.joined(separator: ", ") }.sorted()
            guard let answer else {
                // restic applies no policy at all when none is given: it keeps every snapshot.
                #expect(policy.isEmpty, "restic applied no policy for \(flags)")
                #expect(decisions.allSatisfy { $0.keep })
                continue
            }
            let theirs = answer.kept.map { Self.text($0.date) + " " + $0.reasons.joined(separator: ", ") }.sorted()
            #expect(ours == theirs, "\(flags)")
            #expect(answer.kept.count + answer.removed.count == dates.count, "\(flags)")
            let removed = decisions.filter { !$0.keep }.map { Self.text(dates[$0.index]) }.sorted()
            #expect(removed == answer.removed.map(Self.text).sorted(), "\(flags)")
        }
    }
}

/// restic 0.14, as the reference for ``RetentionPolicy``: a repository in a temporary folder,
/// snapshots of one small file made at the dates asked for, and what `forget --dry-run --json`
/// would keep under a policy.
///
/// restic is looked for in `PATH`, then at `/usr/bin/restic`, and must say it is 0.14. Without
/// it the tests that use it are skipped, unless `COFFER_REQUIRE_RESTIC=1` makes that a failure.
/// Every command runs with a deadline (``TestProcess/run(_:input:environment:workingDirectory:timeout:output:errors:)``),
/// in UTC, with the repository's cache turned off and nothing of the caller's environment.
struct ResticOracle {
    /// restic 0.14's path, if it is here.
    static let executable: String? = {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin"]
        for folder in folders where FileManager.default.isExecutableFile(atPath: folder + "/restic") {
            let path = folder + "/restic"
            guard let version = try? TestProcess.run([path, "version"], timeout: 30) else { continue }
            if version.status == 0 && version.outputText.hasPrefix("restic 0.14.") { return path }
        }
        return nil
    }()

    /// Whether a missing restic is a failure (`COFFER_REQUIRE_RESTIC=1`).
    static let required = ProcessInfo.processInfo.environment["COFFER_REQUIRE_RESTIC"] == "1"

    /// The most commands run at once. Each spends most of its half second deriving the key on
    /// one core, and some of it waiting: two a core (at least four) keeps the cores busy.
    static let width = max(4, min(2 * ProcessInfo.processInfo.activeProcessorCount, 8))

    struct Missing: Error, CustomStringConvertible {
        var description: String { "restic 0.14 not found in PATH or at /usr/bin/restic (Debian's package restic)" }
    }

    /// What `forget` would do under one policy.
    struct Answer: Sendable {
        /// The snapshots kept, with their reasons (restic's `matches`).
        var kept: [(date: Date, reasons: [String])]
        /// The snapshots that would go.
        var removed: [Date]
    }

    let executable: String
    let directory: TemporaryDirectory
    /// The one file every snapshot is of.
    let file: String
    let environment: [String: String]

    /// A new repository in `directory`.
    init(in directory: TemporaryDirectory) throws {
        guard let executable = Self.executable else { throw Missing() }
        self.executable = executable
        self.directory = directory
        directory.make(["data/notes.txt": "a version\n", "home/": ""])
        file = directory.url("data/notes.txt")
        environment = ["RESTIC_REPOSITORY": directory.url("repository"), "RESTIC_PASSWORD": "coffer", "TZ": "UTC",
                       "HOME": directory.url("home"), "XDG_CACHE_HOME": directory.url("home"), "LANG": "C.UTF-8",
                       "PATH": "/usr/bin:/bin"]
        try run(["init"])
    }

    /// Runs `restic <arguments>` to its end, within `timeout` seconds; its output when it succeeds.
    @discardableResult
    func run(_ arguments: [String], timeout: Double = 90) throws -> Data {
        let command = [executable, "--no-cache", "--quiet"] + arguments
        let result = try TestProcess.run(command, environment: environment, workingDirectory: directory.path, timeout: timeout)
        guard result.status == 0 else {
            throw HarnessError("restic \(arguments.joined(separator: " ")) ended with \(result.status): \(result.errorText)")
        }
        return result.output
    }

    /// One snapshot of the file at each of `dates` (to the second, in UTC), a few made at once.
    func snapshot(at dates: [Date]) throws {
        _ = try concurrently(dates) { date in
            try run(["backup", "--host", "h", "--time", Self.time(date), file])
        }
    }

    /// `date` as `backup --time` reads it (`2025-03-31 12:00:00`, in the repository's time zone, UTC).
    static func time(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: date)
    }

    /// What `restic forget --dry-run --json` says for each of `policies`: `nil` where restic
    /// applied no policy (it prints nothing for an empty one).
    func forget(_ policies: [RetentionPolicy]) throws -> [Answer?] {
        try concurrently(policies) { policy in
            let output = try run(["forget", "--dry-run", "--no-lock", "--json", "--host", "h"] + Self.arguments(for: policy))
            return try Self.answer(output)
        }
    }

    /// `restic forget`'s options for `policy`.
    static func arguments(for policy: RetentionPolicy) -> [String] {
        var arguments: [String] = []
        let counts = [("--keep-last", policy.keepLast), ("--keep-hourly", policy.keepHourly), ("--keep-daily", policy.keepDaily),
                      ("--keep-weekly", policy.keepWeekly), ("--keep-monthly", policy.keepMonthly),
                      ("--keep-yearly", policy.keepYearly)]
        for case let (flag, count?) in counts { arguments += [flag, String(count)] }
        let durations = [("--keep-within", policy.keepWithin), ("--keep-within-hourly", policy.keepWithinHourly),
                         ("--keep-within-daily", policy.keepWithinDaily), ("--keep-within-weekly", policy.keepWithinWeekly),
                         ("--keep-within-monthly", policy.keepWithinMonthly), ("--keep-within-yearly", policy.keepWithinYearly)]
        for case let (flag, duration?) in durations where !duration.isZero { arguments += [flag, duration.description] }
        return arguments
    }

    /// `forget --json`'s answer read: one group (one host, one path) or none.
    static func answer(_ output: Data) throws -> Answer? {
        try ResticForget.read(output).map { Answer(kept: $0.kept, removed: $0.removed) }
    }

    /// `body` for each of `items`, at most ``width`` at once, each on a thread of its own; the
    /// results in the order of `items`, or the first error. (Threads, not `concurrentPerform`,
    /// which runs no more at once than there are cores.)
    private func concurrently<Item: Sendable, Output: Sendable>(_ items: [Item], _ body: @escaping @Sendable (Item) throws -> Output) throws -> [Output] {
        let work = Work<Output>()
        let group = DispatchGroup()
        for _ in 0..<min(Self.width, items.count) {
            group.enter()
            Thread {
                while true {
                    let index = work.next.add(1, ordering: .relaxed).oldValue
                    guard index < items.count else { break }
                    let outcome = Result { try body(items[index]) }
                    work.results.withLock { $0[index] = outcome }
                }
                group.leave()
            }.start()
        }
        // Each command has its own deadline, so every thread ends.
        group.wait()
        return try work.results.withLock { results in try items.indices.map { try results[$0]!.get() } }
    }

    /// What the threads of ``concurrently(_:_:)`` share: the next item, and the results so far.
    private final class Work<Output: Sendable>: Sendable {
        let next = Atomic<Int>(0)
        let results = Mutex<[Int: Result<Output, any Error>]>([:])
    }
}
