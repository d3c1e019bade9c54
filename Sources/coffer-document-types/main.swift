import CofferCore
import DocumentTypesGenerator
import Foundation

// coffer-document-types: the logic behind the `generate-document-types` command plugin.
//
//   coffer-document-types --manifest PATH --output PATH [--desktop-folder DIR] [--check]
//
// Writes the Info.plist entries into --output and, when the manifest describes an
// application, its desktop entry and shared-mime-info package into --desktop-folder
// (default: a `Desktop` folder beside --output).
//
// Exit status: 0 written (or up to date with --check); 1 out of date (--check);
// 2 bad arguments, unreadable manifest, invalid manifest or unreadable output. Nothing is
// written unless the manifest is valid, and a file only when its content differs.

func fail(_ message: String, status: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("generate-document-types: \(message)\n".utf8))
    exit(status)
}

let usage = "usage: coffer-document-types --manifest PATH --output PATH [--desktop-folder DIR] [--check]"
var manifestPath: String?
var outputPath: String?
var desktopFolder: String?
var check = false
var arguments = CommandLine.arguments.dropFirst()[...]
while let argument = arguments.popFirst() {
    switch argument {
    case "--manifest", "--output", "--desktop-folder":
        guard let value = arguments.popFirst() else { fail("\(argument) needs a path") }
        switch argument {
        case "--manifest": manifestPath = value
        case "--output": outputPath = value
        default: desktopFolder = value
        }
    case "--check": check = true
    case "-h", "--help":
        print(usage)
        exit(0)
    default: fail("unexpected argument “\(argument)”")
    }
}
guard let manifestPath, let outputPath else { fail(usage) }
let outputFolder = (outputPath as NSString).deletingLastPathComponent
let desktopPath = desktopFolder ?? (outputFolder.isEmpty ? "Desktop" : outputFolder + "/Desktop")

guard let manifestData = FileManager.default.contents(atPath: manifestPath) else {
    fail("cannot read the manifest \(manifestPath)")
}
let manifest: DocumentTypesManifest
do {
    manifest = try DocumentTypesManifest(jsonData: manifestData)
} catch {
    fail("\(manifestPath) is not a valid manifest: \(error.userMessage(in: .english).text) (\(error.detail ?? ""))")
}
for warning in manifest.validate().warnings {
    FileHandle.standardError.write(Data("generate-document-types: warning: \(warning)\n".utf8))
}

/// Every file this run is responsible for, with what it should hold.
func outputs() throws(GenerationFailure) -> [(path: String, data: Data)] {
    let plist = try InfoPlistGenerator.render(manifest, existing: FileManager.default.contents(atPath: outputPath))
    let desktop = try DesktopFiles.make(for: manifest)?.all ?? []
    return [(outputPath, plist)] + desktop.map { (desktopPath + "/" + $0.name, $0.data) }
}

do {
    let files = try outputs()
    if check {
        var stale = try InfoPlistGenerator.differences(manifest, existing: FileManager.default.contents(atPath: outputPath))
            .map { "\(outputPath): \($0)" }
        for (path, data) in files.dropFirst() where FileManager.default.contents(atPath: path) != data {
            stale.append(FileManager.default.fileExists(atPath: path) ? "\(path) is out of date" : "\(path) does not exist")
        }
        guard stale.isEmpty else {
            fail("out of date with \(manifestPath):\n  " + stale.joined(separator: "\n  ")
                 + "\nRun: swift package --allow-writing-to-package-directory generate-document-types", status: 1)
        }
        for (path, _) in files { print("\(path) is up to date.") }
    } else {
        for (path, data) in files {
            if FileManager.default.contents(atPath: path) == data {
                print("\(path) is up to date.")
                continue
            }
            do {
                let folder = (path as NSString).deletingLastPathComponent
                if !folder.isEmpty { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
                try data.write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                fail("cannot write \(path): \(error.localizedDescription)")
            }
            print("Wrote \(path).")
        }
    }
} catch .invalidManifest(let errors) {
    fail("\(manifestPath) breaks \(errors.count == 1 ? "a rule" : "\(errors.count) rules"); nothing was written:\n  "
         + errors.joined(separator: "\n  "))
} catch .unreadableOutput(let reason) {
    fail("\(outputPath): \(reason); nothing was written")
}
