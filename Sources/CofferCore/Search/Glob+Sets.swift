import Foundation

extension Glob {
    /// `[...]`: scalars, ranges and POSIX classes, perhaps negated.
    struct ScalarSet: Sendable {
        var negated = false
        var scalars: Set<Unicode.Scalar> = []
        var ranges: [ClosedRange<UInt32>] = []
        var classes: [String] = []

        func contains(_ scalar: Unicode.Scalar) -> Bool {
            let inside = scalars.contains(scalar) || ranges.contains { $0.contains(scalar.value) }
                || classes.contains { Self.posix($0, scalar) }
            return inside != negated
        }

        static func posix(_ name: String, _ scalar: Unicode.Scalar) -> Bool {
            let properties = scalar.properties
            switch name {
            case "alnum": return properties.isAlphabetic || properties.numericType != nil
            case "alpha": return properties.isAlphabetic
            case "ascii": return scalar.isASCII
            case "blank": return scalar == " " || scalar == "\t"
            case "cntrl": return properties.generalCategory == .control
            case "digit": return ("0"..."9").contains(scalar)
            case "graph": return !properties.isWhitespace && properties.generalCategory != .control && scalar != " "
            case "lower": return properties.isLowercase
            case "print": return properties.generalCategory != .control
            case "punct": return [.connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
                                  .initialPunctuation, .finalPunctuation, .otherPunctuation, .mathSymbol, .currencySymbol,
                                  .modifierSymbol, .otherSymbol].contains(properties.generalCategory) && scalar.isASCII
            case "space": return properties.isWhitespace
            case "upper": return properties.isUppercase
            case "word": return properties.isAlphabetic || properties.numericType != nil || scalar == "_"
            case "xdigit": return ("0"..."9").contains(scalar) || ("a"..."f").contains(scalar) || ("A"..."F").contains(scalar)
            default: return false
            }
        }

        /// The set opening at `open` and the index after its `]`; `nil` when it does not close.
        static func parse(_ text: ArraySlice<Unicode.Scalar>, from open: Int) -> (ScalarSet, Int)? {
            var set = ScalarSet()
            var index = open + 1
            if index < text.endIndex, text[index] == "!" || text[index] == "^" { set.negated = true; index += 1 }
            var first = true
            while index < text.endIndex {
                var scalar = text[index]
                if scalar == "]" && !first { return (set, index + 1) }
                first = false
                if scalar == "[", index + 1 < text.endIndex, text[index + 1] == ":" {
                    let rest = String(String.UnicodeScalarView(text[(index + 2)...]))
                    if let end = rest.range(of: ":]") {
                        set.classes.append(String(rest[..<end.lowerBound]))
                        index += 2 + rest.unicodeScalars.distance(from: rest.startIndex, to: end.upperBound)
                        continue
                    }
                }
                if scalar == "\\", index + 1 < text.endIndex { index += 1; scalar = text[index] }
                if index + 2 < text.endIndex, text[index + 1] == "-", text[index + 2] != "]" {
                    var upper = text[index + 2]
                    var end = index + 3
                    if upper == "\\", index + 3 < text.endIndex { upper = text[index + 3]; end += 1 }
                    if scalar.value <= upper.value { set.ranges.append(scalar.value...upper.value) }
                    index = end
                    continue
                }
                set.scalars.insert(scalar)
                index += 1
            }
            return nil
        }
    }
}
