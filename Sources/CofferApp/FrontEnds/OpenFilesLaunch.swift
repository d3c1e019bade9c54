import CofferCore
import CofferREPL
import CofferRuntime
import FileService
import Foundation

/// `open-files PATH…`: what a file manager runs for the files a person handed to Coffer.
struct OpenFilesLaunch: FrontEndLaunch {
    let paths: [String]

    /// `open-files PATH…`: each file opened in place or imported, as the manifest's document
    /// types say (``ReceiveFiles``); one line each on standard output, failures on standard
    /// error, status 1 if any failed.
    @MainActor
    func run(_ context: LaunchContext, service: FileService, container: Container) async -> Int32 {
        let (options, output, errors, name) = (context.options, context.output, context.errors, context.application.name)
        let session: Session
        do {
            // What a person chose in a file manager: any path their account can read.
            session = try service.openSession(SessionOptions(frontEnd: "open-files", language: options.language,
                                                             hostAccess: .anywhere))
        } catch {
            return context.stopping(with: "\(error.userMessage(in: options.language))", status: 1)
        }
        let language = options.language
        var failed = false
        do throws(CofferError) {
            for item in try await session.perform(ReceiveFiles(paths, manifest: context.manifest)) {
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
}
