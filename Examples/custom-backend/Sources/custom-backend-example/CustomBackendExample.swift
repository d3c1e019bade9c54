// A storage backend of your own, mounted beside Coffer's standard mounts and driven by the
// normal front ends. Run from this folder:
//
//     swift run custom-backend-example                               # the REPL; try `mounts`, `ls mem:/`
//     swift run custom-backend-example -c 'cp -r Download mem:/; ls mem:/'
//     echo 'mounts' | swift run custom-backend-example               # piped commands
//     swift run custom-backend-example rpc                           # JSON-RPC 2.0 on stdin/stdout,
//                                                                    # with a method of its own: mem/usage
//
// It takes exactly `coffer`'s arguments (`--container`, `--lang`, `-c`, `rpc`, …); its default
// container is ~/.local/share/custom-backend-example. `mem:` lives as long as the process:
// each `-c` run starts with it empty. COFFER_MEM_QUOTA sets its size in bytes (1 MiB by default).
import CofferApp
import CofferCore
import CofferJSONRPC
import FileService
import Foundation
import QuotaMemory

/// `mem/usage`: how much of its quota `mem:` holds — a JSON-RPC method of the application's
/// own, answered by `custom-backend-example rpc` beside Coffer's methods.
///
/// A method is a type: its name on the wire, its params and its result (both `Codable`), and
/// what it does with the request's context. Like Coffer's own methods, it performs an operation
/// in the context's session (`MeasureSpace` here, `CopyItem` for a copy): the session decides
/// what the request means and audits what changes files.
struct MemoryUsage: RPCMethod {
    static let name = "mem/usage"

    struct Result: Encodable, Sendable { var usedBytes, quota, freeBytes: Int64 }

    static func run(_ params: NoParams, _ context: RequestContext) async throws -> Result {
        // Through the session, as every front end reads a mount: the backend answers because
        // it adopts `SpaceReportingBackend`; one that does not fails with `unsupported`.
        let space = try await context.perform(MeasureSpace(mount: "mem"))
        return Result(usedBytes: space.usedBytes, quota: space.totalBytes ?? 0, freeBytes: space.availableBytes ?? 0)
    }
}

/// The application: `coffer`'s front ends over the standard mounts plus `mem:`, and one
/// JSON-RPC method of its own.
@main
struct CustomBackendExample {
    static func main() async {
        let quota = ProcessInfo.processInfo.environment["COFFER_MEM_QUOTA"].flatMap(Int64.init) ?? 1 << 20
        // The one place mounts are registered: `files:`, `trash:` and `staging:` come with
        // the container; this closure adds the application's own. Its methods are added
        // beside it, the same way.
        let application = CofferApplication(name: "custom-backend-example", extraMethods: [MemoryUsage.self]) { _, _ in
            [Mount(name: "mem", backend: QuotaMemoryBackend(quota: quota),
                   description: LocalizedText("Kept in memory, up to \(quota) bytes, until the program ends",
                                              "保存在内存中，最多 \(quota) 字节，程序结束即清空"))]
        }
        await application.main()
    }
}
