// `status`: a front end of the application's own, a subcommand beside `coffer`'s (`rpc`,
// `mcp`, `serve`, the REPL) with options of its own, opening a session on the same service.
import CofferApp
import CofferCore
import StatusReport

/// `custom-front-end-example status [--json]`: how full each mount is, and the trash.
public struct Status: CofferFrontEnd {
    public static let command = "status"
    public static let summary = LocalizedText("Say how full each mount is, and what the trash holds (--json for programs)",
                                              "显示各挂载点的用量和废纸篓中的项目（--json：给程序读）")

    public static let usage: LocalizedText? = LocalizedText(
        "[--json]\n  --json  one line of JSON, for programs, instead of lines for a person",
        "[--json]\n  --json  输出一行 JSON 给程序读，而不是给人看的几行")

    /// `--json`: one line of JSON instead of lines for a person.
    public var json = false

    /// Reads `--json`; anything else is refused, and the program exits with status 2.
    public init(arguments: [String]) throws(CofferError) {
        for argument in arguments {
            switch argument {
            case "--json": json = true
            default: throw CofferError(.invalidArgument, detail: "unexpected argument “\(argument)”; status takes only --json")
            }
        }
    }

    public func run(_ context: FrontEndContext) async -> Int32 {
        await context.withSession { session in
            let report = try await StatusReport.make(in: session)
            if json {
                context.output(report.json())
            } else {
                report.lines(in: context.language).forEach(context.output)
            }
        }
    }
}
