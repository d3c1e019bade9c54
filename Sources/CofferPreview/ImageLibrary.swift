import CCofferVips
import CofferCore
import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// libvips, as previews use it: headers without decoding, and thumbnails. The library is
/// loaded the first time one is asked for.
enum ImageLibrary {
    /// The most pixels an image may declare to be decoded (256 megapixels: a 16,000 × 16,000
    /// panorama). A file declaring more is refused before any decoding, so a decompression
    /// bomb (a PNG of 100,000 × 100,000) costs a header read.
    static let maxPixels: Int64 = 256_000_000

    static func requireLibrary(_ path: VirtualPath?) throws(CofferError) {
        guard coffer_vips_available() == 1 else { throw CofferError(.unsupported, path: path, detail: "no-image-library") }
    }

    struct Header: Codable, Sendable {
        var width: Int
        var height: Int
        var pages: Int
        /// EXIF orientation 1–8, or `nil`.
        var orientation: Int?
        /// libvips' loader without its `load_source` ending: `jpeg`, `png`, `pdf`, `heif`.
        var format: String
        var fields: [String: String]
    }

    /// The header of the image in `fd`, with the metadata `fields` that are present.
    /// - Throws: `unsupported` (`no-image-library`) without libvips; `corruptFile` for a
    ///   file libvips cannot read.
    static func header(of fd: Int32, fields: [String], path: VirtualPath) throws(CofferError) -> Header {
        try requireLibrary(path)
        var raw = coffer_image_header()
        var error = [CChar](repeating: 0, count: 512)
        guard let image = coffer_vips_open_header(fd, &raw, &error, error.count) else {
            throw CofferError(.corruptFile, path: path, detail: String(cBuffer: error))
        }
        defer { coffer_vips_release(image) }
        var values: [String: String] = [:]
        for name in fields {
            guard let value = coffer_vips_field(image, name) else { continue }
            values[name] = String(cString: value)
            coffer_vips_free(value)
        }
        let loader = withUnsafeBytes(of: raw.loader) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let format = loader.replacingOccurrences(of: "load_source", with: "").replacingOccurrences(of: "load", with: "")
        return Header(width: Int(raw.width), height: Int(raw.height), pages: Int(max(raw.pages, 1)),
                      orientation: raw.orientation > 0 ? Int(raw.orientation) : nil, format: format, fields: values)
    }

    enum ThumbnailOutcome {
        case made(png: [UInt8], width: Int, height: Int)
        /// The file declares more than ``maxPixels``: `width × height`.
        case tooLarge(String)
        /// libvips could not decode it: its message.
        case undecodable(String)
    }

    /// A PNG of the image in `fd` fitting in `pixels` × `pixels`, carrying `labels` as text.
    static func thumbnail(of fd: Int32, pixels: Int, labels: [(String, String)], path: VirtualPath) throws(CofferError)
        -> ThumbnailOutcome {
        try requireLibrary(path)
        var png: UnsafeMutableRawPointer?
        var length = 0
        var width: Int32 = 0, height: Int32 = 0
        var error = [CChar](repeating: 0, count: 512)
        let status = withCStrings(labels.map(\.0)) { keys in
            withCStrings(labels.map(\.1)) { values in
                coffer_vips_thumbnail(fd, Int32(pixels), maxPixels, keys, values, labels.count, &png, &length,
                                      &width, &height, &error, error.count)
            }
        }
        switch status {
        case 0:
            defer { free(png) }
            let bytes = [UInt8](UnsafeRawBufferPointer(start: png, count: length))
            return .made(png: bytes, width: Int(width), height: Int(height))
        case 1: return .tooLarge(String(cBuffer: error))
        default: return .undecodable(String(cBuffer: error))
        }
    }

    /// `png` with `labels` as tEXt chunks after its header.
    static func labelled(_ png: [UInt8], with labels: [(String, String)]) throws(CofferError) -> [UInt8] {
        var out: UnsafeMutableRawPointer?
        var length = 0
        let status = withCStrings(labels.map(\.0)) { keys in
            withCStrings(labels.map(\.1)) { values in
                coffer_png_label(png, png.count, keys, values, labels.count, &out, &length)
            }
        }
        guard status == 0, let out else { throw CofferError(.ioError, detail: "zlib (libz.so.1) could not be loaded") }
        defer { free(out) }
        return [UInt8](UnsafeRawBufferPointer(start: out, count: length))
    }

    /// A transparent 1 × 1 PNG: the body of a failure record.
    static let onePixelPNG: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
        0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00, 0x00, 0x00,
        0x0B, 0x49, 0x44, 0x41, 0x54, 0x78, 0xDA, 0x63, 0x60, 0x00, 0x02, 0x00, 0x00, 0x05, 0x00, 0x01, 0xE9, 0xFA,
        0xDC, 0xD8, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ]
}
