import CCofferArchive
import CofferCore
import CofferHTTPServer
import FileService
import Foundation

/// A folder as a `.zip`, made by libarchive as it is sent (HTTP chunked transfer encoding):
/// memory stays at one read's worth whatever the folder holds. Hidden items, links and
/// special files are left out, as every listing leaves them out.
extension WebHandler {
    /// `beforeLastBytes` runs once the whole zip is made, just before its last bytes go, with
    /// the bytes sent by then (a share counts the download there, as it does a file's). Read
    /// in `session` (a share visitor's).
    func sendZip(_ exchange: HTTPExchange, of folder: FileNode, named name: String, in session: Session,
                 beforeLastBytes: (Int64) -> Void = { _ in }) -> (status: Int, sent: Int64) {
        let out = exchange.chunked()
        guard let zip = coffer_zip_open({ context, bytes, length in
            Unmanaged<ChunkedBody>.fromOpaque(context!).takeUnretainedValue().write(bytes!, length) ? 1 : 0
        }, Unmanaged.passUnretained(out).toOpaque()) else {
            return (respond(exchange, 500, text: "libarchive (libarchive13) is needed to send a folder as a zip."), 0)
        }
        let headers = "Content-Type: application/zip\r\nContent-Disposition: attachment; "
            + HTTPRules.dispositionName(name + ".zip") + "\r\nTransfer-Encoding: chunked\r\n"
        exchange.respond(200, headers: Self.sharePolicy + headers, length: nil)
        var complete = true
        withExtendedLifetime(out) {
            complete = addFolder(folder.path, prefix: name, to: zip, out: out, in: session)
        }
        // A zip cut short is not finished: the visitor's unzip says it is damaged.
        _ = coffer_zip_close(zip, complete ? 1 : 0)
        if complete {
            beforeLastBytes(out.sent)
            out.end()
        }
        return (200, out.sent)
    }

    private func addFolder(_ path: VirtualPath, prefix: String, to zip: OpaquePointer, out: ChunkedBody,
                           in session: Session) -> Bool {
        guard case .success(let listing) = blocking(in: session, { () async throws(CofferError) in try await session.perform(ListFolder(path)) }),
              coffer_zip_add(zip, prefix + "/", 0, Int64(Date().timeIntervalSince1970), 1) == 1
        else { return false }
        for item in listing.items where !item.isHidden && item.special == nil && item.linkTarget == nil {
            let entry = prefix + "/" + item.name
            if item.kind != .file {
                guard addFolder(item.path, prefix: entry, to: zip, out: out, in: session) else { return false }
                continue
            }
            let itemPath = item.path
            guard case .success(let file) = blocking(in: session, { () async throws(CofferError) in try await session.perform(OpenFile(itemPath)) })
            else { continue }  // gone since the listing
            defer { _ = blocking(in: session) { () async throws(CofferError) in await file.close() } }
            let mtime = Int64(item.modificationDate.timeIntervalSince1970)
            guard coffer_zip_add(zip, entry, file.size, mtime, 0) == 1 else { return false }
            var offset: Int64 = 0
            while offset < file.size {
                let at = offset
                guard case .success(let bytes) = blocking(in: session, { () async throws(CofferError) -> [UInt8] in
                    try await file.read(at: at, upTo: 1 << 20)
                }), !bytes.isEmpty else { return false }
                guard bytes.withUnsafeBytes({ coffer_zip_write(zip, $0.baseAddress, $0.count) }) == 1, !out.failed else { return false }
                offset += Int64(bytes.count)
            }
        }
        return true
    }
}
