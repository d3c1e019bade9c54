import CofferCore
import CofferPreview
import CofferTestSupport
import FileService
import Foundation
import Testing

@Suite(.enabled(if: Media.folder != nil, Comment(rawValue: Media.missing)))
struct PreviewFactsTests {
    @Test func aPhotoTellsItsSizeOrientationDateAndCamera() async throws {
        let fixture = try await PreviewFixture()
        let preview = try await fixture.preview("photo.jpg")
        guard case .image(let image) = preview.details else { Issue.record("not an image: \(preview.details)"); return }
        #expect(image.width == 640 && image.height == 480)
        #expect(image.format == "jpeg")
        #expect(image.frames == 1)
        #expect(image.orientation == 6)
        // DateTimeOriginal wins over DateTime (the last change).
        #expect(image.taken == "2024-05-01T12:30:00")
        #expect(image.camera == "Canon EOS R5")
        #expect(preview.hasThumbnail)
    }

    @Test(arguments: [("wide.png", "png"), ("wide.webp", "webp"), ("wide.tif", "tiff"), ("wide.heic", "heif"),
                      ("wide.avif", "heif")])
    func everyImageFormatTellsItsPixels(name: String, format: String) async throws {
        let fixture = try await PreviewFixture()
        guard case .image(let image) = try await fixture.preview(name).details else { Issue.record("\(name): not an image"); return }
        #expect(image.width == 300 && image.height == 200, "\(name)")
        #expect(image.format == format, "\(name)")
        #expect(image.taken == nil && image.camera == nil, "\(name)")
    }

    @Test func anAnimationCountsItsFramesAndSVGItsSize() async throws {
        let fixture = try await PreviewFixture()
        guard case .image(let gif) = try await fixture.preview("animated.gif").details,
              case .image(let svg) = try await fixture.preview("drawing.svg").details else {
            Issue.record("not images")
            return
        }
        #expect(gif.frames == 3 && gif.width == 120 && gif.height == 90 && gif.format == "gif")
        #expect(svg.width == 400 && svg.height == 100 && svg.format == "svg")
    }

    @Test func aPDFTellsItsPagesPageSizeTitleAndAuthor() async throws {
        let fixture = try await PreviewFixture()
        guard case .document(let pdf) = try await fixture.preview("report.pdf").details else { Issue.record("not a document"); return }
        #expect(pdf.pages == 2)
        #expect(pdf.pageWidth == 595 && pdf.pageHeight == 842)
        #expect(pdf.title == "Quarterly report")
        #expect(pdf.author == "Li Wei")
    }

    @Test func textTellsItsEncodingLinesAndFirstLines() async throws {
        let fixture = try await PreviewFixture()
        guard case .text(let notes) = try await fixture.preview("notes.txt").details,
              case .text(let utf16) = try await fixture.preview("utf16.txt").details,
              case .text(let chinese) = try await fixture.preview("chinese.txt").details else {
            Issue.record("not text")
            return
        }
        #expect(notes.encoding == "UTF-8")
        #expect(notes.lines == 26 && notes.linesComplete)
        #expect(notes.firstLines.count == Previewer.firstLineCount)
        #expect(notes.firstLines.first == "line 1: 你好")
        #expect(utf16.encoding == "UTF-16LE" && utf16.lines == 2 && utf16.firstLines == ["第一行", "第二行"])
        #expect(chinese.encoding == "GB18030" && chinese.lines == 2 && chinese.firstLines.first == "中文文本，第一行")
    }

    @Test func aLastLineWithoutANewlineCountsAndLongLinesAreCut() async throws {
        let fixture = try await PreviewFixture()
        let long = String(repeating: "长", count: 500)
        try Data("first\r\nsecond\n\(long)".utf8).write(to: URL(fileURLWithPath: fixture.userFiles + "/m/open.txt"))
        guard case .text(let text) = try await fixture.preview("open.txt").details else { Issue.record("not text"); return }
        #expect(text.lines == 3 && text.linesComplete)
        #expect(text.firstLines == ["first", "second", String(repeating: "长", count: Previewer.lineLength)])
    }

    @Test func archivesListTheirEntriesWithoutExtracting() async throws {
        let fixture = try await PreviewFixture()
        let before = try FileManager.default.subpathsOfDirectory(atPath: fixture.directory.path).sorted()
        guard case .archive(let zip) = try await fixture.preview("bundle.zip").details,
              case .archive(let tar) = try await fixture.preview("bundle.tar").details,
              case .archive(let gzipped) = try await fixture.preview("bundle.tar.gz").details,
              case .archive(let seven) = try await fixture.preview("bundle.7z").details else {
            Issue.record("not archives")
            return
        }
        #expect(zip.format.hasPrefix("ZIP"))
        #expect(zip.entries == 3 && zip.entriesComplete)
        #expect(zip.firstEntries.map(\.path) == ["docs/readme.txt", "图片/照片.jpg", "empty/"])
        #expect(zip.firstEntries.map(\.isFolder) == [false, false, true])
        #expect(zip.firstEntries[0].size == 600 && zip.declaredBytes == 600 + 1002)
        #expect(tar.entries == 30 && tar.compression == nil && tar.format.contains("tar"))
        #expect(tar.firstEntries.count == Previewer.firstEntryCount && tar.firstEntries.first?.path == "items/f00.txt")
        #expect(gzipped.entries == 30 && gzipped.compression == "gzip")
        #expect(seven.format.contains("7-Zip") && seven.entries == 2)
        #expect(Set(seven.firstEntries.map(\.path)) == ["a.txt", "b.txt"])
        // Nothing was written anywhere in the container: no entry was extracted.
        #expect(try FileManager.default.subpathsOfDirectory(atPath: fixture.directory.path).sorted() == before)
    }

    /// A 2 MB tar.gz of 512 MiB of zeros: going past the first entry's data would decompress
    /// it all, so the count stops at the decompression budget and says it is incomplete.
    @Test func aCompressedArchiveIsNotDecompressedPastItsBudget() async throws {
        let fixture = try await PreviewFixture()
        guard case .archive(let archive) = try await fixture.preview("zeros.tar.gz").details else {
            Issue.record("not an archive")
            return
        }
        #expect(archive.firstEntries.map(\.path) == ["zeros.bin"] && archive.entries == 1 && !archive.entriesComplete)
        #expect(archive.declaredBytes == 512 << 20 && archive.compression == "gzip")
    }

    @Test func aDamagedArchiveIsAClearError() async throws {
        let fixture = try await PreviewFixture()
        try Data("not an archive at all".utf8).write(to: URL(fileURLWithPath: fixture.userFiles + "/m/broken.zip"))
        let error = await coffer { try await fixture.preview("broken.zip") }
        #expect(error?.kind == .corruptFile && error?.detail == "archive-damaged")
        #expect(error?.userMessage(in: .english).text.contains("could not be read as an archive") == true)
    }

    @Test func audioAndOtherFilesHaveNoFactsBeyondTheirType() async throws {
        let fixture = try await PreviewFixture()
        try Data([0xFF, 0xFB, 0x90, 0x00] + [UInt8](repeating: 7, count: 500)).write(to: URL(fileURLWithPath: fixture.userFiles + "/m/song.mp3"))
        try Data([0, 1, 2, 3, 0xFE, 0xFF]).write(to: URL(fileURLWithPath: fixture.userFiles + "/m/blob.bin"))
        for name in ["song.mp3", "blob.bin"] {
            let preview = try await fixture.preview(name)
            #expect(preview.details.kind == "none", "\(name)")
            #expect(!preview.hasThumbnail)
        }
    }

    @Test func aLinkOutOfTheMountIsNotFollowed() async throws {
        let fixture = try await PreviewFixture()
        let outside = fixture.directory.url("outside.jpg")
        try FileManager.default.copyItem(atPath: fixture.userFiles + "/m/photo.jpg", toPath: outside)
        try FileManager.default.createSymbolicLink(atPath: fixture.userFiles + "/m/link.jpg", withDestinationPath: outside)
        // A link is listed but never opened: no facts of the photo it points to.
        #expect(try await fixture.preview("link.jpg").details.kind == "none")
        let error = await coffer { try await fixture.thumbnail("link.jpg") }
        #expect(error?.kind == .unsupported)
        #expect(fixture.cached("normal").isEmpty)
    }
}
