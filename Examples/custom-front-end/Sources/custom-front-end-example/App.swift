// An application with a front end of its own. Run from this folder:
//
//     swift run custom-front-end-example status            # how full each mount is
//     swift run custom-front-end-example status --json     # the same for programs
//     swift run custom-front-end-example --help            # `status` listed after coffer's commands
//     swift run custom-front-end-example -c 'mounts'       # every front end of coffer's is still here
//
// Its default container is ~/.local/share/custom-front-end-example; `--container DIR` chooses
// another, before or after `status`.
import CofferApp
import CofferCore
import CofferInMemory

@main
struct CustomFrontEndExample {
    static func main() async {
        // `scratch:` shows that a front end sees the application's mounts like the standard ones;
        // `InMemoryBackend` reports its space, so `status` shows it.
        let application = CofferApplication(name: "custom-front-end-example", frontEnds: [Status.self]) { _, _ in
            [Mount(name: "scratch", backend: InMemoryBackend(),
                   description: LocalizedText("Kept in memory until the program ends", "保存在内存中，程序结束即清空"))]
        }
        await application.main()
    }
}
