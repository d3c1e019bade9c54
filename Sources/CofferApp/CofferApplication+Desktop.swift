import CofferCore
import CofferREPL
import FileService
import Foundation

/// The Linux desktop's side of the application: files handed in by a file manager, and the
/// desktop entry and MIME package that make the desktop hand them in.
extension CofferApplication {
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
