public import CofferCore
import CofferHTTP
import CofferRuntime
@_spi(Engine) public import FileService
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How an upload is sent.
public struct UploadForm: Sendable {
    /// The form field that carries the file (`file`).
    public var field = "file"
    /// Other fields sent before it, in order.
    public var fields: [Field] = []
    /// For servers that garble names that are not ASCII: `filename` is sent made ASCII, and
    /// the name as it is in a field of this name.
    public var asciiNameField: String?
    /// A plain `PUT` of the file's bytes instead of a form.
    public var put = false

    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) { (self.name, self.value) = (name, value) }
    }

    public init() {}
}

/// The parts of a `multipart/form-data` body around the file's bytes, as browsers write them
/// (RFC 7578, and the HTML standard's escaping: `"` as `%22`, CR as `%0D`, LF as `%0A`,
/// names in UTF-8).
enum MultipartBody {
    static func boundary() -> String {
        "CofferFormBoundary" + (0..<16).map { _ in String("0123456789abcdef".randomElement()!) }.joined()
    }

    static func escaped(_ name: String) -> String {
        name.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    /// `name` in ASCII: other characters become `_`, the extension kept when it is ASCII.
    static func ascii(_ name: String) -> String {
        let scalars = name.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" ? Character($0) : "_" }
        let result = String(scalars)
        return result.allSatisfy({ $0 == "_" || $0 == "." }) ? "upload" + (name.split(separator: ".").count > 1
            ? "." + String(result.split(separator: ".").last ?? "") : "") : result
    }

    static func head(_ form: UploadForm, boundary: String, fileName: String, contentType: String) -> [UInt8] {
        var text = ""
        var fields = form.fields
        let sentName: String
        if let field = form.asciiNameField {
            fields.append(UploadForm.Field(field, fileName))
            sentName = ascii(fileName)
        } else {
            sentName = fileName
        }
        for field in fields {
            text += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(escaped(field.name))\"\r\n\r\n\(field.value)\r\n"
        }
        text += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(escaped(form.field))\"; filename=\"\(escaped(sentName))\"\r\n"
        text += "Content-Type: \(contentType)\r\n\r\n"
        return Array(text.utf8)
    }

    static func tail(boundary: String) -> [UInt8] { Array("\r\n--\(boundary)--\r\n".utf8) }
}

/// What an upload's server answered.
public struct UploadResult: Sendable {
    public var path: VirtualPath
    public var status: Int
    /// The start of the server's answer (at most 64 KiB), as text.
    public var answer: String
}

/// Sends a file of Coffer's to a server: a `multipart/form-data` `POST` (or a plain `PUT`)
/// streamed from the file, never read whole into memory — the file is read in pieces by
/// the service and handed to libcurl through a socket pair. The name goes as browsers send it, the
/// part's type from the type registry. A request that can be repeated (a `PUT`, or one that
/// never reached the server) is tried again, a bounded number of times.
public struct UploadFile: FileOperation {
    public static let name = "upload"

    public var path: VirtualPath
    public var url: String
    public var form: UploadForm
    public var caFile: String?
    public var attempts = 3

    public init(_ path: VirtualPath, to url: String, form: UploadForm = UploadForm(), caFile: String? = nil) {
        (self.path, self.url, self.form, self.caFile) = (path, url, form, caFile)
    }

    public func run(in context: OperationContext) async throws(CofferError) -> UploadResult {
        try TransferError.requireWeb(url)
        let node = try await context.service.stat(path)
        guard node.kind == .file, node.special == nil else { throw CofferError(.isADirectory, path: path) }
        let registry = context.service.registry
        let contentType = registry.type(withIdentifier: node.typeIdentifier)?.mimeTypes.first ?? "application/octet-stream"
        return try await context.withProgress { (progress) throws(CofferError) -> UploadResult in
            progress.expect(bytes: node.size, items: 1)
            var tries = 0
            while true {
                tries += 1
                let outcome = try await send(node, contentType: contentType, service: context.service, progress: progress)
                switch outcome {
                case .success(let result):
                    progress.advance(items: 1)
                    return result
                case .failure(let failure) where tries < attempts && failure.repeatable:
                    continue
                case .failure(let failure):
                    throw failure.error
                }
            }
        }
    }

    private struct Failure: Error {
        var error: CofferError
        /// Whether sending it again cannot do harm: a `PUT`, or nothing reached the server.
        var repeatable: Bool
    }

    /// One try: the file read into a socket pair by a task of the service while libcurl sends it.
    private func send(_ node: FileNode, contentType: String, service: FileService,
                      progress: ProgressReporter) async throws(CofferError) -> Result<UploadResult, Failure> {
        // A socket pair rather than a pipe: a write after libcurl gave up fails with EPIPE
        // (`MSG_NOSIGNAL`) instead of raising SIGPIPE.
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw CofferError(.ioError, detail: "socketpair")
        }
        let (reading, writing) = (fds[0], fds[1])
        // Room for a few pieces between the reader and libcurl: fewer wake-ups on each side.
        var room: Int32 = 4 << 20
        setsockopt(writing, SOL_SOCKET, SO_SNDBUF, &room, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(reading, SOL_SOCKET, SO_RCVBUF, &room, socklen_t(MemoryLayout<Int32>.size))
        let boundary = MultipartBody.boundary()
        let head = form.put ? [] : MultipartBody.head(form, boundary: boundary, fileName: path.name, contentType: contentType)
        let tail = form.put ? [] : MultipartBody.tail(boundary: boundary)
        let length = Int64(head.count) + node.size + Int64(tail.count)
        let path = self.path
        // The producer: the file's bytes in 2 MiB pieces, written to the socket off the pool.
        let producer = Task {
            defer { close(writing) }
            var offset: Int64 = 0
            while offset < node.size {
                guard let piece = try? await service.readBytes(path, offset: offset, length: 2 << 20), !piece.bytes.isEmpty
                else { return }
                let written: Bool = (try? await BlockingIO.run(waitingOnNetwork: true) { _ in Self.writeAll(writing, piece.bytes) }) ?? false
                guard written else { return }
                offset += Int64(piece.bytes.count)
            }
        }
        defer { producer.cancel() }
        let (url, caFile, put) = (self.url, self.caFile, form.put)
        let answered = try await BlockingIO.run(waitingOnNetwork: true) { (flag) throws(CofferError) -> Result<(HTTPResponse, String), HTTPFailure> in
            defer { close(reading) }
            let sender = BodySender(head: head, tail: tail, fileBytes: node.size, pipe: reading, progress: progress, flag: flag)
            var headers: [(name: String, value: String)] = []
            headers.append(("Content-Type", put ? contentType : "multipart/form-data; boundary=\(boundary)"))
            var answer: [UInt8] = []
            let session = try HTTPSession()
            do throws(HTTPFailure) {
                let response = try session.perform(
                    method: put ? "PUT" : "POST", url: url, headers: headers,
                    body: .stream(length: length, read: { buffer in sender.fill(buffer) }),
                    timeouts: HTTPTimeouts(), caFile: caFile, maxRedirects: 0) { piece in
                        if answer.count < 65_536 { answer += piece.prefix(65_536 - answer.count) }
                        return true
                    }
                var body = answer
                if body.isEmpty { body = response.errorBody }
                return .success((response, String(decoding: body, as: UTF8.self)))
            } catch {
                return .failure(error)
            }
        }
        switch answered {
        case .success(let (response, answer)) where (200..<300).contains(response.status):
            return .success(UploadResult(path: path, status: response.status, answer: answer))
        case .success(let (response, _)):
            let error = TransferError.status(response.status)
            return .failure(Failure(error: error, repeatable: put && response.status >= 500))
        case .failure(let failure):
            if failure.stoppedByCaller { throw CofferError(.cancelled) }
            // A connection refused sent nothing: trying again cannot repeat anything.
            let nothingSent = failure.code == HTTPFailure.unreachable
            return .failure(Failure(error: TransferError.failure(failure), repeatable: (put && failure.isTransient) || nothingSent))
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in WriteAll.bytes(raw) { Glibc.send(fd, $0, $1, Int32(MSG_NOSIGNAL)) } == 0 }
    }
}

/// The body as libcurl asks for it: the form's head, the file's bytes from the pipe, the tail.
private final class BodySender: @unchecked Sendable {
    private let head: [UInt8]
    private let tail: [UInt8]
    private var fileLeft: Int64
    private let pipe: Int32
    private let progress: ProgressReporter
    private let flag: CancellationFlag
    private var headSent = 0
    private var tailSent = 0

    init(head: [UInt8], tail: [UInt8], fileBytes: Int64, pipe: Int32, progress: ProgressReporter, flag: CancellationFlag) {
        (self.head, self.tail, self.fileLeft, self.pipe, self.progress, self.flag) = (head, tail, fileBytes, pipe, progress, flag)
    }

    /// Fills `buffer`: the count, 0 at the end, `nil` to stop (cancelled, or the file ended early).
    func fill(_ buffer: UnsafeMutableRawBufferPointer) -> Int? {
        if flag.isCancelled { return nil }
        if headSent < head.count {
            let count = min(buffer.count, head.count - headSent)
            head.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + headSent, byteCount: count) }
            headSent += count
            return count
        }
        if fileLeft > 0 {
            let wanted = Int(min(Int64(buffer.count), fileLeft))
            var count: Int
            repeat { count = read(pipe, buffer.baseAddress!, wanted) } while count < 0 && errno == EINTR
            guard count > 0 else { return nil }  // the file could not be read to its end
            fileLeft -= Int64(count)
            progress.advance(bytes: Int64(count))
            return count
        }
        let count = min(buffer.count, tail.count - tailSent)
        guard count > 0 else { return 0 }
        tail.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + tailSent, byteCount: count) }
        tailSent += count
        return count
    }
}
