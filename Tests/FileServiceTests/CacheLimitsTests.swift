import CofferTestSupport
import Foundation
import Testing
@testable import FileService

/// The thumbnail cache kept within its limits, as GNOME's housekeeping keeps its own.
struct CacheLimitsTests {
    let directory = TemporaryDirectory("coffer-cache-limits")
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A file of `size` bytes at `relative`, last modified `days` before `now`.
    func put(_ relative: String, size: Int, daysOld days: Double) throws {
        let path = directory.url("Thumbnails/" + relative)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try Data(repeating: 7, count: size).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.modificationDate: now.addingTimeInterval(-days * 86_400)], ofItemAtPath: path)
    }

    func exists(_ relative: String) -> Bool {
        FileManager.default.fileExists(atPath: directory.url("Thumbnails/" + relative))
    }

    func trim(_ limits: CacheLimits) async throws -> CacheTrimReport {
        await ThumbnailCache(path: directory.url("Thumbnails"), limits: limits).trim(now: now)
    }

    @Test func thumbnailsOlderThanTheAgeLimitGoInEveryFolder() async throws {
        try put("normal/old.png", size: 100, daysOld: 181)
        try put("large/old.png", size: 100, daysOld: 400)
        try put("fail/coffer-1.0/old.png", size: 10, daysOld: 200)
        try put("xx-large/young.png", size: 100, daysOld: 179)
        try put("normal/young.png", size: 100, daysOld: 1)
        try put("CACHEDIR.TAG", size: 43, daysOld: 1000)
        let report = try await trim(.standard)
        #expect(report == CacheTrimReport(removedFiles: 3, removedBytes: 210, keptFiles: 2, keptBytes: 200))
        #expect(!exists("normal/old.png") && !exists("large/old.png") && !exists("fail/coffer-1.0/old.png"))
        #expect(exists("xx-large/young.png") && exists("normal/young.png"))
        // Not a thumbnail: the tag that keeps backups out of the cache stays, whatever its age.
        #expect(exists("CACHEDIR.TAG"))
    }

    @Test func thenTheOldestGoUntilTheRestFit() async throws {
        for day in 1...10 {
            try put("normal/\(day).png", size: 1_000_000, daysOld: Double(day))
        }
        try put("large/a.png", size: 500_000, daysOld: 5.5)
        // 10.5 MB in all, 4 MB allowed: the six oldest whole megabytes go, and the half one
        // between them.
        let report = try await trim(CacheLimits(days: 180, megabytes: 4))
        #expect(report.removedFiles == 7 && report.removedBytes == 6_500_000)
        #expect(report.keptBytes == 4_000_000 && report.keptBytes <= 4_000_000)
        #expect((1...4).allSatisfy { exists("normal/\($0).png") })
        #expect((5...10).allSatisfy { !exists("normal/\($0).png") } && !exists("large/a.png"))
    }

    @Test func aSizeThatLostThumbnailsLosesItsFolderManifests() async throws {
        try put("normal/old.png", size: 100, daysOld: 365)
        try put("normal/.coffer-folders/0123456789abcdef", size: 80, daysOld: 1)
        try put("large/young.png", size: 100, daysOld: 1)
        try put("large/.coffer-folders/fedcba9876543210", size: 80, daysOld: 1)
        _ = try await trim(.standard)
        // The manifest would have said the removed thumbnail was current.
        #expect(!exists("normal/.coffer-folders/0123456789abcdef"))
        #expect(exists("large/.coffer-folders/fedcba9876543210") && exists("large/young.png"))
    }

    @Test func noLimitKeepsEverything() async throws {
        try put("normal/ancient.png", size: 2_000_000, daysOld: 5000)
        let report = try await trim(CacheLimits(days: -1, megabytes: -1))
        #expect(report.removedFiles == 0 && exists("normal/ancient.png"))
        #expect(CacheLimits.standard == CacheLimits(thumbnailMaxAge: .seconds(180 * 86_400), thumbnailMaxBytes: 512_000_000))
    }

    @Test func aLinkInTheCacheIsNeitherFollowedNorCounted() async throws {
        let outside = directory.url("outside.png")
        try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: outside))
        try put("normal/young.png", size: 10, daysOld: 1)
        try FileManager.default.createSymbolicLink(atPath: directory.url("Thumbnails/normal/link.png"), withDestinationPath: outside)
        try FileManager.default.setAttributes([.modificationDate: now.addingTimeInterval(-900 * 86_400)], ofItemAtPath: outside)
        let report = try await trim(.standard)
        #expect(report.removedFiles == 0 && FileManager.default.fileExists(atPath: outside))
    }
}
