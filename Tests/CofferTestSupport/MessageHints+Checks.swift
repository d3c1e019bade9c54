public import CofferCore

extension MessageHints {
    /// What is wrong with a front end's hint for `kind`, if it gives one: each must be in
    /// both languages (the Chinese one in Chinese) and be what messages of that kind show.
    public func problems(for kind: CofferError.Kind) -> [String] {
        guard let hint = self[kind] else { return [] }
        var problems: [String] = []
        if hint.english.isEmpty || hint.english == hint.chinese { problems.append("\(kind): not in both languages") }
        if !hint.chinese.unicodeScalars.contains(where: { $0.value >= 0x4E00 && $0.value <= 0x9FFF }) {
            problems.append("\(kind): the Chinese hint has no Chinese")
        }
        for language in Language.allCases where CofferError(kind).userMessage(in: language, hints: self).hint != hint(language) {
            problems.append("\(kind): not shown in \(language)")
        }
        return problems
    }
}
