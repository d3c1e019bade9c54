public import CofferCore

/// Reads a file as text, in whichever of UTF-8, UTF-16 (with a byte-order mark) or
/// GB 18030 it is written, a chunk at a time (seed 002 §3.2).
///
/// The encoding is decided from the first 64 KiB; a file that is none of them is refused
/// with `unsupported` (detail `not-text`) before any of it is shown.
public final class TextReader {
    /// The encoding the text is read in.
    public let charset: TextCharset
    private var decoder: StreamingTextDecoder
    private var pending: [UInt8]
    private var finished = false
    private let readChunk: () async throws -> [UInt8]

    /// How much of a file's start decides its encoding.
    public static let sampleSize = 64 << 10

    /// Starts reading. `readChunk` returns the next bytes of the file, empty at the end.
    public init(path: VirtualPath?, readChunk: @escaping () async throws -> [UInt8]) async throws(CofferError) {
        self.readChunk = readChunk
        var sample: [UInt8] = []
        var atEnd = false
        do {
            while sample.count < Self.sampleSize {
                let chunk = try await readChunk()
                if chunk.isEmpty { atEnd = true; break }
                sample += chunk
            }
        } catch {
            throw CofferError.wrapping(error, path: path)
        }
        guard case .text(let charset, let bomLength) = TextDetection.detect(sample, isComplete: atEnd) else {
            throw CofferError(.unsupported, path: path, detail: "not-text")
        }
        self.charset = charset
        self.decoder = StreamingTextDecoder(charset: charset)
        self.pending = Array(sample.dropFirst(bomLength))
        self.finished = atEnd
    }

    /// The next piece of text, or `nil` at the end.
    public nonisolated(nonsending) func next() async throws -> String? {
        if pending.isEmpty && !finished {
            let chunk = try await readChunk()
            if chunk.isEmpty { finished = true } else { pending = chunk }
        }
        if pending.isEmpty {
            guard finished, !decoderFlushed else { return nil }
            decoderFlushed = true
            let tail = decoder.decode([], isFinal: true)
            return tail.isEmpty ? nil : tail
        }
        let bytes = pending
        pending = []
        return decoder.decode(bytes, isFinal: false)
    }

    private var decoderFlushed = false
}
