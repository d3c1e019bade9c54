import CCofferArchive
import CofferCore
import CofferHTTPServer
import FileService
import Foundation

/// A folder as a `.zip`, made by libarchive as it is sent (HTTP chunked transfer encoding):
/// memory stays at one read's worth and a short queue of the walk's entries whatever the
/// folder holds. Hidden items, links and special files are left out, as every listing leaves
/// them out.
extension FileRoutes {
    /// `beforeLastBytes` runs once the whole zip is made, just before its last bytes go, with
    /// the bytes sent by then (a share counts the download there, as it does a file's). Read
    /// in `session` (a share visitor's).
    func sendZip(_ exchange: HTTPExchange, of folder: FileNode, named name: String, in session: Session,
                 beforeLastBytes: (Int64) -> Void = { _ in }) -> (status: Int, sent: Int64) {
        let headers = "Content-Type: application/zip\r\nContent-Disposition: attachment; "
            + HTTPRules.dispositionName(name + ".zip") + "\r\nTransfer-Encoding: chunked\r\n"
        // A HEAD learns what a GET would get, and nothing is walked or read for it.
        if exchange.isHead {
            exchange.respond(200, headers: WebContext.sharePolicy + headers, length: nil)
            return (200, 0)
        }
        let out = exchange.chunked()
        guard let zip = coffer_zip_open({ context, bytes, length in
            Unmanaged<ChunkedBody>.fromOpaque(context!).takeUnretainedValue().write(bytes!, length) ? 1 : 0
        }, Unmanaged.passUnretained(out).toOpaque()) else {
            return (web.respond(exchange, 500, text: "libarchive (libarchive13) is needed to send a folder as a zip."), 0)
        }
        exchange.respond(200, headers: WebContext.sharePolicy + headers, length: nil)
        var complete = true
        withExtendedLifetime(out) {
            complete = addTree(folder.path, prefix: name, to: zip, out: out, in: session)
        }
        // A zip cut short is not finished: the visitor's unzip says it is damaged.
        _ = coffer_zip_close(zip, complete ? 1 : 0)
        if complete {
            beforeLastBytes(out.sent)
            out.end()
        }
        return (200, out.sent)
    }

    /// The folder's tree into the zip: walked by the session (``WalkTree``, packages included,
    /// hidden items left out), entry by entry through a short queue, while this thread writes
    /// each file's bytes (read here, without a hop per piece, where the file is this host's).
    /// Links and special files are left out, as every listing leaves them out.
    /// - Returns: whether everything went in (a folder that could not be read, a file gone
    ///   unreadable or a client gone make it `false`: the zip is then cut short).
    private func addTree(_ root: VirtualPath, prefix: String, to zip: OpaquePointer, out: ChunkedBody,
                         in session: Session) -> Bool {
        let entries = HandOff<WalkEntry>(capacity: 64)
        let walker = session.start {
            do throws(CofferError) {
                let walk = try await session.perform(WalkTree(root, intoPackages: true))
                _ = try await walk.visit { entry throws(CofferError) in
                    guard await entries.put(entry) else { throw CofferError(.cancelled) }
                }
                entries.finish(complete: true)
            } catch {
                entries.finish(complete: false)
            }
        }
        defer {
            entries.abandon()
            walker.cancel()
        }
        let now = Int64(Date().timeIntervalSince1970)
        guard coffer_zip_add(zip, prefix + "/", 0, now, 1) == 1 else { return false }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while let entry = entries.take() {
            guard let node = entry.node else { return false }  // a folder that could not be read
            guard node.special == nil, node.linkTarget == nil else { continue }
            let name = prefix + "/" + entry.relativePath
            let mtime = Int64(node.modificationDate.timeIntervalSince1970)
            if node.kind != .file {
                guard coffer_zip_add(zip, name + "/", 0, mtime, 1) == 1 else { return false }
                continue
            }
            let path = node.path
            guard case .success(let file) = web.blocking(in: session, { () async throws(CofferError) in
                try await session.perform(OpenFile(path))
            }) else { continue }  // gone since the walk met it
            defer { _ = web.blocking(in: session) { () async throws(CofferError) in await file.close() } }
            guard coffer_zip_add(zip, name, file.size, mtime, 0) == 1 else { return false }
            guard file.size > 0 else { continue }
            if let reader = try? file.directReader() {
                defer { reader.close() }
                var offset: Int64 = 0
                while offset < file.size {
                    guard let count = try? reader.read(at: offset, into: buffer), count > 0 else { return false }
                    guard coffer_zip_write(zip, buffer.baseAddress, count) == 1, !out.failed else { return false }
                    offset += Int64(count)
                }
            } else {
                // Another backend's file: read ahead by one task of the session, piece by piece.
                let pieces = RemoteRead(file, from: 0, through: file.size - 1, in: session)
                defer { pieces.stop() }
                var sent: Int64 = 0
                while let piece = pieces.next() {
                    let written = piece.withUnsafeBytes { coffer_zip_write(zip, $0.baseAddress, $0.count) }
                    guard written == 1, !out.failed else { return false }
                    sent += Int64(piece.count)
                }
                guard sent == file.size else { return false }
            }
        }
        return entries.completed
    }
}
