public import CofferCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Checks that a `StorageBackend` keeps the contract the rest of Coffer relies on.
///
/// Run it from your backend's tests, with any test framework:
///
/// ```swift
/// @Test func myBackendConforms() async {
///     let report = await BackendConformance.run(.seeding(name: "mine", mount: "mine") { _ in MyBackend() })
///     #expect(report.isPassing, "\(report)")
/// }
/// ```
///
/// Every check starts from a fresh backend holding ``fixture`` — names with spaces, Chinese,
/// and `café` spelled both in NFC and in NFD, a dot-name, a file larger than a read chunk,
/// nested folders — and stops at its first violation. Checks that change things run only
/// for writable subjects; read-only subjects instead must refuse every change with
/// `readOnly`. Checks of a capability (`TaggingBackend`, `TouchingBackend`, …) run only
/// for a backend that adopts it; for the others they are listed in
/// ``Report/notApplicable``. The report lists what passed and, for what failed, why.
public enum BackendConformance {
    // MARK: The fixture

    /// One item of the fixture: a folder (`contents == nil`) or a file.
    public struct FixtureItem: Sendable {
        /// Relative to the backend's root, components joined with `/`.
        public var path: String
        /// A file's bytes; `nil` for a folder.
        public var contents: [UInt8]?

        /// Whether the item is a folder.
        public var isFolder: Bool { contents == nil }
        /// The names along ``path``, for `VirtualPath(mount:components:)`.
        public var components: [String] { path.split(separator: "/").map(String.init) }
    }

    /// The tree every check starts from, folders before what they hold.
    public static let fixture: [FixtureItem] = [
        FixtureItem(path: "Folder", contents: nil),
        FixtureItem(path: "Folder/b.txt", contents: Array("b".utf8)),
        FixtureItem(path: "Folder/Sub", contents: nil),
        FixtureItem(path: "Folder/Sub/deep.txt", contents: Array("deep".utf8)),
        FixtureItem(path: "hello.txt", contents: Array("hello, world".utf8)),
        FixtureItem(path: "big.bin", contents: (0..<300_001).map { UInt8($0 % 251) }),
        FixtureItem(path: "名字 with spaces.txt", contents: Array("中文内容".utf8)),
        FixtureItem(path: "caf\u{E9}.txt", contents: Array("nfc".utf8)),
        FixtureItem(path: "cafe\u{301}.txt", contents: Array("nfd".utf8)),
        FixtureItem(path: ".dotfile", contents: Array("hidden".utf8)),
    ]

    /// Writes the fixture into a host folder with plain system calls (names byte for byte),
    /// for backends that keep their items on disk.
    public static func writeFixture(_ items: [FixtureItem] = fixture, toFolder folder: String) throws {
        for item in items {
            let path = folder + "/" + item.path
            if let contents = item.contents {
                let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw CofferError(.ioError, detail: "fixture \(item.path)", errno: errno) }
                defer { close(fd) }
                let written = contents.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                guard written == contents.count else { throw CofferError(.ioError, detail: "fixture \(item.path)") }
            } else if mkdir(path, 0o755) != 0 {
                throw CofferError(.ioError, detail: "fixture \(item.path)", errno: errno)
            }
        }
    }

    // MARK: Subjects and reports

    /// A backend under test.
    public struct Subject: Sendable {
        /// What the report calls it.
        public var name: String
        /// The mount name its nodes are labelled with.
        public var mount: String
        /// Whether the checks that change things run (`true`), or the check that every change
        /// is refused with `readOnly` (`false`).
        public var isWritable: Bool
        /// A fresh backend holding the fixture. `scratch` is an empty host folder for this
        /// check alone, removed after it; backends that keep nothing on disk ignore it.
        public var make: @Sendable (_ fixture: [FixtureItem], _ scratch: String) async throws -> any StorageBackend

        /// A subject whose `make` returns a fresh backend already holding the fixture, for
        /// instance by ``BackendConformance/writeFixture(_:toFolder:)`` into `scratch`.
        public init(name: String, mount: String, isWritable: Bool,
                    make: @escaping @Sendable (_ fixture: [FixtureItem], _ scratch: String) async throws -> any StorageBackend) {
            self.name = name
            self.mount = mount
            self.isWritable = isWritable
            self.make = make
        }

        /// A writable backend made empty by `empty` and given the fixture through its own
        /// `createFolder` and `makeWrite`.
        public static func seeding(name: String, mount: String,
                                   _ empty: @escaping @Sendable (_ scratch: String) async throws -> any StorageBackend) -> Subject {
            Subject(name: name, mount: mount, isWritable: true) { fixture, scratch in
                let backend = try await empty(scratch)
                for item in fixture {
                    let path = try VirtualPath(mount: mount, components: item.components)
                    if let contents = item.contents {
                        let write = try await backend.makeWrite(at: path)
                        try await write.write(contents)
                        try await write.commit(conflict: .fail)
                    } else {
                        try await backend.createFolder(at: path)
                    }
                }
                return backend
            }
        }
    }

    /// A check that failed, and why.
    public struct Failure: Sendable, CustomStringConvertible {
        /// The check's ``Check/name``.
        public var check: String
        /// The promise that was broken, in a sentence.
        public var message: String
        /// `check: message`.
        public var description: String { "\(check): \(message)" }
    }

    /// What a run found.
    public struct Report: Sendable, CustomStringConvertible {
        /// The subject's ``Subject/name``.
        public var subject: String
        /// The names of the checks that passed, in the order they ran.
        public var passed: [String] = []
        /// The checks that failed, with why.
        public var failures: [Failure] = []
        /// The names of the capability checks that did not apply: the backend does not adopt
        /// the capability, or (for attributes) its storage keeps none. Neither passed nor failed.
        public var notApplicable: [String] = []

        /// Whether every check that ran passed (and at least one ran).
        public var isPassing: Bool { failures.isEmpty && !passed.isEmpty }
        /// The names of the checks that failed.
        public var failedChecks: Set<String> { Set(failures.map(\.check)) }

        /// A summary line, then one line per failure.
        public var description: String {
            var summary = "\(subject): \(passed.count) checks passed, \(failures.count) failed"
            if !notApplicable.isEmpty { summary += ", \(notApplicable.count) did not apply" }
            return ([summary] + failures.map { "  ✘ \($0)" }).joined(separator: "\n")
        }
    }

    /// One check: its name, which subjects it applies to, and what it does.
    public struct Check: Sendable {
        /// The subjects a check runs for, by ``Subject/isWritable``.
        public enum Applies: Sendable {
            /// Every subject.
            case all
            /// Writable subjects: the check changes things.
            case writable
            /// Read-only subjects: the check expects changes to be refused.
            case readOnly
        }
        /// What the report calls it (`"atomic write"`); ``run(_:only:)`` selects by it.
        public let name: String
        /// The subjects it runs for.
        public let applies: Applies
        let body: @Sendable (Context) async throws -> Void
    }

    /// Runs every check that applies to `subject` (or only those named in `only`), each on
    /// a fresh backend, and reports what passed, what failed and what did not apply.
    ///
    /// A check fails at the first broken promise, or when `make` or an operation the check
    /// relies on throws; the run itself never throws.
    public static func run(_ subject: Subject, only: Set<String>? = nil) async -> Report {
        var report = Report(subject: subject.name)
        for check in checks where only.map({ $0.contains(check.name) }) ?? true {
            switch check.applies {
            case .writable where !subject.isWritable, .readOnly where subject.isWritable: continue
            default: break
            }
            let scratch = makeScratchFolder()
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            do {
                let backend = try await subject.make(fixture, scratch)
                try await check.body(Context(backend: backend, mount: subject.mount))
                report.passed.append(check.name)
            } catch is NotApplicable {
                report.notApplicable.append(check.name)
            } catch let violation as Violation {
                report.failures.append(Failure(check: check.name, message: violation.message))
            } catch let error as CofferError {
                let subject = error.path.map { " about \($0)" } ?? ""
                report.failures.append(Failure(check: check.name, message: "an operation the check relies on failed: \(error.kind)\(subject)"))
            } catch {
                report.failures.append(Failure(check: check.name, message: "unexpected error: \(error)"))
            }
        }
        return report
    }

    private static func makeScratchFolder() -> String {
        var template = Array((NSTemporaryDirectory() + "/coffer-conformance-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { return NSTemporaryDirectory() }
        return String(cString: made)
    }

    // MARK: Checking

    /// A broken promise, found by a check.
    struct Violation: Error {
        var message: String
    }

    /// What a check works with.
    public struct Context: Sendable {
        /// The fresh backend, holding the fixture.
        public let backend: any StorageBackend
        /// The mount name of its paths.
        public let mount: String

        var root: VirtualPath { .root(of: mount) }

        /// A path in the subject's mount; `relative` uses `/` between names.
        func path(_ relative: String) -> VirtualPath {
            var path = root
            for name in relative.split(separator: "/") { path = path.appending(trustedName: String(name)) }
            return path
        }

        func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
            if !condition { throw Violation(message: message()) }
        }

        /// Runs `body`, which must throw a `CofferError` of one of `kinds` about `path`.
        func expectError(_ kinds: Set<CofferError.Kind>, about path: VirtualPath?, _ what: String,
                         _ body: () async throws -> Void) async throws {
            do {
                try await body()
            } catch let error as CofferError {
                try expect(kinds.contains(error.kind),
                           "\(what) threw \(error.kind), expected \(kinds.map { "\($0)" }.sorted().joined(separator: " or "))")
                if let path {
                    try expect(error.path == path, "\(what) threw an error about \(error.path.map { "\($0)" } ?? "no path"), not \(path)")
                }
                return
            } catch {
                throw Violation(message: "\(what) threw \(type(of: error)) (\(error)), not a CofferError")
            }
            throw Violation(message: "\(what) succeeded; expected \(kinds.map { "\($0)" }.sorted().joined(separator: " or "))")
        }

        /// A file's whole contents, read in chunks of `chunk` bytes.
        func contents(_ relative: String, chunk: Int = 65_536) async throws -> [UInt8] {
            try await contents(of: backend.openFile(at: path(relative)), named: relative, chunk: chunk)
        }

        /// The whole contents of `file`, read in chunks of `chunk` bytes; then it is closed.
        func contents(of file: any ReadableFile, named relative: String, chunk: Int = 65_536) async throws -> [UInt8] {
            var bytes: [UInt8] = []
            while true {
                let part = try await file.read(upTo: chunk)
                if part.isEmpty { break }
                try expect(part.count <= chunk, "read(upTo: \(chunk)) of \(relative) returned \(part.count) bytes")
                bytes += part
            }
            await file.close()
            return bytes
        }

        /// The names in a folder, as byte strings (so NFC and NFD differ).
        func names(_ relative: String = "") async throws -> [[UInt8]] {
            try await backend.contentsOfFolder(at: path(relative)).map { Array($0.name.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        }

        func fixtureNames(in folder: String) -> [[UInt8]] {
            BackendConformance.fixture.filter { item in
                let parent = item.components.dropLast().joined(separator: "/")
                return parent == folder
            }.map { Array($0.components.last!.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        }

        /// A fixture file's contents, found by the bytes of its name (Swift's `==` would take
        /// the NFC and NFD spellings for one another).
        func file(_ relative: String) -> [UInt8] {
            BackendConformance.fixture.first { $0.path.utf8.elementsEqual(relative.utf8) }!.contents!
        }
    }
}
