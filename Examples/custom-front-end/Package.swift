// swift-tools-version: 6.0
// Front ends of an application's own, built on Coffer as any package would be: through
// Coffer's library products, with no access to anything they do not make public.
import PackageDescription

let package = Package(
    name: "custom-front-end",
    platforms: [.macOS(.v14)],
    dependencies: [
        // Coffer two folders up. `name:` fixes the name the products are found under, whatever
        // the folder of the checkout is called.
        .package(name: "Coffer", path: "../.."),
    ],
    targets: [
        // What the `status` front end reports, made in a session: testable without a terminal.
        .target(
            name: "StatusReport",
            dependencies: [
                .product(name: "CofferCore", package: "Coffer"),
                .product(name: "FileService", package: "Coffer"),
            ]
        ),
        // `coffer`'s command line and front ends, plus `status`, a subcommand of the application's own.
        .executableTarget(
            name: "custom-front-end-example",
            dependencies: [
                "StatusReport",
                .product(name: "CofferApp", package: "Coffer"),
                .product(name: "CofferCore", package: "Coffer"),
                .product(name: "CofferInMemory", package: "Coffer"),
                .product(name: "FileService", package: "Coffer"),
            ]
        ),
        // The smallest composition, without `CofferApplication`: a container, a service, a session.
        .executableTarget(
            name: "compose-service",
            dependencies: [
                .product(name: "CofferBackends", package: "Coffer"),
                .product(name: "CofferCore", package: "Coffer"),
                .product(name: "FileService", package: "Coffer"),
            ]
        ),
        .testTarget(
            name: "StatusReportTests",
            dependencies: [
                "StatusReport", "custom-front-end-example",
                .product(name: "CofferApp", package: "Coffer"),
                .product(name: "CofferCore", package: "Coffer"),
                .product(name: "CofferInMemory", package: "Coffer"),
                .product(name: "FileService", package: "Coffer"),
            ]
        ),
    ]
)
