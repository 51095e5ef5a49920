import Foundation
import Logging
import ReplicaCore

extension ReplicaService {
    /// The outbox's statuses: the current one first (once the first push is done), then one
    /// after each push, until the service stops.
    ///
    /// ```swift
    /// for await status in service.outboxStatuses() where (status.oldestPendingAge ?? .zero) > .seconds(300) {
    ///     logger.error("local writes stuck: \(status)")
    /// }
    /// ```
    public func outboxStatuses() -> AsyncStream<OutboxStatus> { outboxBoard.stream() }

    /// The outbox's status after the latest push; `nil` before the first one.
    public var currentOutboxStatus: OutboxStatus? { outboxBoard.current }

    /// Sends the outbox until the service stops: every interval, sooner when a commit wakes it,
    /// backing off (up to 32 intervals, with jitter) while attempts fail.
    func send(_ outbox: Outbox) async {
        var failures = 0
        while !isStopping {
            do {
                let result = try await client.push(concurrency: outbox.concurrency)
                outboxBoard.publish(result.outbox)
                board.update(outbox: result.outbox)
                failures = result.failed.isEmpty ? 0 : failures + 1
                if !result.failed.isEmpty {
                    logger.warning("outbox: \(result) (\(failures) pushes in a row failed): \(result.outbox.lastError ?? "")")
                }
                for mutation in result.rejected {
                    logger.error("outbox: \(mutation): \(mutation.rejection.map { String($0.error.description.prefix(500)) } ?? "")")
                }
            } catch {
                if Task.isCancelled { break }
                failures += 1
                logger.warning("outbox: the push failed (\(failures) in a row): \(error)")
            }
            if isStopping { break }
            let factor = failures == 0 ? 1.0 : min(32, pow(2, Double(failures - 1))) * Double.random(in: 1...1.5)
            await sendWaker.wait(upTo: outbox.interval * factor)
        }
    }
}

/// The latest outbox status and the streams that follow it.
final class OutboxBoard: Sendable {
    private struct State {
        var current: OutboxStatus?
        var streams: [UUID: AsyncStream<OutboxStatus>.Continuation] = [:]
        var finished = false
    }

    private let state = Locked(State())

    var current: OutboxStatus? { state.withLock { $0.current } }

    func stream() -> AsyncStream<OutboxStatus> {
        let (stream, continuation) = AsyncStream<OutboxStatus>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let id = UUID()
        let finished = state.withLock { state -> Bool in
            if state.finished { return true }
            if let current = state.current { continuation.yield(current) }
            state.streams[id] = continuation
            return false
        }
        if finished { continuation.finish() }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.streams.removeValue(forKey: id) } }
        return stream
    }

    func publish(_ status: OutboxStatus) {
        let streams = state.withLock { state -> [AsyncStream<OutboxStatus>.Continuation] in
            state.current = status
            return Array(state.streams.values)
        }
        for stream in streams { stream.yield(status) }
    }

    func finish() {
        let streams = state.withLock { state -> [AsyncStream<OutboxStatus>.Continuation] in
            state.finished = true
            defer { state.streams.removeAll() }
            return Array(state.streams.values)
        }
        for stream in streams { stream.finish() }
    }
}
