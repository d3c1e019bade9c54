public import CofferCore

/// What a front end's handling of one request gave, with the warnings its operations raised
/// (attributes a copy could not keep…), for the front end to show beside the outcome.
public struct Reported<Value> {
    /// What the handling gave.
    public var value: Value
    /// In the order they were raised, each once.
    public var warnings: [OperationWarning]

    /// `value`, with `warnings` to show beside it.
    public init(_ value: Value, warnings: [OperationWarning] = []) {
        self.value = value
        self.warnings = warnings
    }
}

extension Reported: Sendable where Value: Sendable {}

extension Session {
    /// Runs `body` — a front end's handling of one request, performing operations in this
    /// session — and returns what it returned with every warning those operations raised.
    /// Every front end asks here, so none drops what an operation could not do.
    public nonisolated(nonsending) func reporting<T>(_ body: () async -> T) async -> Reported<T> {
        let (value, warnings) = await OperationWarnings.collect { await body() }
        return Reported(value, warnings: warnings)
    }

    /// Performs `operation` (as ``perform(_:progress:)`` does) and returns its outcome with
    /// its warnings.
    public nonisolated(nonsending) func performReporting<Operation: FileOperation>(
        _ operation: @autoclosure () throws(CofferError) -> Operation, progress: (any ProgressDisplay)? = nil
    ) async -> Reported<Result<Operation.Output, CofferError>> {
        await reporting { () async -> Result<Operation.Output, CofferError> in
            do throws(CofferError) {
                return .success(try await perform(try operation(), progress: progress))
            } catch {
                return .failure(error)
            }
        }
    }
}
