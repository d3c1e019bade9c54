import CofferCore
import CofferRuntime
import Foundation

/// One piece of work on an untrusted file's bytes, by libvips (and poppler under it) or
/// libarchive: what the previewer asks of a ``Decoder``. A job and its answer are plain data,
/// so the work can run in a child process (``DecoderWorker``) and come back as JSON.
enum DecodeJob: Codable, Sendable {
    /// An image's or a PDF's header, with these metadata fields.
    case header(fields: [String])
    /// A thumbnail fitting in `pixels` × `pixels`, carrying `labels` (pairs) as PNG text.
    case thumbnail(pixels: Int, labels: [[String]])
    /// An archive's table of contents.
    case archive(listed: Int, counted: Int)
}

/// What a ``DecodeJob`` gave.
enum DecodeAnswer: Codable, Sendable {
    case header(ImageLibrary.Header)
    case thumbnail(png: Data, width: Int, height: Int)
    /// The image declares more than the decoder takes: the reason (`image-too-large`,
    /// `interlaced-too-large`) and what it declares.
    case refused(reason: String, declared: String)
    /// libvips could not decode it: its message.
    case undecodable(String)
    case archive(ArchiveLibrary.Contents)
    /// The job failed with this error (its kind's identifier and detail).
    case failed(kind: String, detail: String?)
}

extension DecodeJob {
    /// An interlaced (Adam7 PNG) or progressive image is decoded whole before it can be
    /// shrunk: above this many pixels it is refused (16 megapixels of 16-bit RGBA is 128 MiB).
    static let maxInterlacedPixels: Int64 = 16_000_000

    /// Does the job here, on the file open at `fd`.
    func perform(on fd: Int32, cancellation: CancellationFlag, path: VirtualPath) -> DecodeAnswer {
        do throws(CofferError) {
            switch self {
            case .header(let fields):
                return .header(try ImageLibrary.header(of: fd, fields: fields, path: path))
            case .thumbnail(let pixels, let labels):
                let header: ImageLibrary.Header
                do {
                    header = try ImageLibrary.header(of: fd, fields: ["interlaced"], path: path)
                } catch where error.kind == .corruptFile {
                    return .undecodable(error.detail ?? "")
                }
                if header.fields["interlaced"].flatMap(Int.init) ?? 0 != 0,
                   Int64(header.width) * Int64(header.height) > Self.maxInterlacedPixels {
                    return .refused(reason: "interlaced-too-large", declared: "\(header.width) × \(header.height)")
                }
                guard lseek(fd, 0, SEEK_SET) == 0 else { throw CofferError.lastSystemError("lseek", path: path) }
                let pairs = labels.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
                switch try ImageLibrary.thumbnail(of: fd, pixels: pixels, labels: pairs, path: path) {
                case .made(let png, let width, let height): return .thumbnail(png: Data(png), width: width, height: height)
                case .tooLarge(let declared): return .refused(reason: "image-too-large", declared: declared)
                case .undecodable(let message): return .undecodable(message)
                }
            case .archive(let listed, let counted):
                return .archive(try ArchiveLibrary.contents(of: fd, listed: listed, counted: counted,
                                                            cancellation: cancellation, path: path))
            }
        } catch {
            return .failed(kind: error.kind.identifier, detail: error.detail)
        }
    }
}
