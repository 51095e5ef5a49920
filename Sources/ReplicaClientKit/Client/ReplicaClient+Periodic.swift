import Foundation
import ReplicaCore

/// A periodic sync started by ``ReplicaClient/keepSynced(_:every:params:queue:onResult:)``; cancel it to stop.
public final class SyncTask: Sendable {
    private let task: Task<Void, Never>

    init(task: Task<Void, Never>) { self.task = task }

    /// Stops the loop; a call under way is cancelled (its transaction rolls back).
    public func cancel() { task.cancel() }

    /// Whether it was cancelled.
    public var isCancelled: Bool { task.isCancelled }

    deinit { task.cancel() }
}

extension ReplicaClient {
    /// Keeps `path` synced: calls it now and then every `interval`, backing off exponentially
    /// (with jitter, up to 32 intervals; never sooner than a `Retry-After`) after failures, and reports each outcome on `queue`.
    ///
    /// ```swift
    /// let task = client.keepSynced("/users", every: .seconds(30)) { result in print(result) }
    /// // ...
    /// task.cancel()
    /// ```
    ///
    /// - Returns: The running loop; keep it, and cancel it to stop.
    public func keepSynced(_ path: String, every interval: Duration, params: [String: Parameter] = [:],
                           queue: DispatchQueue = .global(),
                           onResult: @escaping @Sendable (Result<CallResult, any Error>) -> Void) -> SyncTask {
        let task = Task {
            var failures = 0
            while !Task.isCancelled {
                let outcome: Result<CallResult, any Error>
                do {
                    outcome = .success(try await call(path, params: params))
                    failures = 0
                } catch {
                    if Task.isCancelled { break }
                    outcome = .failure(error)
                    failures += 1
                }
                queue.async { onResult(outcome) }
                let factor = failures == 0 ? 1.0 : min(32, pow(2, Double(failures - 1))) * Double.random(in: 1...1.5)
                var delay = interval * factor
                // A 429 or 503 saying when to come back: not before.
                if case .failure(let error) = outcome, let wait = (error as? ClientError)?.retryAfter { delay = max(delay, wait) }
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    break
                }
            }
        }
        return SyncTask(task: task)
    }
}
