/// Why a generator wrote nothing.
public enum GenerationFailure: Error, Equatable, CustomStringConvertible {
    /// The manifest breaks rules; nothing was written.
    case invalidManifest([String])
    /// The existing output is not a file of the kind the generator writes (an Info.plist
    /// that is not a property list with a dictionary at its top); it is never overwritten.
    case unreadableOutput(String)

    public var description: String {
        switch self {
        case .invalidManifest(let errors): errors.joined(separator: "\n")
        case .unreadableOutput(let reason): reason
        }
    }
}
