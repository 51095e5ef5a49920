import Foundation

/// The statuses of a service's synced paths and the streams that follow them.
/// `@unchecked Sendable`: every member is read and written under `lock` only.
final class StatusBoard: @unchecked Sendable {
    private let lock = NSLock()
    private var statuses: [String: SyncStatus] = [:]
    private var subscribers: [UInt64: (path: String?, continuation: AsyncStream<SyncStatus>.Continuation)] = [:]
    private var nextID: UInt64 = 0
    private var finished = false

    init(paths: [String]) {
        let now = Date()
        for path in paths {
            statuses[path] = SyncStatus(path: path, phase: .starting, lastSuccess: nil, lastOutcome: nil, lastError: nil,
                                        consecutiveFailures: 0, nextAttempt: nil, date: now)
        }
    }

    /// The current status of `path`.
    func current(_ path: String) -> SyncStatus? {
        lock.withLock { statuses[path] }
    }

    /// Changes the status of `path` and sends it to its followers.
    func update(_ path: String, _ change: (inout SyncStatus) -> Void) {
        let (status, receivers) = lock.withLock { () -> (SyncStatus?, [AsyncStream<SyncStatus>.Continuation]) in
            guard var status = statuses[path] else { return (nil, []) }
            change(&status)
            status.date = Date()
            statuses[path] = status
            return (status, subscribers.values.filter { $0.path == nil || $0.path == path }.map(\.continuation))
        }
        guard let status else { return }
        for receiver in receivers { receiver.yield(status) }
    }

    /// A stream of the statuses of `path` (every path for `nil`): the current ones first, then each
    /// change, until the service stops.
    func stream(_ path: String?) -> AsyncStream<SyncStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncStatus.self, bufferingPolicy: .bufferingNewest(256))
        let (id, current, ended) = lock.withLock { () -> (UInt64, [SyncStatus], Bool) in
            nextID += 1
            if !finished { subscribers[nextID] = (path, continuation) }
            let current = statuses.values.filter { path == nil || $0.path == path }.sorted { $0.path < $1.path }
            return (nextID, current, finished)
        }
        for status in current { continuation.yield(status) }
        if ended {
            continuation.finish()
        } else {
            continuation.onTermination = { [weak self] _ in
                self?.lock.withLock { _ = self?.subscribers.removeValue(forKey: id) }
            }
        }
        return stream
    }

    /// Ends every stream (the service has stopped).
    func finish() {
        let receivers = lock.withLock { () -> [AsyncStream<SyncStatus>.Continuation] in
            finished = true
            defer { subscribers = [:] }
            return subscribers.values.map(\.continuation)
        }
        for receiver in receivers { receiver.finish() }
    }
}
