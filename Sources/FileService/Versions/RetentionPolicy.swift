public import Foundation

/// A span of time as restic writes one for its `--keep-within*` options: years, months, days
/// and hours, such as `2y5m7d3h`.
///
/// It is calendar time, not a count of seconds: going back a month from the 31st of March is
/// done on the calendar, as restic (and Go's `time.AddDate`) does it (``subtracted(from:in:)``).
public struct RetentionDuration: Sendable, Hashable, CustomStringConvertible {
    /// Whole years.
    public var years: Int
    /// Whole months.
    public var months: Int
    /// Whole days.
    public var days: Int
    /// Whole hours.
    public var hours: Int

    /// A duration of the parts given; the others are zero.
    public init(years: Int = 0, months: Int = 0, days: Int = 0, hours: Int = 0) {
        self.years = years
        self.months = months
        self.days = days
        self.hours = hours
    }

    /// Reads restic's form: any of `<n>y`, `<n>m`, `<n>d`, `<n>h`, in that order, each at most
    /// once, each `n` a non-negative whole number in ASCII digits (`7d`, `1y6m`, `0h`).
    ///
    /// `nil` for anything else, the empty text included. (restic itself is more lenient: it
    /// takes the parts in any order, lets a later one overwrite an earlier, takes negative
    /// numbers, spaces around, and reads the empty text as zero. Coffer takes only the plain form.)
    public init?(parsing text: String) {
        var parts = [0, 0, 0, 0]
        var nextUnit = 0
        var bytes = text.utf8[...]
        guard !bytes.isEmpty else { return nil }
        while let first = bytes.first {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return nil }
            var number = 0
            while let digit = bytes.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) {
                let (times, overflowTimes) = number.multipliedReportingOverflow(by: 10)
                let (plus, overflowPlus) = times.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
                guard !overflowTimes && !overflowPlus else { return nil }
                number = plus
                bytes = bytes.dropFirst()
            }
            guard let unit = bytes.first,
                  let position = [UInt8(ascii: "y"), UInt8(ascii: "m"), UInt8(ascii: "d"), UInt8(ascii: "h")].firstIndex(of: unit),
                  position >= nextUnit else { return nil }
            parts[position] = number
            nextUnit = position + 1
            bytes = bytes.dropFirst()
        }
        self.init(years: parts[0], months: parts[1], days: parts[2], hours: parts[3])
    }

    /// Whether every part is zero. restic treats such a duration as not given at all.
    public var isZero: Bool { years == 0 && months == 0 && days == 0 && hours == 0 }

    /// The duration as restic prints it, in its reasons among others: the parts that are not
    /// zero, years first (`1m`, `2y7d`). A zero duration prints as the empty text, as in restic.
    public var description: String {
        var text = ""
        if years != 0 { text += "\(years)y" }
        if months != 0 { text += "\(months)m" }
        if days != 0 { text += "\(days)d" }
        if hours != 0 { text += "\(hours)h" }
        return text
    }

    /// The moment this long before `date`, reckoned as restic reckons it: the years, months and
    /// days taken off the date on the calendar (Go's `AddDate`), then the hours taken off as
    /// elapsed time.
    ///
    /// Matched with Go, not with `Calendar.date(byAdding:)`: a day past the end of its month
    /// runs on into the next (the 31st of March less a month is the 31st of February, which
    /// is the 3rd of March, or the 2nd in a leap year, where Foundation would give the 28th or
    /// 29th of February), and the clock time is kept. A clock time that the time zone skips
    /// or repeats is placed as Go places it. Only the calendar's time zone is used; the
    /// arithmetic is the proleptic Gregorian calendar's, as Go's is.
    public func subtracted(from date: Date, in calendar: Calendar) -> Date {
        let moved = GoCalendar.addingDate(years: -years, months: -months, days: -days, to: date, in: calendar.timeZone)
        return moved.addingTimeInterval(-Double(hours) * 3600)
    }
}

/// Which versions to keep: restic 0.14's `forget` policy, rule for rule.
///
/// Each rule keeps some versions; a version any rule keeps is kept, and the rest go. A count
/// that is `nil` or 0 and a duration that is `nil` or zero are rules not given. restic 0.14
/// has no "unlimited" count: a negative count (`--keep-daily -1`) counts as a rule given that
/// keeps nothing, so with no other rule every version goes. That is copied here as it is.
public struct RetentionPolicy: Sendable, Hashable {
    /// The newest n versions (`--keep-last`).
    public var keepLast: Int?
    /// The newest version of each of the last n hours that have one (`--keep-hourly`).
    public var keepHourly: Int?
    /// The newest version of each of the last n days that have one (`--keep-daily`).
    public var keepDaily: Int?
    /// The newest version of each of the last n ISO weeks that have one (`--keep-weekly`).
    public var keepWeekly: Int?
    /// The newest version of each of the last n months that have one (`--keep-monthly`).
    public var keepMonthly: Int?
    /// The newest version of each of the last n years that have one (`--keep-yearly`).
    public var keepYearly: Int?
    /// Every version made within this long of the newest (`--keep-within`).
    public var keepWithin: RetentionDuration?
    /// The newest version of each hour, within this long of the newest (`--keep-within-hourly`).
    public var keepWithinHourly: RetentionDuration?
    /// The newest version of each day, within this long of the newest (`--keep-within-daily`).
    public var keepWithinDaily: RetentionDuration?
    /// The newest version of each ISO week, within this long of the newest (`--keep-within-weekly`).
    public var keepWithinWeekly: RetentionDuration?
    /// The newest version of each month, within this long of the newest (`--keep-within-monthly`).
    public var keepWithinMonthly: RetentionDuration?
    /// The newest version of each year, within this long of the newest (`--keep-within-yearly`).
    public var keepWithinYearly: RetentionDuration?

    /// A policy of the rules given; none given is the empty policy, which keeps everything.
    public init(keepLast: Int? = nil, keepHourly: Int? = nil, keepDaily: Int? = nil, keepWeekly: Int? = nil,
                keepMonthly: Int? = nil, keepYearly: Int? = nil, keepWithin: RetentionDuration? = nil,
                keepWithinHourly: RetentionDuration? = nil, keepWithinDaily: RetentionDuration? = nil,
                keepWithinWeekly: RetentionDuration? = nil, keepWithinMonthly: RetentionDuration? = nil,
                keepWithinYearly: RetentionDuration? = nil) {
        self.keepLast = keepLast
        self.keepHourly = keepHourly
        self.keepDaily = keepDaily
        self.keepWeekly = keepWeekly
        self.keepMonthly = keepMonthly
        self.keepYearly = keepYearly
        self.keepWithin = keepWithin
        self.keepWithinHourly = keepWithinHourly
        self.keepWithinDaily = keepWithinDaily
        self.keepWithinWeekly = keepWithinWeekly
        self.keepWithinMonthly = keepWithinMonthly
        self.keepWithinYearly = keepWithinYearly
    }

    /// Coffer's default: every version of the last day, one an hour for a week, one a day for
    /// a month, and one a week before that.
    ///
    /// restic 0.14 has no unlimited count, so "one a week before that" is a weekly rule
    /// within 100 years (`--keep-within-weekly 100y`) rather than `--keep-weekly` without end.
    public static let standard = RetentionPolicy(keepWithin: RetentionDuration(days: 1),
                                                 keepWithinHourly: RetentionDuration(days: 7),
                                                 keepWithinDaily: RetentionDuration(months: 1),
                                                 keepWithinWeekly: RetentionDuration(years: 100))

    /// Whether no rule is given (restic's empty policy): then every version is kept.
    public var isEmpty: Bool {
        let counts = [keepLast, keepHourly, keepDaily, keepWeekly, keepMonthly, keepYearly]
        let durations = [keepWithin, keepWithinHourly, keepWithinDaily, keepWithinWeekly, keepWithinMonthly, keepWithinYearly]
        return counts.allSatisfy { ($0 ?? 0) == 0 } && durations.allSatisfy { $0?.isZero ?? true }
    }

    /// Decides, for each of `dates`, whether the version made then is kept and why: restic
    /// 0.14's `ApplyPolicy`, step for step.
    ///
    /// The dates are taken newest first (equal dates in the order given). The "within" rules
    /// count back from the newest date that is before `now`, not from `now` itself; a date
    /// after `now` is still judged, but does not set that reference (restic's guard against
    /// clocks gone wrong). Hours, days, ISO weeks, months and years are those of `timeZone`,
    /// as restic reads them in the time zone the snapshots were made in. An empty policy keeps
    /// every date, with restic's reason `policy is empty`.
    ///
    /// - Returns: one decision per date, in the order of `dates` (``RetentionDecision/index``
    ///   is the date's position there). A kept date has the reasons in restic's words (the
    ///   `matches` of `restic forget --json`); one that goes has none.
    public func apply(to dates: [Date], timeZone: TimeZone = .current, now: Date = Date()) -> [RetentionDecision] {
        if isEmpty {
            return dates.indices.map { RetentionDecision(index: $0, keep: true, reasons: ["policy is empty"]) }
        }
        guard !dates.isEmpty else { return [] }

        // Newest first; equal dates keep their order (restic's sort.Stable).
        let order = dates.indices.sorted { dates[$0] > dates[$1] || (dates[$0] == dates[$1] && $0 < $1) }

        // The reference for the "within" rules: the newest date before now. When there is
        // none, restic's is Go's zero time (1 January of year 1, UTC), and so is this.
        var newest: Date?
        for date in dates where date < now && date > (newest ?? GoCalendar.zeroTime) {
            newest = date
        }
        let reference = newest ?? GoCalendar.zeroTime
        let referenceZone = newest == nil ? GoCalendar.utc : timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = referenceZone
        func threshold(_ duration: RetentionDuration) -> Date { duration.subtracted(from: reference, in: calendar) }

        let within: (after: Date, reason: String)? = keepWithin.flatMap { $0.isZero ? nil : (threshold($0), "within \($0)") }
        var counted: [Bucket] = []
        for (count, unit, reason) in [(keepLast, Bucket.Unit.each, "last snapshot"), (keepHourly, .hour, "hourly snapshot"),
                                      (keepDaily, .day, "daily snapshot"), (keepWeekly, .week, "weekly snapshot"),
                                      (keepMonthly, .month, "monthly snapshot"), (keepYearly, .year, "yearly snapshot")] {
            // restic skips a count that is not positive.
            if let count, count > 0 { counted.append(Bucket(unit: unit, reason: reason, remaining: count)) }
        }
        var spans: [Bucket] = []
        for (duration, unit, word) in [(keepWithinHourly, Bucket.Unit.hour, "hourly"), (keepWithinDaily, .day, "daily"),
                                       (keepWithinWeekly, .week, "weekly"), (keepWithinMonthly, .month, "monthly"),
                                       (keepWithinYearly, .year, "yearly")] {
            if let duration, !duration.isZero {
                spans.append(Bucket(unit: unit, reason: "\(word) within \(duration)", threshold: threshold(duration)))
            }
        }

        var decisions = dates.indices.map { RetentionDecision(index: $0, keep: false, reasons: []) }
        for (position, index) in order.enumerated() {
            let date = dates[index]
            var reasons: [String] = []
            if let within, date > within.after { reasons.append(within.reason) }
            // The calendar's parts of the date, worked out once and only when a rule needs them.
            var stamp: Stamp?
            func key(_ unit: Bucket.Unit) -> Int {
                if unit == .each { return position }
                let parts = stamp ?? Stamp(date, in: timeZone)
                stamp = parts
                return parts.key(unit)
            }
            for slot in counted.indices where counted[slot].remaining > 0 {
                let value = key(counted[slot].unit)
                if value != counted[slot].last {
                    counted[slot].last = value
                    counted[slot].remaining -= 1
                    reasons.append(counted[slot].reason)
                }
            }
            for slot in spans.indices where date > spans[slot].threshold {
                let value = key(spans[slot].unit)
                if value != spans[slot].last {
                    spans[slot].last = value
                    reasons.append(spans[slot].reason)
                }
            }
            decisions[index] = RetentionDecision(index: index, keep: !reasons.isEmpty, reasons: reasons)
        }
        return decisions
    }

    /// One rule that keeps a version per hour, day, week, month or year (or every version).
    private struct Bucket {
        enum Unit { case each, hour, day, week, month, year }
        var unit: Unit
        var reason: String
        /// How many more it may keep (counted rules).
        var remaining = 0
        /// The date a version must be after (the "within" rules).
        var threshold = Date.distantPast
        /// The key of the version it kept last; none is ever -1.
        var last = -1
    }

    /// A date's hour, day, ISO week, month and year in a time zone, as the numbers restic
    /// compares (`2024031509` for 9 o'clock on 15 March 2024, `202411` for ISO week 11).
    private struct Stamp {
        var year: Int
        var month: Int
        var day: Int
        var hour: Int
        var isoYear: Int
        var isoWeek: Int

        init(_ date: Date, in timeZone: TimeZone) {
            let local = GoCalendar.wallClock(of: date, in: timeZone)
            (year, month, day) = GoCalendar.civilDate(days: local.days)
            hour = local.seconds / 3600
            // ISO weeks run Monday to Sunday; a week belongs to the year its Thursday is in.
            let weekday = GoCalendar.floorMod(local.days + 3, 7) + 1  // 1 January 1970 was a Thursday: 4
            let thursday = local.days + 4 - weekday
            isoYear = GoCalendar.civilDate(days: thursday).year
            isoWeek = (thursday - GoCalendar.days(year: isoYear, month: 1, day: 1)) / 7 + 1
        }

        func key(_ unit: Bucket.Unit) -> Int {
            switch unit {
            case .each: return 0
            case .hour: return year * 1_000_000 + month * 10_000 + day * 100 + hour
            case .day: return year * 10_000 + month * 100 + day
            case .week: return isoYear * 100 + isoWeek
            case .month: return year * 100 + month
            case .year: return year
            }
        }
    }
}

/// What a policy decided for one date (``RetentionPolicy/apply(to:timeZone:now:)``).
public struct RetentionDecision: Sendable, Hashable {
    /// The date's position in the list the policy was applied to.
    public var index: Int
    /// Whether the version made then is kept.
    public var keep: Bool
    /// Why it is kept, in restic's words and order (`within 1d`, `last snapshot`,
    /// `daily within 1m`); empty when it goes.
    public var reasons: [String]

    /// A decision as given.
    public init(index: Int, keep: Bool, reasons: [String]) {
        self.index = index
        self.keep = keep
        self.reasons = reasons
    }
}

/// Go's calendar arithmetic, as restic's policy relies on it: whole seconds of wall-clock time
/// in a time zone, and `time.Date`'s way of running days and months over into the next.
enum GoCalendar {
    /// Go's zero `time.Time`: 1 January of year 1, midnight UTC.
    static let zeroTime = Date(timeIntervalSince1970: -62_135_596_800)
    static let utc = TimeZone(secondsFromGMT: 0)!

    /// The wall clock in `timeZone` at `date`: days since 1 January 1970 and seconds into the
    /// day, with the fraction of a second left over.
    static func wallClock(of date: Date, in timeZone: TimeZone) -> (days: Int, seconds: Int, fraction: Double) {
        let local = date.timeIntervalSince1970 + Double(timeZone.secondsFromGMT(for: date))
        // Kept within what an Int holds (a date a million years away is not worth a trap).
        let whole = min(max(local.rounded(.down), -1e15), 1e15)
        let seconds = Int(whole)
        let days = floorDiv(seconds, 86_400)
        return (days, seconds - days * 86_400, local - whole)
    }

    /// Go's `t.AddDate(years, months, days)` for `date` in `timeZone`.
    static func addingDate(years: Int, months: Int, days: Int, to date: Date, in timeZone: TimeZone) -> Date {
        let local = wallClock(of: date, in: timeZone)
        let (year, month, day) = civilDate(days: local.days)
        // Months past December (or before January) carry into the years, then days past the
        // end of the month (or before its start) carry into the months: 31 February is 3 March.
        let monthIndex = month - 1 + months
        let carriedYear = year + years + floorDiv(monthIndex, 12)
        let carriedMonth = floorMod(monthIndex, 12) + 1
        let dayNumber = self.days(year: carriedYear, month: carriedMonth, day: 1) + (day + days - 1)
        let wall = dayNumber * 86_400 + local.seconds
        // Go's time.Date: the offset in force at the wall time read as UTC; if the instant that
        // gives lies in another of the zone's periods, the offset in force at that instant.
        var offset = timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(wall)))
        let other = timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(wall - offset)))
        if other != offset { offset = other }
        return Date(timeIntervalSince1970: Double(wall - offset) + local.fraction)
    }

    /// Days since 1 January 1970 of a date in the proleptic Gregorian calendar.
    static func days(year: Int, month: Int, day: Int) -> Int {
        // Counted in 400-year cycles of years that start on 1 March, so that the leap day
        // falls at the end of each year.
        let marchYear = month <= 2 ? year - 1 : year
        let cycle = floorDiv(marchYear, 400)
        let yearOfCycle = marchYear - cycle * 400
        let marchMonth = month <= 2 ? month + 9 : month - 3
        let dayOfYear = (153 * marchMonth + 2) / 5 + day - 1
        let dayOfCycle = yearOfCycle * 365 + yearOfCycle / 4 - yearOfCycle / 100 + dayOfYear
        return cycle * 146_097 + dayOfCycle - 719_468
    }

    /// The proleptic Gregorian date `days` after 1 January 1970.
    static func civilDate(days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let cycle = floorDiv(shifted, 146_097)
        let dayOfCycle = shifted - cycle * 146_097
        let yearOfCycle = (dayOfCycle - dayOfCycle / 1460 + dayOfCycle / 36_524 - dayOfCycle / 146_096) / 365
        let dayOfYear = dayOfCycle - (365 * yearOfCycle + yearOfCycle / 4 - yearOfCycle / 100)
        let marchMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * marchMonth + 2) / 5 + 1
        let month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9
        return (yearOfCycle + cycle * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func floorDiv(_ a: Int, _ b: Int) -> Int {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }

    static func floorMod(_ a: Int, _ b: Int) -> Int { a - floorDiv(a, b) * b }
}
