#if canImport(Glibc)
import Glibc
#endif

/// Bytes in pages of their own, mapped when made and unmapped when released: a read-ahead
/// block's memory goes back to the system the moment the block is done with.
///
/// Arrays of several MiB made and freed on many threads grow glibc's heaps instead (its
/// mmap threshold rises to the largest block freed, and each thread gets an arena), which
/// took a 1 GiB download to 155 MB of resident memory.
final class MappedBuffer: @unchecked Sendable {
    private let base: UnsafeMutableRawPointer?
    let capacity: Int
    /// How many bytes have been appended; only the filling thread writes it, before the
    /// buffer is handed over (the hand-over orders it for readers).
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        guard capacity > 0 else {
            base = nil
            return
        }
        let mapped = mmap(nil, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        base = mapped == MAP_FAILED ? nil : mapped
    }

    /// Whether the pages could be mapped.
    var isMapped: Bool { base != nil || capacity == 0 }

    /// Appends as much of `bytes` as fits.
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let base, let source = bytes.baseAddress else { return }
        let taken = min(bytes.count, capacity - count)
        (base + count).copyMemory(from: source, byteCount: taken)
        count += taken
    }

    /// Bytes `range` of what was appended, appended to `array`.
    func copy(_ range: Range<Int>, appendingTo array: inout [UInt8]) {
        guard let base, !range.isEmpty else { return }
        array.append(contentsOf: UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count))
    }

    deinit {
        if let base { munmap(base, capacity) }
    }
}
