/// A backend under a name: `files`, `trash`, `staging`, or an application's own.
public struct Mount: Sendable {
    /// The name paths begin with (`files` in `files:/Notes`).
    public var name: String
    /// The backend itself: for the service's engine (`@_spi(Engine) import CofferCore`), not for
    /// front ends, which reach a mount's items by performing operations in a session.
    @_spi(Engine) public var backend: any StorageBackend
    /// Whether `FileService` accepts changes here (also requires a writable backend).
    public var isWritable: Bool
    /// Whether front ends list it in `mounts` and offer it in completion.
    public var isVisible: Bool
    /// What it holds, in words for people (RPC `initialize` shows it); `nil`: the name says it.
    public var description: LocalizedText?

    /// A mount of `backend` under `name`. It is writable only when `isWritable` and the
    /// backend claims ``BackendCapabilities/writable``.
    public init(name: String, backend: any StorageBackend, isWritable: Bool = true, isVisible: Bool = true,
                description: LocalizedText? = nil) {
        self.name = name
        self.backend = backend
        self.isWritable = isWritable && backend.capabilities.contains(.writable)
        self.isVisible = isVisible
        self.description = description
    }
}
