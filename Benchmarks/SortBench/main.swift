// Sorting 20,000 names: Coffer's precomputed natural keys vs Foundation's
// localizedStandardCompare, the reference Finder-like comparison.
//
//     swift run -c release coffer-sort-bench [count]
import CofferCore
import Foundation

let count = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 20_000
var generator = SystemRandomNumberGenerator()
let stems = ["IMG_", "Report ", "report-", "Track ", "notes", "Übersicht ", "报告", "file", "Draft v", "scan"]
let extensions = [".jpg", ".pdf", ".txt", ".mp3", ".docx", ""]
let names: [String] = (0..<count).map { index in
    let stem = stems[Int.random(in: 0..<stems.count, using: &generator)]
    let ext = extensions[Int.random(in: 0..<extensions.count, using: &generator)]
    return "\(stem)\(Int.random(in: 0..<100_000, using: &generator)) \(index)\(ext)"
}

func measure(_ label: String, runs: Int = 7, _ body: () -> [String]) -> (Double, [String]) {
    var times: [Double] = []
    var result: [String] = []
    for _ in 0..<runs {
        let start = DispatchTime.now().uptimeNanoseconds
        result = body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }
    times.sort()
    let median = times[times.count / 2]
    print(String(format: "%-34@ median %8.2f ms  (min %.2f, max %.2f, %d runs)", label as NSString, median,
                 times.first!, times.last!, runs))
    return (median, result)
}

print("sorting \(count) names")
_ = measure("  of which: computing the keys") { _ = names.map(NaturalSortKey.init); return [] }
let (ours, sortedByCoffer) = measure("coffer NaturalSortKey (keys+sort)") { names.naturallySorted() }
let (theirs, sortedByFoundation) = measure("Foundation localizedStandardCompare", runs: 3) {
    names.sorted { $0.localizedStandardCompare($1) == .orderedAscending }
}
let agreement = zip(sortedByCoffer, sortedByFoundation).filter { $0 == $1 }.count
print(String(format: "ratio: coffer takes %.3f of Foundation's time (%.1fx faster); goal under 20 ms: %@",
             ours / theirs, theirs / ours, ours < 20 ? "met" : "NOT met"))
print("same position as Foundation's order: \(agreement) of \(count) names")
