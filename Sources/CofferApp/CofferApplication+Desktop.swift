import CofferCore
import CofferREPL
import FileService
import Foundation

/// The Linux desktop's side of the application: files handed in by a file manager, and the
/// desktop entry and MIME package that make the desktop hand them in.
extension CofferApplication {
    /// `open-files PATH…`: each file opened in place or imported, as the manifest's document
    /// types say (``ReceiveFiles``); one line each on standard output, failures on standard
    /// error, status 1 if any failed.
    @MainActor
    func openFiles(_ paths: [String], service: FileService, manifest: DocumentTypesManifest, options: LaunchOptions,
                   output: TextOutput, errors: TextOutput) async -> Int32 {
        let session: Session
        do {
            // What a person chose in a file manager: any path their account can read.
            session = try service.openSession(SessionOptions(frontEnd: "open-files", language: options.language,
                                                             hostAccess: .anywhere))
        } catch {
            return stopping(with: "\(error.userMessage(in: options.language))", status: 1, errors)
        }
        let language = options.language
        var failed = false
        do throws(CofferError) {
            for item in try await session.perform(ReceiveFiles(paths, manifest: manifest)) {
                switch item.outcome {
                case .success(.imported(let node)):
                    output.line("\(item.hostPath) → \(node.path)")
                case .success(.openedInPlace(let opened)):
                    output.line(LocalizedText("\(item.hostPath) → opened in place as bookmark \(opened.bookmark.id)",
                                              "\(item.hostPath) → 已原位打开，书签 \(opened.bookmark.id)")(language))
                case .failure(let error):
                    errors.line("\(name): \(item.hostPath): \(error.userMessage(in: language, hints: .repl))")
                    failed = true
                }
            }
        } catch {
            errors.line("\(name): \(error.userMessage(in: language, hints: .repl))")
            failed = true
        }
        output.flush()
        errors.flush()
        await session.close()
        return failed ? 1 : 0
    }

    /// The installer for this program: the entry it installs runs this very executable's
    /// `open-files`, with the container and manifest it was given.
    func desktopInstaller(_ options: LaunchOptions, manifest: DocumentTypesManifest, registry: TypeRegistry) -> DesktopInstaller {
        let executable = Bundle.main.executablePath.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
            ?? CommandLine.arguments[0]
        var command = [executable]
        if options.containerGiven { command += ["--container", Self.absolute(options.containerPath)] }
        if let documentTypes = options.documentTypesPath { command += ["--document-types", Self.absolute(documentTypes)] }
        return DesktopInstaller(program: name, manifest: manifest, registry: registry, command: command + ["open-files"],
                                environment: ProcessInfo.processInfo.environment, language: options.language)
    }

    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}
