import Foundation
import ReplicaCore

/// The statuses of a service's synced paths and the streams that follow them.
final class StatusBoard: Sendable {
    private struct State: Sendable {
        var statuses: [String: SyncStatus] = [:]
        /// The followers: the path each follows (`nil` for every path) and its stream.
        var subscribers: [UInt64: (path: String?, continuation: AsyncStream<SyncStatus>.Continuation)] = [:]
        var nextID: UInt64 = 0
        /// The service has stopped: new streams end after the current statuses.
        var finished = false
    }

    private let state: Locked<State>

    init(paths: [String]) {
        let now = Date()
        var initial = State()
        for path in paths {
            initial.statuses[path] = SyncStatus(path: path, phase: .starting, lastSuccess: nil, lastOutcome: nil, lastError: nil,
                                                consecutiveFailures: 0, nextAttempt: nil, date: now)
        }
        state = Locked(initial)
    }

    /// The current status of `path`.
    func current(_ path: String) -> SyncStatus? {
        state.withLock { $0.statuses[path] }
    }

    /// Changes the status of `path` and sends it to its followers.
    func update(_ path: String, _ change: (inout SyncStatus) -> Void) {
        let (status, receivers) = state.withLock { state -> (SyncStatus?, [AsyncStream<SyncStatus>.Continuation]) in
            guard var status = state.statuses[path] else { return (nil, []) }
            change(&status)
            status.date = Date()
            state.statuses[path] = status
            return (status, state.subscribers.values.filter { $0.path == nil || $0.path == path }.map(\.continuation))
        }
        guard let status else { return }
        for receiver in receivers { receiver.yield(status) }
    }

    /// Gives every path's status the outbox's, and sends the statuses to their followers when
    /// what it counts changed (not when only the time it was read did).
    func update(outbox: OutboxStatus) {
        let (statuses, receivers) = state.withLock { state -> ([SyncStatus], [(path: String?, continuation: AsyncStream<SyncStatus>.Continuation)]) in
            var changed: [SyncStatus] = []
            for (path, var status) in state.statuses {
                let before = status.outbox
                status.outbox = outbox
                let counted = before.map { ($0.pending, $0.rejected, $0.oldestPending, $0.lastError) }
                if let counted, counted == (outbox.pending, outbox.rejected, outbox.oldestPending, outbox.lastError) {
                    state.statuses[path] = status
                    continue
                }
                status.date = outbox.date
                state.statuses[path] = status
                changed.append(status)
            }
            return (changed.sorted { $0.path < $1.path }, Array(state.subscribers.values))
        }
        for status in statuses {
            for receiver in receivers where receiver.path == nil || receiver.path == status.path { receiver.continuation.yield(status) }
        }
    }

    /// A stream of the statuses of `path` (every path for `nil`): the current ones first, then each
    /// change, until the service stops.
    func stream(_ path: String?) -> AsyncStream<SyncStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncStatus.self, bufferingPolicy: .bufferingNewest(256))
        let (id, current, ended) = state.withLock { state -> (UInt64, [SyncStatus], Bool) in
            state.nextID += 1
            if !state.finished { state.subscribers[state.nextID] = (path, continuation) }
            let current = state.statuses.values.filter { path == nil || $0.path == path }.sorted { $0.path < $1.path }
            return (state.nextID, current, state.finished)
        }
        for status in current { continuation.yield(status) }
        if ended {
            continuation.finish()
        } else {
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
            }
        }
        return stream
    }

    /// Ends every stream (the service has stopped).
    func finish() {
        let receivers = state.withLock { state -> [AsyncStream<SyncStatus>.Continuation] in
            state.finished = true
            defer { state.subscribers = [:] }
            return state.subscribers.values.map(\.continuation)
        }
        for receiver in receivers { receiver.finish() }
    }
}
