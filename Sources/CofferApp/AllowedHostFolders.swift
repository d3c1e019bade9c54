import CofferBackends
import CofferCore

/// `--allow-host DIR`: programs may use only the folders allowed at start, each of which
/// must be a folder (a bad one is a bad argument).
enum AllowedHostFolders {
    static func check(_ context: LaunchContext) -> Int32? {
        for folder in context.options.allowedHostFolders {
            do { _ = try HostAccessPolicy.only([folder]) } catch {
                return context.stopping(with: "--allow-host “\(folder)”: \(error.userMessage(in: context.language))", status: 2)
            }
        }
        return nil
    }
}
