import Foundation

/// Runs async code while the calling thread does the synchronous work that code sends it: the
/// async write driver over a transaction confined to one thread (SQLite's, on GRDB's writer queue).
///
/// ``serve(_:)`` starts `body` in a task of its own and, until it returns, runs on the calling
/// thread each piece of work `body` hands to ``perform(_:)``, in order; `perform` returns what the
/// work returned, or throws what it threw. ``cancel()`` cancels the task (before it starts too).
///
/// ```swift
/// let pump = ThreadPump()
/// let total = try pump.serve {                      // on the writer's thread, which it keeps
///     try await pump.perform { try writeRows() } + (try await pump.perform { try deleteStale() })
/// }
/// ```
package final class ThreadPump: Sendable {
    private struct State: Sendable {
        var work: [@Sendable () -> Void] = []
        var finished = false
        var cancelled = false
        var task: Task<Void, Never>?
    }

    private let state = ConditionLocked(State())

    package init() {}

    /// Runs `body` to its end, doing on this thread the work it sends through ``perform(_:)``.
    ///
    /// - Throws: What `body` threw.
    package func serve<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let result = Locked<Result<T, any Error>?>(nil)
        let task = Task {
            let outcome: Result<T, any Error>
            do {
                outcome = .success(try await body())
            } catch {
                outcome = .failure(error)
            }
            result.withLock { $0 = outcome }
            self.state.withLock { $0.finished = true }
        }
        if state.withLock({ state -> Bool in
            state.task = task
            return state.cancelled
        }) {
            task.cancel()
        }
        while let next = state.withLock(waitingUntil: { !$0.work.isEmpty || $0.finished }, { state in
            state.work.isEmpty ? nil : state.work.removeFirst()
        }) {
            next()
        }
        state.withLock { $0.task = nil }
        guard let outcome = result.value else {
            throw CancellationError()
        }
        return try outcome.get()
    }

    /// Runs `work` on the serving thread and returns what it returned.
    ///
    /// - Throws: What `work` threw.
    package func perform<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            state.withLock { state in
                state.work.append { continuation.resume(with: Result(catching: work)) }
            }
        }
    }

    /// Cancels the task `serve` runs (at once, or as it starts).
    package func cancel() {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}
