/// How a listing is ordered. Folders (and packages) always come before files;
/// within each group the chosen field decides, then the natural name order.
public struct SortOrder: Sendable, Hashable, Codable {
    public enum Field: String, Sendable, Hashable, Codable, CaseIterable {
        case name, modificationDate = "date", size, kind
    }

    public var field: Field
    public var ascending: Bool

    public init(_ field: Field = .name, ascending: Bool? = nil) {
        self.field = field
        // Dates and sizes read best newest or largest first, as `ls -t` and `ls -S` do.
        self.ascending = ascending ?? (field == .name || field == .kind)
    }

    public static let byName = SortOrder(.name)
}

extension Sequence where Element == FileNode {
    /// The nodes in `order`, with every name's sort key computed once.
    public func sorted(by order: SortOrder) -> [FileNode] {
        let nodes = Array(self)
        let keys = nodes.map { NaturalSortKey($0.name) }
        var indices = Array(nodes.indices)
        indices.sort { i, j in
            let a = nodes[i], b = nodes[j]
            let aFolder = a.kind != .file, bFolder = b.kind != .file
            if aFolder != bFolder { return aFolder }
            var primary = 0
            switch order.field {
            case .name:
                primary = 0
            case .modificationDate:
                primary = a.modificationDate == b.modificationDate ? 0 : (a.modificationDate < b.modificationDate ? -1 : 1)
            case .size:
                primary = a.size == b.size ? 0 : (a.size < b.size ? -1 : 1)
            case .kind:
                primary = a.typeIdentifier == b.typeIdentifier ? 0 : (a.typeIdentifier < b.typeIdentifier ? -1 : 1)
            }
            if order.field == .name || primary == 0 {
                // Equal by the chosen field: the natural name order decides, ascending
                // unless the listing is by name itself.
                let byName = NaturalSortKey.compare(keys[i], keys[j])
                return order.field == .name && !order.ascending ? byName > 0 : byName < 0
            }
            return order.ascending ? primary < 0 : primary > 0
        }
        return indices.map { nodes[$0] }
    }
}

extension Array where Element == String {
    /// The names in natural order (keys computed once).
    public func naturallySorted() -> [String] {
        let keys = map(NaturalSortKey.init)
        return indices.sorted { NaturalSortKey.compare(keys[$0], keys[$1]) < 0 }.map { self[$0] }
    }
}
