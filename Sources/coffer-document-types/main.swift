import CofferCore
import DocumentTypesGenerator
import Foundation

// coffer-document-types: the logic behind the `generate-document-types` command plugin.
//
//   coffer-document-types --manifest PATH --output PATH [--check]
//
// Exit status: 0 written (or up to date with --check); 1 out of date (--check);
// 2 bad arguments, unreadable manifest, invalid manifest or unreadable output. Nothing is
// written unless the manifest is valid and the result differs from the file.

func fail(_ message: String, status: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("generate-document-types: \(message)\n".utf8))
    exit(status)
}

var manifestPath: String?
var outputPath: String?
var check = false
var arguments = CommandLine.arguments.dropFirst()[...]
while let argument = arguments.popFirst() {
    switch argument {
    case "--manifest":
        guard let value = arguments.popFirst() else { fail("--manifest needs a path") }
        manifestPath = value
    case "--output":
        guard let value = arguments.popFirst() else { fail("--output needs a path") }
        outputPath = value
    case "--check": check = true
    case "-h", "--help":
        print("usage: coffer-document-types --manifest PATH --output PATH [--check]")
        exit(0)
    default: fail("unexpected argument “\(argument)”")
    }
}
guard let manifestPath, let outputPath else { fail("usage: coffer-document-types --manifest PATH --output PATH [--check]") }

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
let existing = FileManager.default.contents(atPath: outputPath)

do {
    if check {
        let differences = try InfoPlistGenerator.differences(manifest, existing: existing)
        guard differences.isEmpty else {
            fail("\(outputPath) is out of date with \(manifestPath):\n  " + differences.joined(separator: "\n  ")
                 + "\nRun: swift package --allow-writing-to-package-directory generate-document-types", status: 1)
        }
        print("\(outputPath) is up to date.")
    } else {
        let data = try InfoPlistGenerator.render(manifest, existing: existing)
        if data == existing {
            print("\(outputPath) is up to date.")
        } else {
            do {
                try data.write(to: URL(fileURLWithPath: outputPath), options: .atomic)
            } catch {
                fail("cannot write \(outputPath): \(error.localizedDescription)")
            }
            print("Wrote \(outputPath).")
        }
    }
} catch .invalidManifest(let errors) {
    fail("\(manifestPath) breaks \(errors.count == 1 ? "a rule" : "\(errors.count) rules"); nothing was written:\n  "
         + errors.joined(separator: "\n  "))
} catch .unreadableOutput(let reason) {
    fail("\(outputPath): \(reason); nothing was written")
}
