// swift-tools-version: 6.0
// Front ends of an application's own, built on Coffer as any package would be: through
// Coffer's library products, with no access to anything they do not make public.
import PackageDescription

/// Products of Coffer, by name.
func coffer(_ products: String...) -> [Target.Dependency] {
    products.map { .product(name: $0, package: "Coffer") }
}

let package = Package(
    name: "custom-front-end",
    platforms: [.macOS(.v14)],
    dependencies: [
        // Coffer two folders up; `name:` fixes the name its products are found under.
        .package(name: "Coffer", path: "../.."),
    ],
    targets: [
        // What the `status` front end reports, made in a session: testable without a terminal.
        .target(name: "StatusReport", dependencies: coffer("CofferCore", "FileService")),
        // `coffer`'s command line and front ends, plus `status`, a subcommand of the application's own.
        .executableTarget(name: "custom-front-end-example",
                          dependencies: ["StatusReport"] + coffer("CofferApp", "CofferCore", "CofferInMemory", "FileService")),
        // The smallest composition, without `CofferApplication`: a container, a service, a session.
        .executableTarget(name: "compose-service", dependencies: coffer("CofferBackends", "CofferCore", "FileService")),
        .testTarget(name: "StatusReportTests",
                    dependencies: ["StatusReport", "custom-front-end-example"]
                        + coffer("CofferApp", "CofferCore", "CofferInMemory", "FileService")),
    ]
)
