import Foundation

/// A bounded first-in first-out queue between a producer and a consumer, each of which is
/// either a thread that may block or a task that must suspend: Replica's one bridge between
/// blocking threads (the parser, GRDB's writer, a COPY encoder) and Swift concurrency (an HTTP
/// body, a PostgreSQL connection).
///
/// The bound keeps memory flat however large the input is: a full channel blocks a thread
/// producer (``push(_:bounded:)``) or suspends a task producer (``send(_:)``); an empty one
/// blocks a thread consumer (``pop()``) or suspends a task consumer (``next()``). Either side
/// ends it with ``finish(throwing:)``: pushes then fail, and the consumer drains what is left,
/// then gets `nil` or the error.
///
/// ```swift
/// let channel = BridgeQueue<[UInt8]>(capacity: 8)
/// Task { for try await chunk in body { await channel.send(chunk) }; channel.finish() }
/// while let chunk = try channel.pop() { parser.feed(chunk) }   // on the parsing thread
/// ```
///
/// Its state sits in one ``ConditionLocked`` (threads wait on it); continuations are resumed
/// after the lock is let go.
package final class BridgeQueue<Element: Sendable>: Sendable {
    /// What the queue holds and who waits on it.
    private struct State: Sendable {
        var items: [Element] = []
        var finished = false
        var failure: (any Error)?
        /// A task consumer waiting in ``next()`` for an item.
        var consumer: CheckedContinuation<Element?, any Error>?
        /// A task producer waiting in ``send(_:)`` for room.
        var producer: CheckedContinuation<Bool, Never>?

        /// Nothing to wait for: an item is there or the channel is finished.
        var isReady: Bool { !items.isEmpty || finished }

        /// Removes the oldest item (`nil` when none, with the failure to throw), and the producer
        /// that its removal lets go on.
        mutating func take(capacity: Int) -> (item: Result<Element?, any Error>, producer: CheckedContinuation<Bool, Never>?) {
            guard !items.isEmpty else {
                return (failure.map { .failure($0) } ?? .success(nil), nil)
            }
            let item = items.removeFirst()
            let waitingProducer = items.count < capacity ? producer : nil
            if waitingProducer != nil { producer = nil }
            return (.success(item), waitingProducer)
        }
    }

    /// Threads wait on it for an item or for room; tasks leave continuations in it, resumed
    /// after the lock is let go.
    private let state = ConditionLocked(State())

    /// What ``send(_:)`` did with its item.
    private enum Sent {
        /// The channel was finished: the item is dropped.
        case refused
        /// Handed to the waiting consumer.
        case handed(CheckedContinuation<Element?, any Error>)
        /// Queued, with room left.
        case queued
        /// Queued, filling the channel: the producer waits for room.
        case full
    }
    private let capacity: Int

    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    // MARK: Producing

    /// Appends `item` from a thread, blocking while the channel is full (unless `bounded` is
    /// `false`: the last items of an input, which must not wait for a consumer that is gone).
    ///
    /// - Returns: `false` when the channel was finished (the item is dropped).
    @discardableResult
    package func push(_ item: Element, bounded: Bool = true) -> Bool {
        let capacity = self.capacity
        let (accepted, waiting) = state.withLock(waitingUntil: { !bounded || $0.items.count < capacity || $0.finished }) { state in
            guard !state.finished else { return (false, CheckedContinuation<Element?, any Error>?.none) }
            if let waiting = state.consumer {
                state.consumer = nil
                return (true, waiting)
            }
            state.items.append(item)
            return (true, nil)
        }
        waiting?.resume(returning: item)
        return accepted
    }

    /// Appends `item` from a task, suspending while the channel holds `capacity` items or more.
    ///
    /// - Returns: `false` when the channel was finished (the item is dropped).
    @discardableResult
    package func send(_ item: Element) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let capacity = self.capacity
            let sent = state.withLock { state -> Sent in
                guard !state.finished else { return .refused }
                if let waiting = state.consumer {
                    state.consumer = nil
                    return .handed(waiting)
                }
                state.items.append(item)
                guard state.items.count >= capacity else { return .queued }
                // Full: the item is in; resumed once a pop makes room, or the channel finishes.
                state.producer = continuation
                return .full
            }
            switch sent {
            case .refused: continuation.resume(returning: false)
            case .handed(let waiting):
                waiting.resume(returning: item)
                continuation.resume(returning: true)
            case .queued: continuation.resume(returning: true)
            case .full: break
            }
        }
    }

    /// Ends the channel (from either side): pushes fail from now on, the consumer drains what
    /// is left and then gets `nil`, or `error` (the first one given).
    package func finish(throwing error: (any Error)? = nil) {
        let (waitingProducer, waitingConsumer, failure) = state.withLock { state in
            state.finished = true
            if state.failure == nil { state.failure = error }
            let waitingProducer = state.producer
            state.producer = nil
            let waitingConsumer = state.items.isEmpty ? state.consumer : nil
            if waitingConsumer != nil { state.consumer = nil }
            return (waitingProducer, waitingConsumer, state.failure)
        }
        waitingProducer?.resume(returning: true)
        if let waitingConsumer {
            if let failure { waitingConsumer.resume(throwing: failure) } else { waitingConsumer.resume(returning: nil) }
        }
    }

    /// Whether the channel was finished.
    package var isFinished: Bool {
        state.withLock { $0.finished }
    }

    // MARK: Consuming

    /// The oldest item, blocking the calling thread while there is none; `nil` once the channel
    /// is finished and drained.
    ///
    /// - Throws: The error the channel was finished with, once drained.
    package func pop() throws -> Element? {
        let capacity = self.capacity
        let (item, producer) = state.withLock(waitingUntil: \.isReady) { $0.take(capacity: capacity) }
        producer?.resume(returning: true)
        return try item.get()
    }

    /// What a pop that waits at most a while found.
    package enum TimedPop {
        case item(Element)
        /// Finished and drained.
        case finished
        /// Nothing came in time.
        case timedOut
    }

    /// The oldest item, waiting at most `seconds` for one.
    ///
    /// - Throws: The error the channel was finished with, once drained.
    package func pop(waitingAtMost seconds: Double) throws -> TimedPop {
        let capacity = self.capacity
        let deadline = Date(timeIntervalSinceNow: seconds)
        let taken = state.withLock(waitingUntil: \.isReady, deadline: deadline) { state in
            state.isReady ? state.take(capacity: capacity) : nil
        }
        guard let (item, producer) = taken else { return .timedOut }
        producer?.resume(returning: true)
        return try item.get().map { .item($0) } ?? .finished
    }

    /// Blocks until an item is there or the channel is finished, removing nothing.
    package func waitForItem() {
        state.withLock(waitingUntil: \.isReady) { _ in }
    }

    /// The oldest item, suspending the calling task while there is none; `nil` once the channel
    /// is finished and drained. One task consumes at a time.
    ///
    /// - Throws: The error the channel was finished with, once drained.
    package func next() async throws -> Element? {
        try await withCheckedThrowingContinuation { continuation in
            let capacity = self.capacity
            let taken = state.withLock { state in
                guard state.isReady else {
                    state.consumer = continuation
                    return (item: Result<Element?, any Error>?.none, producer: CheckedContinuation<Bool, Never>?.none)
                }
                let (item, producer) = state.take(capacity: capacity)
                return (item: Optional(item), producer: producer)
            }
            taken.producer?.resume(returning: true)
            if let item = taken.item { continuation.resume(with: item) }
        }
    }
}
