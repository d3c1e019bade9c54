/// Something that changed at a path, as a watch reports it.
public struct FileChange: Sendable, Hashable {
    /// What happened to the item.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The item appeared (created, copied, or moved here).
        case created
        /// Its contents or attributes changed, or it was replaced.
        case changed
        /// It went away (deleted, trashed, or moved elsewhere).
        case deleted
    }

    /// The item that changed.
    public var path: VirtualPath
    /// What happened to it.
    public var kind: Kind

    /// A change of `kind` at `path`.
    public init(path: VirtualPath, kind: Kind) {
        self.path = path
        self.kind = kind
    }
}

/// Folds a burst of raw events into one change per path.
///
/// Watchers see every step of an operation: a file is created, written ten times and
/// closed; a temporary file appears and is renamed away. Within one coalescing window,
/// the events of a path reduce to what a client needs to know:
///
/// | events, in order           | reported  |
/// |----------------------------|-----------|
/// | created, then changed      | created   |
/// | changed, changed…          | changed   |
/// | created … deleted          | nothing (`deleted` when reporting passing items) |
/// | deleted, then created      | changed   |
/// | changed … deleted          | deleted   |
///
/// Paths keep the order of their first event.
public struct ChangeCoalescer: Sendable {
    private var order: [VirtualPath] = []
    private var state: [VirtualPath: FileChange.Kind?] = [:]
    /// Whether an item that came and went is reported `deleted` rather than not at all.
    private let reportsPassing: Bool

    /// An empty window; with `reportingPassing`, items that came and went are reported `deleted`.
    public init(reportingPassing: Bool = false) {
        reportsPassing = reportingPassing
    }

    /// Whether nothing is held for the window.
    public var isEmpty: Bool { order.isEmpty }

    /// Folds `change` into what the window holds for its path.
    public mutating func add(_ change: FileChange) {
        guard let current = state[change.path] else {
            order.append(change.path)
            state[change.path] = change.kind
            return
        }
        state[change.path] = Self.merge(current, change.kind)
    }

    /// The reduced changes, in order; the coalescer is empty afterwards.
    public mutating func drain() -> [FileChange] {
        defer { order.removeAll(); state.removeAll() }
        return order.compactMap { path in
            guard let kind = state[path] ?? nil else { return reportsPassing ? FileChange(path: path, kind: .deleted) : nil }
            return FileChange(path: path, kind: kind)
        }
    }

    /// `nil` stands for "appeared and went away again": nothing to report so far.
    private static func merge(_ current: FileChange.Kind?, _ next: FileChange.Kind) -> FileChange.Kind? {
        switch (current, next) {
        case (nil, .deleted): return nil
        case (nil, _): return .created
        case (.created?, .deleted): return nil
        case (.created?, _): return .created
        case (.changed?, .deleted): return .deleted
        case (.changed?, _): return .changed
        case (.deleted?, .deleted): return .deleted
        case (.deleted?, _): return .changed
        }
    }
}
