import CofferCore
import CofferJSONRPC
import CofferMount
import CofferRuntime
import FileService
import Foundation

/// `coffer mount DIR [--mount NAME | --all] [--cache-timeout SECONDS] [--timeout SECONDS] [--scratch PATTERN]…`: the
/// file space as a folder of this machine, in the foreground until SIGINT or SIGTERM, which
/// unmount it (so does `fusermount3 -u DIR` from outside).
struct MountLaunch: FrontEndLaunch {
    /// Caught before anything is mounted.
    private let stops = StopSignals()

    mutating func prepare(_ context: LaunchContext) -> Int32? {
        guard context.options.mountDirectory != nil else {
            context.errors.line(LocalizedText("\(context.application.name) mount: name the folder to mount on: \(context.application.name) mount DIR",
                                              "\(context.application.name) mount：请指定挂载到的文件夹：\(context.application.name) mount 目录")(context.language))
            context.errors.flush()
            return 2
        }
        return nil
    }

    /// Runs `body` in a task of its own and waits for it, or for `limit`, whichever ends first.
    private static func waiting(atMost limit: Duration, _ body: @escaping @Sendable () async -> Void) async {
        let (ended, signal) = AsyncStream<Void>.makeStream()
        let work = Task.detached {
            await body()
            signal.yield()
        }
        let timer = Task.detached {
            try? await Task.sleep(for: limit)
            signal.yield()
        }
        for await _ in ended { break }
        timer.cancel()
        _ = work
    }

    @MainActor
    func run(_ context: LaunchContext, service: FileService, container: Container) async -> Int32 {
        let directory = context.options.mountDirectory!
        let options = context.options.mountOptions
        let mount: FileMount
        do {
            mount = try FileMount(service: service, at: directory, options: options)
        } catch {
            return context.stopping(with: "mount \(directory): \(error.userMessage(in: context.language))", status: 1)
        }
        let shown = options.allMounts ? LocalizedText("Coffer's mounts are", "Coffer 的所有挂载点已")
            : LocalizedText("Coffer's \(options.mount): is", "Coffer 的 \(options.mount): 已")
        context.output.line(LocalizedText(
            "\(shown.english) mounted at \(directory) (Ctrl-C, or fusermount3 -u \(directory), unmounts it)",
            "\(shown.chinese)挂载到 \(directory)（按 Ctrl-C 或运行 fusermount3 -u \(directory) 卸载）")(context.language))
        context.output.flush()
        let stops = stops
        let watcher = Task.detached {
            await stops.wait()
            mount.stop()
        }
        let serving = Task { await withCheckedContinuation { (done: CheckedContinuation<Int32, Never>) in
            let thread = Thread { done.resume(returning: mount.serve()) }
            thread.name = "coffer-mount"
            thread.start()
        } }
        // What a killed mount left unsent goes out now, while the mount is already served.
        for result in await mount.finishPendingSaves() {
            switch result {
            case .success(let node):
                context.output.line(LocalizedText("sent \(node.path), left unsent by an earlier mount",
                                                  "已上传上次挂载未上传的 \(node.path)")(context.language))
            case .failure(let error):
                let message = error.userMessage(in: context.language)
                context.errors.line(LocalizedText("not sent yet (tried again at the next mount): \(message)",
                                                  "尚未上传（下次挂载时重试）：\(message)")(context.language))
            }
        }
        context.output.flush()
        context.errors.flush()
        let status = await serving.value
        watcher.cancel()
        stops.disarm()
        // The session ends once its work has; work stuck on a store that stopped answering (its
        // callers long given EIO) is not waited for past a few seconds: the process ends anyway.
        await Self.waiting(atMost: .seconds(5)) { await mount.close() }
        if status != 0 {
            return context.stopping(with: "mount \(directory): reading from the kernel failed (errno \(status))", status: 1)
        }
        return 0
    }
}
