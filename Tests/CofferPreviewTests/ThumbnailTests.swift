@testable import CofferPreview
import CofferCore
import CofferTestSupport
@_spi(Engine) import FileService
import Foundation
import Testing

@Suite(.enabled(if: Media.folder != nil, Comment(rawValue: Media.missing)))
struct ThumbnailTests {
    @Test(arguments: ["photo.jpg", "wide.png", "wide.webp", "wide.tif", "wide.heic", "wide.avif", "animated.gif",
                      "drawing.svg", "report.pdf"])
    func everyFormatGetsAThumbnailThatFits(name: String) async throws {
        let fixture = try await PreviewFixture()
        let preview = try await fixture.preview(name)
        let (width, height): (Int, Int) = switch preview.details {
        case .image(let image): (image.width, image.height)
        case .document(let pdf): (pdf.pageWidth, pdf.pageHeight)
        default: (0, 0)
        }
        for pixels in [128, 256] {
            let thumbnail = try await fixture.thumbnail(name, pixels: pixels)
            let longest = max(thumbnail.width, thumbnail.height)
            #expect(longest == min(pixels, max(width, height)), "\(name) at \(pixels): \(thumbnail.width)×\(thumbnail.height)")
            // The shape is kept (to a pixel), whatever the size. The photo is turned upright by its orientation.
            let turned = name == "photo.jpg"
            let expected = Double(turned ? height : width) / Double(turned ? width : height)
            #expect(abs(Double(thumbnail.width) / Double(thumbnail.height) - expected) < 0.05, "\(name) at \(pixels)")
            #expect(Array(thumbnail.png.prefix(8)) == PNGText.signature)
        }
        #expect(fixture.cached("normal").count == 1 && fixture.cached("large").count == 1)
    }

    @Test func otherToolsReadTheCacheAsTheStandardLaysItOut() async throws {
        let fixture = try await PreviewFixture()
        let thumbnail = try await fixture.thumbnail("photo.jpg")
        let file = try #require(thumbnail.cachePath)
        let node = try await fixture.service.stat(fixture.path("photo.jpg"))
        let info = try #require(try MediaFixtures.read([file]).first)
        #expect(info.format == "PNG")
        #expect(info.width == thumbnail.width && info.height == thumbnail.height && max(info.width, info.height) == 128)
        #expect(info.text["Thumb::URI"] == "file://" + fixture.userFiles + "/m/photo.jpg")
        #expect(info.text["Thumb::MTime"] == String(Int64(node.modificationDate.timeIntervalSince1970)))
        #expect(info.text["Thumb::Size"] == String(node.size))
        // Named by the MD5 of the URI, in `normal/`, beside a CACHEDIR.TAG; private to the user.
        #expect(file == "\(fixture.thumbnails)/normal/\(info.uriMD5).png")
        #expect(FileManager.default.fileExists(atPath: fixture.thumbnails + "/CACHEDIR.TAG"))
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // What a client gets carries no host path (issue 30): the same image, without the text.
        #expect(PNGText.chunks(in: thumbnail.png).isEmpty)
        #expect(!String(decoding: thumbnail.png, as: UTF8.self).contains(fixture.userFiles))
        let sent = try #require(try MediaFixtures.read(bytes: thumbnail.png))
        #expect(sent.width == info.width && sent.height == info.height && sent.text.isEmpty)
        // Read again from the cache: stripped the same way.
        let again = try await fixture.thumbnail("photo.jpg")
        #expect(again.png == thumbnail.png)
    }

    @Test func aNameWithSpacesAndChineseIsEscapedInItsURI() async throws {
        let fixture = try await PreviewFixture()
        try FileManager.default.copyItem(atPath: fixture.userFiles + "/m/wide.png", toPath: fixture.userFiles + "/m/照片 #1.png")
        let thumbnail = try await fixture.thumbnail("照片 #1.png")
        let cached = try #require(thumbnail.cachePath)
        let info = try #require(try MediaFixtures.read([cached]).first)
        #expect(info.text["Thumb::URI"] == "file://" + fixture.userFiles + "/m/%E7%85%A7%E7%89%87%20%231.png")
        #expect(thumbnail.cachePath?.hasSuffix("/\(info.uriMD5).png") == true)
    }

    @Test func aThumbnailIsNeverLargerThanItsImage() async throws {
        let fixture = try await PreviewFixture()
        let thumbnail = try await fixture.thumbnail("small.png", pixels: 256)
        #expect(thumbnail.width == 64 && thumbnail.height == 48)
    }

    @Test func theCacheAnswersUntilTheFileChangesThenItIsMadeAgain() async throws {
        let fixture = try await PreviewFixture()
        let first = try await fixture.thumbnail("wide.png")
        let file = try #require(first.cachePath)
        let inode = try FileManager.default.attributesOfItem(atPath: file)[.systemFileNumber] as? Int
        let again = try await fixture.thumbnail("wide.png")
        #expect(again.png == first.png)
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.systemFileNumber] as? Int == inode)

        // Another picture under the same name, dated a minute later: the thumbnail is stale.
        let target = fixture.userFiles + "/m/wide.png"
        try FileManager.default.removeItem(atPath: target)
        try FileManager.default.copyItem(atPath: fixture.userFiles + "/m/small.png", toPath: target)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: target)
        let remade = try await fixture.thumbnail("wide.png")
        #expect(remade.width == 64 && remade.height == 48)
        let info = try #require(try MediaFixtures.read([file]).first)
        let node = try await fixture.service.stat(fixture.path("wide.png"))
        #expect(info.text["Thumb::MTime"] == String(Int64(node.modificationDate.timeIntervalSince1970)))
        #expect(info.width == 64)
    }

    @Test func aCorruptImageIsRememberedInFailAndNotTriedAgain() async throws {
        let fixture = try await PreviewFixture()
        let error = await coffer { try await fixture.thumbnail("corrupt.jpg") }
        #expect(error?.kind == .corruptFile && error?.detail == "thumbnail-failed")
        let failures = fixture.cached("fail/coffer-1.0")
        #expect(failures.count == 1)
        let failure = try #require(failures.first)
        let record = "\(fixture.thumbnails)/fail/coffer-1.0/\(failure)"
        let info = try #require(try MediaFixtures.read([record]).first)
        #expect(info.text["Thumb::URI"]?.hasSuffix("/m/corrupt.jpg") == true && "\(info.uriMD5).png" == failures.first)
        let inode = try FileManager.default.attributesOfItem(atPath: record)[.systemFileNumber] as? Int
        // Asked again, it fails at once from the record: the record is not written again.
        let second = await coffer { try await fixture.thumbnail("corrupt.jpg") }
        #expect(second?.kind == .corruptFile)
        #expect(try FileManager.default.attributesOfItem(atPath: record)[.systemFileNumber] as? Int == inode)
        #expect(fixture.cached("normal").isEmpty)
    }

    @Test func aDecompressionBombIsRefusedBeforeDecoding() async throws {
        let fixture = try await PreviewFixture()
        // Its facts come from the header alone.
        guard case .image(let image) = try await fixture.preview("bomb.png").details else { Issue.record("not an image"); return }
        #expect(image.width == 100_000 && image.height == 100_000)
        let error = await coffer { try await fixture.thumbnail("bomb.png", pixels: 256) }
        #expect(error?.kind == .tooLarge && error?.detail == "image-too-large")
        #expect(error?.userMessage(in: .english).text.contains("256 megapixels") == true)
        // Remembered with its reason.
        let again = await coffer { try await fixture.thumbnail("bomb.png", pixels: 256) }
        #expect(again?.kind == .tooLarge)
    }

    /// An interlaced image is decoded whole before it is shrunk: past 16 megapixels it is
    /// refused from its header, as a bomb is, and remembered (issue 32).
    @Test func aLargeInterlacedImageIsRefusedBeforeDecoding() async throws {
        let fixture = try await PreviewFixture()
        guard case .image(let image) = try await fixture.preview("interlaced.png").details else { Issue.record("not an image"); return }
        #expect(image.width == 5000 && image.height == 5000)
        let error = await coffer { try await fixture.thumbnail("interlaced.png", pixels: 128) }
        #expect(error?.kind == .tooLarge && error?.detail == "interlaced-too-large")
        #expect(error?.userMessage(in: .english).text.contains("interlaced image of more than 16 megapixels") == true)
        #expect(await coffer { try await fixture.thumbnail("interlaced.png", pixels: 128) }?.detail == "interlaced-too-large")
    }

    @Test func filesOfAMountWithoutDescriptorsAreCopiedForTheLibrary() async throws {
        let fixture = try await PreviewFixture()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixture.userFiles + "/m/wide.png")))
        let path = VirtualPath(mount: "mem", trustedComponents: ["wide.png"])
        _ = try await fixture.service.writeFile(path, bytes: bytes, conflict: .fail)
        let thumbnail = try await fixture.session.perform(MakeThumbnail(path))
        #expect(thumbnail.width == 128 && thumbnail.height == 85)
        let cached = try #require(thumbnail.cachePath)
        let info = try #require(try MediaFixtures.read([cached]).first)
        #expect(info.text["Thumb::URI"] == "coffer://mem/wide.png")
        guard case .image(let image) = try await fixture.session.perform(PreviewItem(path)).details else {
            Issue.record("not an image")
            return
        }
        #expect(image.width == 300)
        // The copies were unnamed: nothing is left beside the cache.
        #expect(!fixture.cached("").contains { $0.hasPrefix(".scratch-") })
    }

    @Test func aFolderIsThumbnailedOnceThenFoundCurrent() async throws {
        let fixture = try await PreviewFixture()
        let nodes = try await fixture.service.list(fixture.path(""), options: ListOptions()).items
        let first = try await fixture.session.perform(PrefetchThumbnails(nodes))
        // 12 images and the PDF, of which the corrupt JPEG, the bomb and the interlaced giant fail.
        #expect(first.made == 10 && first.failed == 3 && first.current == 0)
        #expect(first.skipped == nodes.count - 13)
        #expect(fixture.cached("normal").count == 10)
        let second = try await fixture.session.perform(PrefetchThumbnails(nodes))
        #expect(second.made == 0 && second.current == 10 && second.failed == 3)
    }

    @Test func aSecondFolderRunTrustsItsManifestUntilAFileChanges() async throws {
        let fixture = try await PreviewFixture()
        let nodes = try await fixture.service.list(fixture.path(""), options: ListOptions()).items
        _ = try await fixture.session.perform(PrefetchThumbnails(nodes))
        let manifests = try FileManager.default.contentsOfDirectory(atPath: fixture.thumbnails + "/normal/.coffer-folders")
        #expect(manifests.count == 1)
        // Without reading a thumbnail, the manifest says all are current: one removed behind
        // its back is not noticed by the folder's run…
        let thumbnail = try await fixture.thumbnail("wide.png")
        try FileManager.default.removeItem(atPath: try #require(thumbnail.cachePath))
        let trusted = try await fixture.session.perform(PrefetchThumbnails(nodes))
        #expect(trusted.current == 10 && trusted.made == 0 && trusted.failed == 3)
        // …but is made again when it is asked for.
        let again = try await fixture.thumbnail("wide.png")
        #expect(FileManager.default.fileExists(atPath: try #require(again.cachePath)))

        // A file changed since: checked and made again, the manifest updated.
        let target = fixture.userFiles + "/m/photo.jpg"
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(120)], ofItemAtPath: target)
        let changed = try await fixture.service.list(fixture.path(""), options: ListOptions()).items
        let remade = try await fixture.session.perform(PrefetchThumbnails(changed))
        #expect(remade.made == 1 && remade.current == 9)
        #expect(try await fixture.session.perform(PrefetchThumbnails(changed)).current == 10)
    }

    @Test func thumbnailsPastTheCacheLimitsAreTrimmedThenMadeAgain() async throws {
        let fixture = try await PreviewFixture()
        let nodes = try await fixture.service.list(fixture.path(""), options: ListOptions()).items
        _ = try await fixture.session.perform(PrefetchThumbnails(nodes))
        #expect(fixture.cached("normal").count == 10 && fixture.cached("fail/coffer-1.0").count == 3)
        #expect(try await fixture.service.feature(ThumbnailCache.self)?.trim().removedFiles == 0)
        // Half a year and a day later, every one has expired (the standard limits: 180 days).
        let report = try #require(await fixture.service.feature(ThumbnailCache.self)?.trim(now: Date().addingTimeInterval(181 * 86_400)))
        #expect(report.removedFiles == 13 && report.keptFiles == 0)
        #expect(fixture.cached("normal").isEmpty && fixture.cached("fail/coffer-1.0").isEmpty)
        // The folder's manifest went with them: the next run makes them again, none trusted.
        let again = try await fixture.session.perform(PrefetchThumbnails(nodes))
        #expect(again.made == 10 && again.failed == 3 && again.current == 0)
    }

    @Test func manifestNamesSurviveTabsAndNewlines() {
        for name in ["plain.jpg", "tab\there.jpg", "new\nline\r\n.jpg", "back\\slash.jpg", "照片.jpg"] {
            #expect(FolderManifest.unescaped(FolderManifest.escaped(name)) == name)
            #expect(!FolderManifest.escaped(name).contains { $0 == "\n" || $0 == "\t" })
        }
    }

    @Test func aCancelledFolderLeavesOnlyWholeThumbnails() async throws {
        let fixture = try await PreviewFixture()
        for index in 0..<40 {
            try FileManager.default.copyItem(atPath: fixture.userFiles + "/m/photo.jpg",
                                             toPath: fixture.userFiles + "/m/copy \(index).jpg")
        }
        let nodes = try await fixture.service.list(fixture.path(""), options: ListOptions()).items
        let session = fixture.session
        let task = Task { try await session.perform(PrefetchThumbnails(nodes)) }
        try await Task.sleep(for: .milliseconds(30))
        task.cancel()
        let outcome = await task.result
        if case .success(let summary) = outcome {
            // It may have finished first on a fast machine; then everything was made.
            #expect(summary.made + summary.failed + summary.skipped == nodes.count)
        } else {
            #expect(await coffer { try outcome.get() }?.kind == .cancelled)
        }
        let made = fixture.cached("normal")
        #expect(made.allSatisfy { $0.hasSuffix(".png") }, "a temporary file was left: \(made)")
        for file in made {
            let info = try #require(try MediaFixtures.read(["\(fixture.thumbnails)/normal/\(file)"]).first)
            #expect(max(info.width, info.height) <= 128 && min(info.width, info.height) > 0)
        }
    }

    @Test func onlyImagesAndPDFsHaveThumbnails() async throws {
        let fixture = try await PreviewFixture()
        let error = await coffer { try await fixture.thumbnail("notes.txt") }
        #expect(error?.kind == .unsupported && error?.detail == "no-thumbnail")
        let bad = await coffer { try await fixture.thumbnail("photo.jpg", pixels: 0) }
        #expect(bad?.kind == .invalidArgument)
    }
}

@Suite struct PNGTextTests {
    @Test func readsTextChunksBeforeTheImageData() throws {
        let png = try ImageLibrary.labelled(ImageLibrary.onePixelPNG, with: [("Thumb::URI", "file:///a%20b.png"), ("Thumb::MTime", "12")])
        #expect(PNGText.chunks(in: png) == ["Thumb::URI": "file:///a%20b.png", "Thumb::MTime": "12"])
        #expect(PNGText.chunks(in: ImageLibrary.onePixelPNG).isEmpty)
        #expect(PNGText.chunks(in: Array("not a png".utf8)).isEmpty)
        // A chunk cut short by the end of what was read is left out, not misread.
        #expect(PNGText.chunks(in: Array(png.prefix(40))).isEmpty)
        // Without its text, the rest is kept byte for byte.
        #expect(PNGText.removingText(from: png) == ImageLibrary.onePixelPNG)
        #expect(PNGText.removingText(from: Array("not a png".utf8)) == Array("not a png".utf8))
    }

    @Test func sizesByNameAndPixels() {
        #expect(ThumbnailSize(name: "large") == .large && ThumbnailSize(name: "512") == .xLarge)
        #expect(ThumbnailSize(name: "300") == nil)
        #expect(ThumbnailSize.fitting(300) == .xLarge && ThumbnailSize.fitting(5000) == .xxLarge)
        #expect(ThumbnailSize.xxLarge.folderName == "xx-large")
    }

    @Test func exifDatesAndTexts() {
        #expect(Previewer.exifDate("2024:05:01 12:30:00 (2024:05:01 12:30:00, ASCII, 20 components, 20 bytes)")
                == "2024-05-01T12:30:00")
        #expect(Previewer.exifDate("0000:00:00 00:00:00") == nil)
        #expect(Previewer.exifDate("garbage") == nil)
        #expect(Previewer.exifText("Canon (Canon, ASCII, 6 components, 6 bytes)") == "Canon")
    }
}
