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
/// `@unchecked Sendable`: every stored property is read and written while `condition` is locked;
/// the continuations are resumed after it is unlocked.
package final class BridgeQueue<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private var finished = false
    private var failure: (any Error)?
    /// A task consumer waiting in ``next()`` for an item.
    private var consumer: CheckedContinuation<Element?, any Error>?
    /// A task producer waiting in ``send(_:)`` for room.
    private var producer: CheckedContinuation<Bool, Never>?
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
        condition.lock()
        while bounded && items.count >= capacity && !finished { condition.wait() }
        guard !finished else {
            condition.unlock()
            return false
        }
        if let waiting = consumer {
            consumer = nil
            condition.unlock()
            waiting.resume(returning: item)
            return true
        }
        items.append(item)
        condition.broadcast()
        condition.unlock()
        return true
    }

    /// Appends `item` from a task, suspending while the channel holds `capacity` items or more.
    ///
    /// - Returns: `false` when the channel was finished (the item is dropped).
    @discardableResult
    package func send(_ item: Element) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            condition.lock()
            guard !finished else {
                condition.unlock()
                continuation.resume(returning: false)
                return
            }
            if let waiting = consumer {
                consumer = nil
                condition.unlock()
                waiting.resume(returning: item)
                continuation.resume(returning: true)
                return
            }
            items.append(item)
            condition.broadcast()
            guard items.count >= capacity else {
                condition.unlock()
                continuation.resume(returning: true)
                return
            }
            // Full: the item is in; resumed once a pop makes room, or the channel finishes.
            producer = continuation
            condition.unlock()
        }
    }

    /// Ends the channel (from either side): pushes fail from now on, the consumer drains what
    /// is left and then gets `nil`, or `error` (the first one given).
    package func finish(throwing error: (any Error)? = nil) {
        condition.lock()
        finished = true
        if failure == nil { failure = error }
        let waitingProducer = producer
        producer = nil
        let waitingConsumer = items.isEmpty ? consumer : nil
        if waitingConsumer != nil { consumer = nil }
        let failure = self.failure
        condition.broadcast()
        condition.unlock()
        waitingProducer?.resume(returning: true)
        if let waitingConsumer {
            if let failure { waitingConsumer.resume(throwing: failure) } else { waitingConsumer.resume(returning: nil) }
        }
    }

    /// Whether the channel was finished.
    package var isFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return finished
    }

    // MARK: Consuming

    /// The oldest item, blocking the calling thread while there is none; `nil` once the channel
    /// is finished and drained.
    ///
    /// - Throws: The error the channel was finished with, once drained.
    package func pop() throws -> Element? {
        condition.lock()
        while items.isEmpty && !finished { condition.wait() }
        return try take()
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
        condition.lock()
        let deadline = Date(timeIntervalSinceNow: seconds)
        while items.isEmpty && !finished {
            if !condition.wait(until: deadline) && items.isEmpty && !finished {
                condition.unlock()
                return .timedOut
            }
        }
        return try take().map { .item($0) } ?? .finished
    }

    /// Blocks until an item is there or the channel is finished, removing nothing.
    package func waitForItem() {
        condition.lock()
        while items.isEmpty && !finished { condition.wait() }
        condition.unlock()
    }

    /// The oldest item, suspending the calling task while there is none; `nil` once the channel
    /// is finished and drained. One task consumes at a time.
    ///
    /// - Throws: The error the channel was finished with, once drained.
    package func next() async throws -> Element? {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            if items.isEmpty && !finished {
                consumer = continuation
                condition.unlock()
                return
            }
            continuation.resume(with: Result { try take() })
        }
    }

    /// Removes the oldest item with the lock held, and unlocks; `nil` (or the failure) when none.
    private func take() throws -> Element? {
        guard !items.isEmpty else {
            let failure = self.failure
            condition.unlock()
            if let failure { throw failure }
            return nil
        }
        let item = items.removeFirst()
        let waitingProducer = items.count < capacity ? producer : nil
        if waitingProducer != nil { producer = nil }
        condition.broadcast()
        condition.unlock()
        waitingProducer?.resume(returning: true)
        return item
    }
}
