// swift-tools-version: 6.0
// An application with a storage backend of its own, built on Coffer as any package would be:
// through Coffer's library products, with no access to anything they do not make public.
import PackageDescription

/// Products of Coffer, by name.
func coffer(_ products: String...) -> [Target.Dependency] {
    products.map { .product(name: $0, package: "Coffer") }
}

let package = Package(
    name: "custom-backend",
    platforms: [.macOS(.v14)],
    dependencies: [
        // Coffer two folders up. `name:` fixes the name the products are found under, whatever
        // the folder of the checkout is called. An application elsewhere writes its own path, or
        // `.package(url: "…/coffer.git", revision: "…")` until versions are tagged.
        .package(name: "Coffer", path: "../.."),
    ],
    targets: [
        // The backend: `mem:`, files kept in memory up to a quota.
        .target(name: "QuotaMemory", dependencies: coffer("CofferCore", "CofferInMemory")),
        // The application: `coffer`'s front ends over the standard mounts plus `mem:`.
        .executableTarget(name: "custom-backend-example",
                          dependencies: ["QuotaMemory"] + coffer("CofferApp", "CofferCore", "CofferJSONRPC", "FileService")),
        // The backend keeps Coffer's contract (the conformance suite) and its own rule.
        .testTarget(name: "QuotaMemoryTests",
                    dependencies: ["QuotaMemory"] + coffer("CofferBackendConformance", "CofferCore")),
    ]
)
