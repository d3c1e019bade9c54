// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Coffer",
    platforms: [.macOS(.v14)],
    // Products only for what an application links (Documentation/Versioning.md). The front ends'
    // modules, the runtime, the search index and the HTTP server are how Coffer is built: an
    // application reaches them through `CofferApp` and `FileService`, and they may change freely.
    products: [
        .library(name: "CofferCore", targets: ["CofferCore"]),
        .library(name: "CofferBackends", targets: ["CofferBackends"]),
        .library(name: "CofferInMemory", targets: ["CofferInMemory"]),
        .library(name: "CofferBackendConformance", targets: ["CofferBackendConformance"]),
        .library(name: "FileService", targets: ["FileService"]),
        .library(name: "CofferJSONRPC", targets: ["CofferJSONRPC"]),
        .library(name: "CofferS3", targets: ["CofferS3"]),
        .library(name: "CofferTransfers", targets: ["CofferTransfers"]),
        .library(name: "CofferPreview", targets: ["CofferPreview"]),
        .library(name: "CofferApp", targets: ["CofferApp"]),
        .executable(name: "coffer", targets: ["coffer"]),
        .executable(name: "coffer-document-types", targets: ["coffer-document-types"]),
        .plugin(name: "GenerateDocumentTypes", targets: ["GenerateDocumentTypes"]),
    ],
    targets: [
        // Thin C wrappers for the Linux syscalls the Glibc module does not export.
        .target(name: "CCofferSystem"),
        // SHA-256 and HMAC from libcrypto (libssl-dev's headers), loaded only when used.
        .target(name: "CCofferCrypto"),
        // HTTP from libcurl (libcurl4-openssl-dev's headers), loaded only when used.
        .target(name: "CCofferHTTP"),
        // XML from libxml2 (S3's answers), loaded only when used.
        .target(name: "CCofferXML"),
        // Images from libvips (libvips-dev), and GLib's URIs and checksums, each loaded when first used.
        .target(name: "CCofferVips"),
        // FUSE from libfuse 3's low-level API (libfuse3.so.3), loaded when `coffer mount` starts.
        .target(name: "CCofferFUSE"),
        // Archives' tables of contents from libarchive (libarchive-dev), loaded when first used.
        .target(name: "CCofferArchive"),
        // HTTP and WebSocket from CivetWeb (libcivetweb-dev), loaded when `coffer serve` starts.
        .target(name: "CCivetWeb"),
        // GNU readline, for the interactive REPL.
        .systemLibrary(name: "CReadline", providers: [.apt(["libreadline-dev"])]),
        // libmagic, for recognising files by their content.
        .systemLibrary(name: "CMagic", providers: [.apt(["libmagic-dev"])]),
        // SQLite, for the search index.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),

        // The model: paths, nodes, types, ordering, errors, the backend protocol. No I/O.
        .target(
            name: "CofferCore",
            resources: [.embedInCode("Types/types.json"), .embedInCode("Errors/messages.json")]
        ),
        // Running blocking calls off Swift's cooperative pool, and signals as Dispatch events:
        // shared by the backends, the search index and the front ends.
        .target(name: "CofferRuntime", dependencies: ["CofferCore", "CCofferCrypto", "CCofferSystem"]),
        // The desktop's own files, read and written in one place (issue 50): mimeapps.list and the
        // applications' entries, recently-used.xbel, GTK's bookmarks.
        .target(name: "CofferDesktop", dependencies: ["CofferCore", "CofferRuntime", "CCofferSystem"]),
        .target(name: "CofferBackends", dependencies: ["CofferCore", "CofferRuntime", "CCofferSystem", "CMagic"]),
        // A backend in memory: for tests, scratch space, and as a model of the contract.
        .target(name: "CofferInMemory", dependencies: ["CofferCore"]),
        // The checks any backend can run from its own tests.
        .target(name: "CofferBackendConformance", dependencies: ["CofferCore"]),
        // The search index (SQLite FTS5), kept current by the service and by watching.
        .target(name: "CofferSearch", dependencies: ["CofferCore", "CofferRuntime", "CSQLite"]),
        .target(name: "FileService", dependencies: ["CofferCore", "CofferRuntime", "CofferBackends", "CofferDesktop", "CofferSearch",
                                                   "CCofferSystem"]),
        .target(name: "CofferREPL", dependencies: ["CofferCore", "CofferRuntime", "FileService", "CofferTransfers", "CofferPreview", "CofferDesktop",
                                                  "CReadline"]),
        // HTTP through libcurl (loaded when first used), for everything that talks to a server.
        .target(name: "CofferHTTP", dependencies: ["CofferCore", "CofferRuntime", "CCofferHTTP"]),
        // Network transfers (issue 20): downloads into files:, uploads to servers.
        .target(name: "CofferTransfers",
                dependencies: ["CofferCore", "CofferHTTP", "CofferRuntime", "FileService", "CCofferSystem"]),
        // Previews and thumbnails (issue 21): facts by kind, the freedesktop thumbnail cache.
        .target(name: "CofferPreview",
                dependencies: ["CofferCore", "CofferRuntime", "FileService", "CCofferVips", "CCofferArchive", "CCofferSystem"]),
        // S3 object storage as a mount: Signature Version 4, configuration as the AWS tools read it.
        .target(name: "CofferS3", dependencies: ["CofferCore", "CofferRuntime", "CofferHTTP", "CCofferCrypto", "CCofferHTTP",
                                                "CCofferXML"]),
        // The JSON-RPC 2.0 machinery no front end owns: framing, transports, the connection and
        // its dialects, the method registry with Coffer's methods. RPC, MCP and web build on it.
        .target(name: "CofferJSONRPC", dependencies: ["CofferCore", "CofferRuntime", "FileService", "CofferDesktop", "CofferTransfers",
                                                     "CofferPreview", "CCofferSystem"]),
        // The JSON-RPC front end (`coffer rpc`): on standard I/O, or a Unix socket for many clients.
        .target(name: "CofferRPC", dependencies: ["CofferCore", "CofferJSONRPC", "FileService", "CofferTransfers"]),
        // Coffer's one HTTP server (issue 49): CivetWeb started and stopped, requests and answers,
        // bodies read within bounds, the status of every error kind. Every HTTP front end is a set
        // of routes on it; nothing else imports the CivetWeb shim.
        .target(name: "CofferHTTPServer", dependencies: ["CofferCore", "CofferRuntime", "CCivetWeb"]),
        // The Model Context Protocol front end (`coffer mcp`): a dialect and methods over CofferJSONRPC's connection.
        .target(name: "CofferMCP", dependencies: ["CofferCore", "CofferJSONRPC", "FileService", "CofferTransfers", "CofferPreview",
                                                "CofferRuntime", "CofferHTTPServer"],
                resources: [.embedInCode("tools.json")]),
        // The web front end (`coffer serve`, issue 22): the page, files over HTTP, JSON-RPC over a WebSocket.
        .target(name: "CofferWeb",
                dependencies: ["CofferCore", "CofferJSONRPC", "CofferRuntime", "FileService", "CofferPreview", "CofferHTTPServer",
                               "CCofferArchive", "CCofferXML"],
                resources: ["index.html", "app.css", "app.js", "bridge.js", "changes.js", "common.js", "dialogs.js", "preview.js", "uploads.js", "words.js"]
                    .map { .embedInCode("Page/\($0)") }),
        // The mount front end (`coffer mount`, issue 54): the file space as a FUSE file system.
        .target(name: "CofferMount", dependencies: ["CofferCore", "CofferRuntime", "FileService", "CCofferFUSE"]),
        // `coffer`'s command line and front ends, for any application that adds its own mounts.
        .target(
            name: "CofferApp",
            dependencies: ["CofferREPL", "CofferRPC", "CofferJSONRPC", "CofferMCP", "CofferWeb", "CofferMount", "CofferS3", "CofferTransfers", "CofferPreview", "FileService", "CofferBackends", "CofferDesktop", "CofferCore", "CofferRuntime",
                           "CCofferSystem", "DocumentTypesGenerator"],
            // The package's own manifest (a link to DocumentTypes.json at the root).
            resources: [.embedInCode("DocumentTypes.json")]
        ),
        .executableTarget(name: "coffer", dependencies: ["CofferApp"]),

        // Document types: Info.plist entries from DocumentTypes.json. The plugin is a thin
        // shell; the logic is in the library, which the executable runs and tests import.
        .target(name: "DocumentTypesGenerator", dependencies: ["CofferCore"]),
        .executableTarget(name: "coffer-document-types", dependencies: ["DocumentTypesGenerator", "CofferCore"]),
        .plugin(
            name: "GenerateDocumentTypes",
            capability: .command(
                intent: .custom(verb: "generate-document-types",
                                description: "Write Info.plist document-type entries from DocumentTypes.json"),
                permissions: [.writeToPackageDirectory(reason: "Writes the Info.plist it generates")]
            ),
            dependencies: ["coffer-document-types"]
        ),

        .executableTarget(
            name: "coffer-sort-bench",
            dependencies: ["CofferCore"],
            path: "Benchmarks/SortBench"
        ),

        .target(name: "CofferTestSupport", dependencies: ["CofferCore", "CofferRuntime", "CCofferSystem"], path: "Tests/CofferTestSupport", exclude: ["Servers", "Media"]),
        .testTarget(name: "CofferCoreTests", dependencies: ["CofferCore", "CofferTestSupport"]),
        // The test harness itself: processes it starts are owned, ended and reaped; every wait ends.
        .testTarget(name: "HarnessTests", dependencies: ["CofferTestSupport", "CofferRuntime", "CofferCore"]),
        .testTarget(
            name: "DocumentTypesTests",
            dependencies: ["DocumentTypesGenerator", "CofferCore", "CofferTestSupport", "coffer-document-types"]
        ),
        .testTarget(
            name: "CofferBackendsTests",
            dependencies: ["CofferBackends", "CofferCore", "CofferRuntime", "CofferTestSupport", "CCofferSystem"]
        ),
        .testTarget(
            name: "FileServiceTests",
            dependencies: ["FileService", "CofferBackends", "CofferCore", "CofferRuntime", "CofferSearch", "CofferTestSupport"]
        ),
        // The application layer: mount and front-end registration, an application's own front end.
        .testTarget(name: "CofferMountTests", dependencies: ["CofferMount", "CofferCore"]),
        .testTarget(name: "CofferAppTests", dependencies: ["CofferApp", "CofferCore", "CofferInMemory", "FileService"]),
        .testTarget(
            name: "BackendConformanceTests",
            dependencies: ["CofferBackendConformance", "CofferInMemory", "CofferBackends", "CofferCore"]
        ),
        .testTarget(name: "CofferJSONRPCTests", dependencies: ["CofferJSONRPC", "FileService", "CofferCore", "CofferTestSupport"]),
        .testTarget(name: "CofferTransfersTests",
                    dependencies: ["CofferTransfers", "CofferCore", "CofferTestSupport", "CCofferSystem", "FileService",
                                   "CofferBackends"]),
        .testTarget(name: "CofferMCPTests", dependencies: ["CofferMCP", "CofferJSONRPC", "CofferCore", "CofferTestSupport"]),
        .testTarget(name: "CofferS3Tests",
                    dependencies: ["CofferS3", "CofferHTTP", "CofferCore", "CofferRuntime", "CofferTestSupport", "CofferBackendConformance",
                                   "FileService"]),
        .testTarget(name: "CofferPreviewTests",
                    dependencies: ["CofferPreview", "CofferCore", "CofferInMemory", "CofferBackends", "FileService",
                                   "CofferTestSupport"]),
        .testTarget(name: "CofferHTTPServerTests", dependencies: ["CofferHTTPServer", "CofferCore", "CofferRuntime", "CofferTestSupport"]),
        .testTarget(name: "CofferWebTests", dependencies: ["CofferWeb", "CofferHTTPServer", "CofferCore", "CofferRuntime", "FileService",
                                                          "CofferTestSupport"]),
        .testTarget(name: "CofferREPLTests", dependencies: ["CofferREPL", "CofferCore", "CofferRuntime", "CofferTestSupport"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["coffer", "CofferTestSupport", "CofferS3", "CofferHTTP", "FileService", "CofferDesktop"],
            exclude: ["Scripts"]
        ),
    ]
)

// The same language settings for every Swift target.
for target in package.targets where ![.system, .plugin].contains(target.type) && !["CCofferSystem", "CCofferCrypto", "CCofferHTTP", "CCofferXML", "CCofferVips", "CCofferFUSE", "CCofferArchive", "CCivetWeb"].contains(target.name) {
    var settings = target.swiftSettings ?? []
    settings.append(.swiftLanguageMode(.v6))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
