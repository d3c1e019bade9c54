import Foundation
import PackagePlugin

/// `swift package --allow-writing-to-package-directory generate-document-types
///   [--manifest PATH] [--output PATH] [--desktop-folder DIR] [--check]`
///
/// A thin shell over the `coffer-document-types` executable, which holds the logic (and
/// its tests): this only resolves paths against the package root and runs it.
@main
struct GenerateDocumentTypes: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var extractor = ArgumentExtractor(arguments)
        let manifest = extractor.extractOption(named: "manifest").last ?? "DocumentTypes.json"
        let output = extractor.extractOption(named: "output").last ?? "Info.plist"
        let desktopFolder = extractor.extractOption(named: "desktop-folder").last
        let check = extractor.extractFlag(named: "check") > 0
        guard extractor.remainingArguments.isEmpty else {
            Diagnostics.error("unexpected arguments: \(extractor.remainingArguments.joined(separator: " "))")
            throw PluginFailure()
        }
        let root = context.package.directoryURL
        func resolve(_ path: String) -> String {
            path.hasPrefix("/") ? path : root.appending(path: path).path
        }
        let tool = try context.tool(named: "coffer-document-types")
        let process = Process()
        process.executableURL = tool.url
        process.arguments = ["--manifest", resolve(manifest), "--output", resolve(output)]
            + (desktopFolder.map { ["--desktop-folder", resolve($0)] } ?? []) + (check ? ["--check"] : [])
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw PluginFailure() }
    }
}

/// The tool has already said what went wrong; this only makes the command fail.
struct PluginFailure: Error, CustomStringConvertible {
    var description: String { "generate-document-types failed" }
}
