public import CofferCore
import Dispatch
public import FileService
import Foundation
import Synchronization

/// Completion names from a session (sandbox paths and mounts) and from the host's file
/// system (host paths).
///
/// Completion runs on the line editor's thread, which is not part of Swift's cooperative
/// pool, so it may wait for the service: at most `timeout`, after which it offers nothing
/// rather than hold up the prompt.
public struct ServiceCompletionSource: CompletionSource, Sendable {
    public let session: Session
    public var timeout: Duration

    public init(session: Session, timeout: Duration = .seconds(2)) {
        self.session = session
        self.timeout = timeout
    }

    public var mountNames: [String] { session.service.mounts.filter(\.isVisible).map(\.name) }

    public var homeDirectory: String? {
        ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
    }

    public func sandboxEntries(in folder: VirtualPath, includeHidden: Bool) -> [CompletionEntry] {
        waiting { [session] in
            let page = try? await session.perform(ListFolder(folder, options: ListOptions(includeHidden: includeHidden)))
            return page?.items.map { CompletionEntry(name: $0.name, isFolder: $0.kind != .file) } ?? []
        }
    }

    public var favouriteFolders: [String] {
        waiting { [session] in
            let favourites = (try? await session.perform(ListFavourites())) ?? []
            return favourites.filter { !$0.favourite.isHost && $0.isFolder == true }
                .map { CompletionEntry(name: $0.favourite.location, isFolder: true) }
        }.map(\.name)
    }

    /// What `work` finds, waited for at most `timeout` (nothing after it).
    private func waiting(_ work: @escaping @Sendable () async -> [CompletionEntry]) -> [CompletionEntry] {
        let result = ResultBox()
        let done = DispatchSemaphore(value: 0)
        let task = Task {
            result.set(await work())
            done.signal()
        }
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        guard done.wait(timeout: .now() + seconds) == .success else {
            task.cancel()
            return []
        }
        return result.value
    }

    public func hostEntries(inDirectory path: String) -> [CompletionEntry] {
        HostFolder.entries(atPath: path).map { CompletionEntry(name: $0.name, isFolder: $0.isFolder) }
    }

    private final class ResultBox: Sendable {
        private let entries = Mutex<[CompletionEntry]>([])
        func set(_ value: [CompletionEntry]) { entries.withLock { $0 = value } }
        var value: [CompletionEntry] { entries.withLock { $0 } }
    }
}
