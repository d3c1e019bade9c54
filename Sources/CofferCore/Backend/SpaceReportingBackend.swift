/// How much a mount holds and how much more it can take.
///
/// A backend reports what it knows: a quota it keeps, or the file system it lives on.
/// `nil` means unknown or unlimited (an S3 bucket has no size of its own).
public struct StorageSpace: Sendable, Hashable, Codable {
    /// Bytes the mount's files hold now.
    public var usedBytes: Int64
    /// The most bytes the mount can hold, or `nil` when it has no known limit.
    public var totalBytes: Int64?
    /// Bytes that can still be written, or `nil` when there is no known limit.
    public var availableBytes: Int64?

    /// A report; `availableBytes` defaults to what `totalBytes` leaves over `usedBytes`.
    public init(usedBytes: Int64, totalBytes: Int64?, availableBytes: Int64? = nil) {
        self.usedBytes = usedBytes
        self.totalBytes = totalBytes
        self.availableBytes = availableBytes ?? totalBytes.map { max(0, $0 - usedBytes) }
    }
}

/// A backend that can say how full it is: a quota it keeps, a disk's size.
///
/// Front ends read it through a session (`MeasureSpace` in `FileService`), never from the
/// backend itself. The conformance suite checks that a report is consistent (no negative
/// figure, nothing used or available beyond the total) and, on a writable backend, that a file
/// written is counted.
public protocol SpaceReportingBackend: StorageBackend {
    /// How much the whole mount holds and can still take.
    ///
    /// - Throws: a ``CofferError`` (`ioError`, `unsupported`) when the figures cannot be had.
    func space() async throws -> StorageSpace
}
