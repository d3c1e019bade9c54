public import CofferCore
public import FileService

/// Downloads whose process stopped while they ran (killed, or the machine went down), resumed
/// when an interactive session or `coffer rpc` starts: in a session of their own, in the
/// background, at most `limit` at once. One that another process is downloading is left to it.
public enum TransferQueue {
    /// What was interrupted: records still `running` or `queued`.
    public static func interrupted(in service: FileService) -> [DownloadRecord] {
        let store = try? TransferStore(of: service)
        return store?.unfinished().filter { $0.state == .running || $0.state == .queued } ?? []
    }

    /// Resumes them; the task's value is how many were completed.
    @discardableResult
    public static func resumeInterrupted(in service: FileService, language: Language, limit: Int = 3) -> Task<Int, Never>? {
        let waiting = interrupted(in: service)
        guard !waiting.isEmpty,
              let session = try? service.openSession(SessionOptions(frontEnd: "transfers", language: language, isLongLived: true))
        else { return nil }
        return Task {
            var completed = 0
            await withTaskGroup(of: Bool.self) { group in
                var next = waiting.makeIterator()
                func start() -> Bool {
                    guard let record = next.next() else { return false }
                    group.addTask { (try? await session.perform(DownloadFile(record.url, resuming: record.id))) != nil }
                    return true
                }
                for _ in 0..<limit {
                    if !start() { break }
                }
                for await done in group {
                    if done { completed += 1 }
                    _ = start()
                }
            }
            await session.close()
            return completed
        }
    }
}
