public import CofferCore
public import Synchronization

/// Polls until `condition` holds, for up to ten seconds; whether it came to hold.
public func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<1000 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// The destinations a conflict question was asked about.
public final class Asked: Sendable {
    public let paths = Mutex<[VirtualPath]>([])
    public init() {}
}
