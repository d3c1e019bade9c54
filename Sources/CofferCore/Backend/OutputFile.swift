/// A file open to be written a piece at a time, at any offset: a download's data as it
/// arrives, an upload's chunks, a remote file's copy for a preview.
///
/// The storage layer makes it (`CofferBackends`, which does every write to disk, confined to
/// its root and never through a link); what fills it only hands it bytes. The file is closed
/// when the last reference goes away. Its methods block: call them off Swift's cooperative pool.
public protocol OutputFile: AnyObject, Sendable {
    /// The open descriptor, for a library that reads the file by it (libvips). It stays the
    /// file's: whoever borrows it does not close it.
    var descriptor: Int32 { get }
    /// Writes all of `bytes` at `offset` (the file grows as needed).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(CofferError)
    /// The file's size now.
    func size() throws(CofferError) -> Int64
    /// Cuts the file (or grows it with zeros) to `size` bytes.
    func truncate(to size: Int64) throws(CofferError)
    /// Takes the file's advisory lock for this open file without waiting: `false` when another
    /// holds it (another process working on the same data).
    func lockExclusively() -> Bool
    /// Makes what was written durable, the size included, not every time stamp: `false` on failure.
    func synchronizeData() -> Bool
    /// Makes the file durable, its metadata included.
    func synchronize() throws(CofferError)
    /// Sets the extended attribute `name` (`user.…`); a file system without them is not an error.
    func setAttribute(_ name: String, to value: [UInt8])
    /// Starts writing `length` bytes from `offset` to the disk without waiting for them, so a
    /// later ``synchronize()`` has less to wait for. A hint: by default it does nothing.
    func startWritingBack(offset: Int64, length: Int64)
}

extension OutputFile {
    public func startWritingBack(offset: Int64, length: Int64) {}

    /// Writes all of `bytes` at `offset`.
    public func write(_ bytes: [UInt8], at offset: Int64) throws(CofferError) {
        let outcome = bytes.withUnsafeBytes { raw in Result { () throws(CofferError) in try write(raw, at: offset) } }
        try outcome.get()
    }
}
