import Foundation

/// How a listing is ordered. Folders (and packages) always come before files;
/// within each group the chosen field decides, then the natural name order.
public struct SortOrder: Sendable, Hashable, Codable {
    /// What a listing is ordered by; decoded from `name`, `date`, `size` or `kind`.
    public enum Field: String, Sendable, Hashable, Codable, CaseIterable, WordChoice {
        /// The name, the modification date, the size, or the kind (its type's name).
        case name, modificationDate = "date", size, kind
    }

    /// The field that decides within folders and within files.
    public var field: Field
    /// Smallest first (`true`) or largest first.
    public var ascending: Bool

    /// An order by `field`; by default names and kinds ascend, dates and sizes descend.
    public init(_ field: Field = .name, ascending: Bool? = nil) {
        self.field = field
        // Dates and sizes read best newest or largest first, as `ls -t` and `ls -S` do.
        self.ascending = ascending ?? (field == .name || field == .kind)
    }

    /// By name, A to Z, as `ls` lists.
    public static let byName = SortOrder(.name)
}

extension Sequence where Element == FileNode {
    /// The nodes in `order`, with every name's sort key computed once.
    public func sorted(by order: SortOrder) -> [FileNode] {
        let nodes = Array(self)
        return nodes.sortedIndices(by: order).map { nodes[$0] }
    }
}

extension Array where Element == FileNode {
    /// The indices of the nodes `including` accepts, in `order`: what ``sorted(by:)``
    /// returns, without copying a node.
    public func sortedIndices(by order: SortOrder, including: (FileNode) -> Bool = { _ in true }) -> [Int] {
        let nodes = self
        let chosen = nodes.indices.filter { including(nodes[$0]) }
        // Everything the comparison needs, gathered once into flat arrays, so the sort
        // itself never copies a node.
        let keys = nodes.map { NaturalSortKey($0.name) }
        let isFile = nodes.map { $0.kind == .file }
        let field: [Double]
        switch order.field {
        case .name: field = []
        case .modificationDate: field = nodes.map { $0.modificationDate.timeIntervalSinceReferenceDate }
        case .size: field = nodes.map { Double($0.size) }
        case .kind:
            let kinds = [String](Set(nodes.map(\.typeIdentifier))).sorted()
            let rank = Dictionary(uniqueKeysWithValues: kinds.enumerated().map { ($1, Double($0)) })
            field = nodes.map { rank[$0.typeIdentifier]! }
        }
        let byNameDescending = order.field == .name && !order.ascending
        var indices = chosen
        indices.withUnsafeMutableBufferPointer { buffer in
            buffer.sort { i, j in
                if isFile[i] != isFile[j] { return !isFile[i] }
                if !field.isEmpty && field[i] != field[j] {
                    return order.ascending ? field[i] < field[j] : field[i] > field[j]
                }
                // Equal by the chosen field: the natural name order decides, ascending
                // unless the listing is by name, descending.
                let byName = NaturalSortKey.compare(keys[i], keys[j])
                return byNameDescending ? byName > 0 : byName < 0
            }
        }
        return indices
    }
}

extension Array where Element == String {
    /// The names in natural order (keys computed once).
    public func naturallySorted() -> [String] {
        let keys = map(NaturalSortKey.init)
        return indices.sorted { NaturalSortKey.compare(keys[$0], keys[$1]) < 0 }.map { self[$0] }
    }
}
