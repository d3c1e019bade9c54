/// Free names for "keep both": `report (2).pdf`, `a (2).tar.gz`, `Makefile (2)`.
///
/// A name splits into a stem and its extensions. Extensions are the trailing
/// dot-separated parts of one to five ASCII letters or digits with at least one
/// letter, at most two of them, and never the whole name: so `a.tar.gz` keeps
/// `.tar.gz`, `photo.2024.jpg` keeps `.jpg`, `.bashrc` and `Makefile` have none.
/// A stem that already ends in ` (n)` continues counting from n.
public enum UniqueName {
    /// The stem and the extensions (with their leading dot) of `name`.
    public static func split(_ name: String) -> (stem: Substring, extensions: Substring) {
        var stemEnd = name.endIndex
        var found = 0
        while found < 2 {
            let stem = name[..<stemEnd]
            guard let dot = stem.lastIndex(of: "."), dot != name.startIndex else { break }
            let candidate = stem[stem.index(after: dot)...]
            guard (1...5).contains(candidate.count),
                  candidate.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }),
                  candidate.unicodeScalars.contains(where: { $0.properties.isAlphabetic })
            else { break }
            // A leading-dot name such as ".profile" has no extension.
            if name[..<dot].isEmpty { break }
            stemEnd = dot
            found += 1
        }
        return (name[..<stemEnd], name[stemEnd...])
    }

    /// Candidates in order: `x (2).pdf`, `x (3).pdf`, … continuing after an existing ` (n)`.
    public static func candidates(for name: String) -> some Sequence<String> {
        let (stem, extensions) = split(name)
        let (base, counter) = stripCounter(stem)
        let start = max(2, (counter ?? 1) + 1)
        return (start...).lazy.map { fitted(base: base, counter: " (\($0))", extensions: extensions) }
    }

    /// Joins the parts, shortening the stem so the result stays within 255 bytes.
    static func fitted(base: Substring, counter: String, extensions: Substring) -> String {
        var base = base
        var name = "\(base)\(counter)\(extensions)"
        while name.utf8.count > FileName.maximumByteCount, !base.isEmpty {
            base = base.dropLast()
            name = "\(base)\(counter)\(extensions)"
        }
        return name
    }

    /// `("x", 3)` for `"x (3)"`; `(stem, nil)` when there is no counter.
    static func stripCounter(_ stem: Substring) -> (Substring, Int?) {
        guard stem.hasSuffix(")"), let open = stem.lastIndex(of: "("), open > stem.startIndex,
              stem[stem.index(before: open)] == " " else { return (stem, nil) }
        let digits = stem[stem.index(after: open)..<stem.index(before: stem.endIndex)]
        guard !digits.isEmpty, digits.count < 10, digits.allSatisfy(\.isASCII), let number = Int(digits), number >= 2,
              stem.index(before: open) > stem.startIndex
        else { return (stem, nil) }
        return (stem[..<stem.index(before: open)], number)
    }
}

extension UniqueName {
    /// The most names tried for one item before giving up.
    public static let attemptLimit = 10_000

    /// `name` itself, then its free-name candidates in order, `limit` names in all.
    public static func attempts(for name: String, limit: Int = attemptLimit) -> some Sequence<String> {
        sequence(state: (first: Optional(name), rest: candidates(for: name).makeIterator())) { state -> String? in
            if let first = state.first {
                state.first = nil
                return first
            }
            return state.rest.next()
        }.prefix(limit)
    }

    /// Puts something under the first free name for `name`: `place` is tried with each of
    /// ``attempts(for:limit:)`` after the first `skipping`, and answers `nil` when that name is
    /// taken. Every "keep both" in Coffer — copies, imports, exports, restores, the trash's
    /// own names — goes through here or its `async` twin.
    /// - Returns: what `place` returned, or `nil` when every name was taken.
    public static func claim<T>(_ name: String, skipping: Int = 0, limit: Int = attemptLimit,
                                _ place: (String) throws(CofferError) -> T?) throws(CofferError) -> T? {
        for candidate in attempts(for: name, limit: limit).dropFirst(skipping) {
            if let placed = try place(candidate) { return placed }
        }
        return nil
    }

    /// ``claim(_:skipping:limit:_:)`` for a `place` that awaits, run on the caller's actor.
    public nonisolated(nonsending) static func claim<T>(_ name: String,
                                _ place: (String) async throws(CofferError) -> T?) async throws(CofferError) -> T? {
        for candidate in attempts(for: name) {
            if let placed = try await place(candidate) { return placed }
        }
        return nil
    }
}
