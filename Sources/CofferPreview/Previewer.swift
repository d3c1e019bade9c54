public import CofferCore
import CofferRuntime
@_spi(Engine) public import FileService
import Foundation
import Synchronization

/// Previews and thumbnails of a service's files: the engine the ``PreviewItem``,
/// ``MakeThumbnail`` and ``PrefetchThumbnails`` operations run on.
///
/// Files are read through their mount's backend, never by host path: a local file is read
/// by libvips and libarchive through a descriptor the backend opened (confined as every
/// read is), and any other (an S3 object) is first copied into an unnamed temporary file.
/// libvips and libarchive are loaded the first time they are needed.
public struct Previewer: Sendable {
    public let service: FileService
    /// Where thumbnails of the standard sizes are kept; `nil` makes each one anew.
    public let store: ThumbnailStore?

    /// Lines of text shown, and the characters of each.
    public static let firstLineCount = 10
    public static let lineLength = 240
    /// Text read to count lines; longer files report "at least".
    public static let countedTextBytes = 64 << 20
    /// Archive entries shown, and counted.
    public static let firstEntryCount = 20
    public static let countedEntryLimit = 100_000
    /// The largest file copied from a remote mount to be previewed.
    public static let spoolLimit: Int64 = 1 << 30

    public init(service: FileService, store: ThumbnailStore?) {
        self.service = service
        self.store = store
    }

    /// A previewer with the service's thumbnail cache (`Library/Caches/Thumbnails`).
    public init(service: FileService) {
        self.init(service: service, store: service.feature(ThumbnailCache.self).map { ThumbnailStore(root: $0.path) })
    }

    // MARK: Kinds

    enum Kind { case image, document, text, archive, other }

    func kind(of node: FileNode) -> Kind { Self.kind(of: node, registry: service.registry) }

    static func kind(of node: FileNode, registry: TypeRegistry) -> Kind {
        guard node.kind == .file, node.special == nil else { return .other }
        let type = node.typeIdentifier
        if registry.conforms(type, to: "public.image") { return .image }
        if registry.conforms(type, to: "com.adobe.pdf") { return .document }
        if registry.conforms(type, to: "public.archive") { return .archive }
        if registry.conforms(type, to: "public.text") { return .text }
        // Audio and video are left out: nothing installed reads their duration cheaply.
        if registry.conforms(type, to: "public.audiovisual-content") { return .other }
        return .text  // anything else is shown as text if it is text (decided from its bytes)
    }

    /// Whether a thumbnail can be asked for `node` (an image or a PDF).
    public func hasThumbnail(_ node: FileNode) -> Bool { Self.offersThumbnail(node, registry: service.registry) }

    /// Whether a thumbnail can be asked for `node`: a file that is an image or a PDF, on any
    /// mount. The one rule every front end follows: the REPL's `ls --thumbnails`, RPC's nodes
    /// (their `thumbnail` member, which the web page draws by), share pages, and MCP's
    /// `read_media_file`, which sends a large image's thumbnail instead of the image.
    public static func offersThumbnail(_ node: FileNode, registry: TypeRegistry) -> Bool {
        switch kind(of: node, registry: registry) {
        case .image, .document: true
        default: false
        }
    }

    // MARK: Facts

    /// What the file at `path` is: its node and the facts for its kind.
    public func preview(_ path: VirtualPath) async throws(CofferError) -> Preview {
        let node = try await service.stat(path)
        switch kind(of: node) {
        case .image:
            let header = try await decodeHeader(of: node, fields: Self.imageFields)
            return Preview(node: node, details: .image(Self.imageFacts(header)))
        case .document:
            let header = try await decodeHeader(of: node, fields: ["pdf-title", "pdf-author"])
            return Preview(node: node, details: .document(DocumentFacts(
                pages: header.pages, pageWidth: header.width, pageHeight: header.height,
                title: header.fields["pdf-title"].flatMap(Self.nonEmpty), author: header.fields["pdf-author"].flatMap(Self.nonEmpty))))
        case .archive:
            guard case .archive(let contents) = try await decode(.archive(listed: Self.firstEntryCount,
                                                                          counted: Self.countedEntryLimit), of: node)
            else { throw CofferError(.corruptFile, path: path, detail: "archive-damaged") }
            try Self.checkCancellation(path)
            return Preview(node: node, details: .archive(ArchiveFacts(
                format: contents.format, compression: contents.compression, entries: contents.count,
                entriesComplete: contents.complete, declaredBytes: contents.declaredBytes, firstEntries: contents.entries)))
        case .text:
            do {
                return Preview(node: node, details: .text(try await textFacts(path)))
            } catch where error.kind == .unsupported && error.detail == "not-text" {
                return Preview(node: node, details: .none)
            }
        case .other:
            return Preview(node: node, details: .none)
        }
    }

    /// Runs `job` on the file of `node` through the ``Decoder`` (a bounded child process in
    /// `coffer`); a failure the job met comes back as its error.
    func decode(_ job: DecodeJob, of node: FileNode) async throws(CofferError) -> DecodeAnswer {
        let path = node.path
        let answer = try await withDescriptor(of: node) { fd, cancellation throws(CofferError) in
            try Decoder.run(job, on: fd, cancellation: cancellation, path: path)
        }
        if case .failed(let kind, let detail) = answer {
            throw CofferError(CofferError.Kind(identifier: kind) ?? .ioError, path: path, detail: detail)
        }
        return answer
    }

    func decodeHeader(of node: FileNode, fields: [String]) async throws(CofferError) -> ImageLibrary.Header {
        guard case .header(let header) = try await decode(.header(fields: fields), of: node) else {
            throw CofferError(.corruptFile, path: node.path, detail: "thumbnail-failed")
        }
        return header
    }

    static let imageFields = ["exif-ifd2-DateTimeOriginal", "exif-ifd0-DateTime", "exif-ifd0-Make", "exif-ifd0-Model"]

    static func imageFacts(_ header: ImageLibrary.Header) -> ImageFacts {
        let taken = (header.fields["exif-ifd2-DateTimeOriginal"] ?? header.fields["exif-ifd0-DateTime"]).flatMap(exifDate)
        let camera = [header.fields["exif-ifd0-Make"], header.fields["exif-ifd0-Model"]]
            .compactMap { $0.map(exifText).flatMap(nonEmpty) }
        return ImageFacts(width: header.width, height: header.height, format: header.format, frames: header.pages,
                          orientation: header.orientation, taken: taken,
                          camera: camera.isEmpty ? nil : camera.joined(separator: " "))
    }

    /// libvips shows an EXIF string as `VALUE (VALUE, ASCII, 20 components, 20 bytes)`.
    static func exifText(_ field: String) -> String {
        guard let open = field.range(of: " (", options: .backwards) else { return field }
        return String(field[..<open.lowerBound]).trimmingCharacters(in: .whitespaces)
    }

    /// `2024:05:01 12:30:00` as `2024-05-01T12:30:00`; `nil` for anything else.
    static func exifDate(_ field: String) -> String? {
        let text = Array(exifText(field))
        guard text.count >= 19, text[4] == ":", text[7] == ":", text[10] == " ", text[13] == ":", text[16] == ":" else { return nil }
        var date = text[0..<19]
        date[date.startIndex + 4] = "-"
        date[date.startIndex + 7] = "-"
        date[date.startIndex + 10] = "T"
        let result = String(date)
        return result.hasPrefix("0000") ? nil : result
    }

    static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }

    func textFacts(_ path: VirtualPath) async throws(CofferError) -> TextFacts {
        let reader = try await service.openText(path)
        var newlines = 0, read = 0
        var endsWithNewline = true, sawText = false
        var firstLines: [String] = []
        var current = "", currentLength = 0
        do {
            while let piece = try await reader.next() {
                try Self.checkCancellation(path)
                guard !piece.isEmpty else { continue }
                sawText = true
                read += piece.utf8.count
                // The first lines by character; the count by byte, which is what takes the time.
                for character in piece where firstLines.count < Self.firstLineCount {
                    if character == "\n" || character == "\r\n" {
                        firstLines.append(current)
                        current = ""
                        currentLength = 0
                    } else if currentLength < Self.lineLength {
                        current.append(character)
                        currentLength += 1
                    }
                }
                newlines += piece.utf8.count { $0 == UInt8(ascii: "\n") }
                endsWithNewline = piece.utf8.last == UInt8(ascii: "\n")
                if read >= Self.countedTextBytes { break }
            }
        } catch {
            throw CofferError.wrapping(error, path: path)
        }
        let complete = read < Self.countedTextBytes
        if sawText, !endsWithNewline, firstLines.count < Self.firstLineCount { firstLines.append(current) }
        let lines = newlines + (sawText && !endsWithNewline ? 1 : 0)
        return TextFacts(encoding: reader.charset.name, lines: lines, linesComplete: complete, firstLines: firstLines)
    }

    static func checkCancellation(_ path: VirtualPath) throws(CofferError) {
        if Task.isCancelled { throw CofferError(.cancelled, path: path) }
    }

    // MARK: Thumbnails

    /// A thumbnail of the image or PDF at `path` fitting in `pixels` × `pixels`. The standard
    /// sizes (128, 256, 512, 1024) come from, and go to, the cache; a file that failed before
    /// and has not changed since is not tried again.
    /// - Throws: `unsupported` (`no-thumbnail`) for other files; `tooLarge`
    ///   (`image-too-large`) for one declaring more than 256 megapixels; `corruptFile`
    ///   (`thumbnail-failed`) for one libvips cannot decode.
    public func thumbnail(_ path: VirtualPath, pixels: Int) async throws(CofferError) -> Thumbnail {
        guard pixels > 0 && pixels <= 4096 else {
            throw CofferError(.invalidArgument, detail: "a thumbnail's size is 1 to 4096 pixels")
        }
        let node = try await service.stat(path)
        guard hasThumbnail(node) else { throw CofferError(.unsupported, path: path, detail: "no-thumbnail") }
        let uri = try uri(of: path)
        let stamp = SourceStamp(node)
        let cached = ThumbnailSize(rawValue: pixels).flatMap { size in store.map { ($0, size) } }
        if let (store, size) = cached {
            let hit = try await BlockingIO.run { _ throws(CofferError) -> Thumbnail? in
                if let file = try store.current(uri: uri, size: size, stamp: stamp) {
                    return Self.thumbnail(at: file, of: path, pixels: pixels)
                }
                if let reason = try store.failure(uri: uri, stamp: stamp) {
                    throw Self.failure(reason, path)
                }
                return nil
            }
            if let hit { return hit }
        }
        let labels = ThumbnailStore.labels(uri: uri, stamp: stamp)
        let outcome: DecodeAnswer
        do {
            outcome = try await decode(.thumbnail(pixels: pixels, labels: labels.map { [$0.0, $0.1] }), of: node)
        } catch where error.kind == .tooLarge && error.detail == "preview-too-costly" {
            // Stopped for its time or memory: remembered, so it is not tried again until it changes.
            try? await recordFailure(uri: uri, stamp: stamp, reason: "preview-too-costly")
            throw error
        }
        switch outcome {
        case .thumbnail(let data, let width, let height):
            let png = [UInt8](data)
            var cachePath: String?
            if let (store, size) = cached {
                let file = try store.path(for: uri, size: size)
                try await BlockingIO.run { _ throws(CofferError) in
                    try store.store(png, at: file)
                }
                cachePath = file
            }
            return Thumbnail(path: path, pixels: pixels, width: width, height: height, png: png, cachePath: cachePath)
        case .refused(let reason, _):
            try? await recordFailure(uri: uri, stamp: stamp, reason: reason)
            throw Self.failure(reason, path)
        default:
            try? await recordFailure(uri: uri, stamp: stamp, reason: "thumbnail-failed")
            throw Self.failure("thumbnail-failed", path)
        }
    }

    /// The reasons a thumbnail is refused for its cost rather than its damage.
    static let costlyReasons: Set = ["image-too-large", "interlaced-too-large", "preview-too-costly"]

    /// The error of a thumbnail that failed for `reason` (now, or before and remembered).
    static func failure(_ reason: String, _ path: VirtualPath) -> CofferError {
        costlyReasons.contains(reason) ? CofferError(.tooLarge, path: path, detail: reason)
                                       : CofferError(.corruptFile, path: path, detail: "thumbnail-failed")
    }

    private func recordFailure(uri: String, stamp: SourceStamp, reason: String) async throws(CofferError) {
        guard let store else { return }
        try await BlockingIO.run { _ throws(CofferError) in try store.recordFailure(uri: uri, stamp: stamp, reason: reason) }
    }

    /// A cached thumbnail, or `nil` when it cannot be read after all (deleted meanwhile).
    static func thumbnail(at file: String, of path: VirtualPath, pixels: Int) -> Thumbnail? {
        guard let data = FileManager.default.contents(atPath: file), data.count > 24 else { return nil }
        let png = [UInt8](data)
        func number(at offset: Int) -> Int { png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        return Thumbnail(path: path, pixels: pixels, width: number(at: 16), height: number(at: 20), png: png, cachePath: file)
    }

    /// The URI the item's thumbnails are named by: `file://` and the host path for a local
    /// mount, `coffer://MOUNT/PATH` for others.
    public func uri(of path: VirtualPath) throws(CofferError) -> String {
        try uriNaming()(path)
    }

    /// What names items' URIs, each mount's backend looked at once (a listing names many).
    func uriNaming() throws(CofferError) -> @Sendable (VirtualPath) throws(CofferError) -> String {
        let hostNames = service.hostPathNaming
        return { path throws(CofferError) in
            if let naming = hostNames[path.mount] { return try ThumbnailURI.file(hostPath: naming.hostPath(of: path)) }
            return try ThumbnailURI.virtual(path)
        }
    }

    // MARK: Reading through a descriptor

    /// Runs `body` off the cooperative pool with a descriptor of the file's bytes, closed
    /// afterwards. `body` gets the flag that turns when the calling task is cancelled.
    func withDescriptor<T: Sendable>(
        of node: FileNode, _ body: @escaping @Sendable (Int32, CancellationFlag) throws(CofferError) -> T
    ) async throws(CofferError) -> T {
        let path = node.path
        // Opened as every front end opens a file to read it: after the one readable-file rule.
        let file = try await service.openForReading(node).file
        // A local file is read by a descriptor of its own (closed here); a remote one from a
        // scratch copy, whose descriptor stays the copy's (closed with it).
        let fd: Int32
        let copy: (any OutputFile)?
        do throws(CofferError) {
            if let local = file as? any DescriptorReadableFile {
                fd = try local.openDescriptor()
                copy = nil
            } else {
                let spooled = try await spool(file, path: path)
                (fd, copy) = (spooled.descriptor, spooled)
            }
        } catch {
            await file.close()
            throw error
        }
        do throws(CofferError) {
            let result = try await BlockingIO.run { flag throws(CofferError) in
                defer { if copy == nil { close(fd) } }
                return try withExtendedLifetime(copy) { () throws(CofferError) in try body(fd, flag) }
            }
            await file.close()
            return result
        } catch {
            await file.close()
            throw error
        }
    }

    /// Copies a file of a remote mount into an unnamed scratch file (gone with its last
    /// reference; in the thumbnail cache or the system's temporary folder) and returns it.
    private func spool(_ file: any ReadableFile, path: VirtualPath) async throws(CofferError) -> any OutputFile {
        guard file.size <= Self.spoolLimit else { throw CofferError(.tooLarge, path: path, detail: "1 GiB") }
        let folder = store?.root ?? NSTemporaryDirectory()
        let copy = try await BlockingIO.run { _ throws(CofferError) in try FileService.scratchFile(inFolder: folder, for: path) }
        var offset: Int64 = 0
        while true {
            try Self.checkCancellation(path)
            let chunk: [UInt8]
            do { chunk = try await file.read(at: offset, upTo: 1 << 20) } catch { throw CofferError.wrapping(error, path: path) }
            if chunk.isEmpty { break }
            let at = offset
            try await BlockingIO.run { _ throws(CofferError) in try copy.write(chunk, at: at) }
            offset += Int64(chunk.count)
        }
        return copy
    }
}
