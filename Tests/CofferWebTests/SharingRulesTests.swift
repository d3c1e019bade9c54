@testable import CofferWeb
import CofferCore
import FileService
import Foundation
import Testing

/// The pieces of share links that need no server: the multipart reader fed in pieces of every
/// size, identifiers, expiries and states (the rate limit on passwords is the service's:
/// `ShareVisitTests`).
struct SharingRulesTests {
    func body(_ files: [(String, [UInt8])], boundary: String = "XyZ") -> [UInt8] {
        var bytes: [UInt8] = Array("preamble\r\n".utf8)
        for (name, content) in files {
            bytes += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"\(name)\"\r\n\r\n".utf8)
            bytes += content + Array("\r\n".utf8)
        }
        bytes += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nnot a file\r\n--\(boundary)--\r\n".utf8)
        return bytes
    }

    /// What the reader gives for `bytes` fed `step` at a time: names and contents.
    func read(_ bytes: [UInt8], step: Int, boundary: String = "XyZ") -> (files: [(String?, [UInt8])], ended: Bool) {
        var reader = MultipartReader(boundary: boundary)
        var files: [(String?, [UInt8])] = []
        var ended = false
        var index = 0
        while index < bytes.count {
            for event in reader.feed(bytes[index..<min(index + step, bytes.count)]) {
                switch event {
                case .file(let name): files.append((name, []))
                case .bytes(let chunk): files[files.count - 1].1 += chunk
                case .end: ended = true
                }
            }
            index += step
        }
        return (files, ended)
    }

    @Test(arguments: [1, 2, 3, 7, 64, 4096])
    func multipartFilesComeWholeInPiecesOfAnySize(step: Int) {
        // Everything but the delimiter itself, which a sender never puts in content: its beginnings.
        let tricky = Array("a\r\n--XyQ is not it\r\n--Xy".utf8) + [0, 13, 10, 45, 45]
        let (files, ended) = read(body([("one.txt", Array("first".utf8)), ("two.bin", tricky), ("empty", [])]), step: step)
        #expect(ended)
        #expect(files.map(\.0) == ["one.txt", "two.bin", "empty"])
        #expect(files.map(\.1) == [Array("first".utf8), tricky, []])
    }

    @Test func aBodyCutOffEndsNothingAndTheBoundaryComesFromTheType() {
        let whole = body([("one.txt", Array("first".utf8))])
        #expect(read(Array(whole.dropLast(12)), step: 5).ended == false)
        #expect(MultipartReader.boundary(in: "multipart/form-data; boundary=\"----abc\"") == "----abc")
        #expect(MultipartReader.boundary(in: "multipart/form-data") == nil)
        #expect(MultipartReader.lastComponent(of: "C:\\Users\\me\\photo.jpg") == "photo.jpg")
        #expect(MultipartReader.lastComponent(of: "../../etc/passwd") == "passwd")
    }

    @Test func identifiersExpiriesAndStates() throws {
        let id = Share.makeID()
        #expect(Share.isWellFormedID(id) && id.count == 22)
        #expect(!Share.isWellFormedID("../../etc/passwd.....") && !Share.isWellFormedID(id + "x"))
        // Never taken for an option on a command line (`unshare ID`): 2,000 draws would meet a
        // leading `-` about 31 times.
        #expect((0..<2000).allSatisfy { _ in !Share.makeID().hasPrefix("-") })
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try Share.parseExpiry("7d", now: now) == now.addingTimeInterval(7 * 86400))
        #expect(throws: CofferError.self) { try Share.parseExpiry("2020-01-01", now: now) }
        #expect(throws: CofferError.self) { try Share.parseExpiry("soon", now: now) }
        var share = Share(id: id, path: "files:/a", isFolder: false, created: now, expires: now.addingTimeInterval(60),
                          password: nil, downloadLimit: 2, downloads: 1, allowsUpload: false)
        #expect(share.state(at: now) == .active)
        #expect(share.state(at: now.addingTimeInterval(61)) == .expired)
        share.downloads = 2
        #expect(share.state(at: now) == .exhausted)
    }
}
