/// What to do when the destination name is already taken.
public enum ConflictPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Stop with ``CofferError/Kind/fileExists``; nothing changes. The default everywhere.
    case fail
    /// Pick a free name such as `report (2).pdf`, keeping every extension.
    case keepBoth
    /// Replace the existing item, atomically where the backend can.
    case replace
}
