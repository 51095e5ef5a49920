import Foundation

/// A flag set once when a sync is cancelled, read by the parsing thread and the writer.
final class CancellationFlag: Sendable {
    private let state = NSLock()
    // Guarded by `state`.
    nonisolated(unsafe) private var cancelled = false

    func cancel() {
        state.lock()
        cancelled = true
        state.unlock()
    }

    var isCancelled: Bool {
        state.lock()
        defer { state.unlock() }
        return cancelled
    }
}

/// A bounded queue between the parsing thread (producer) and the writer (consumer).
///
/// Both sides are dedicated threads (the parser's own thread and GRDB's writer queue), so
/// blocking is fine; the bound keeps memory flat however large the input is.
/// `@unchecked Sendable`: every stored property is read and written under `condition`.
final class BatchQueue<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private var closed = false
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Appends `item`, waiting while the queue is full. Returns `false` when the consumer closed it.
    @discardableResult
    func push(_ item: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= capacity && !closed { condition.wait() }
        guard !closed else { return false }
        items.append(item)
        condition.broadcast()
        return true
    }

    /// Removes the oldest item, waiting while the queue is empty; `nil` once closed and drained.
    func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !closed { condition.wait() }
        guard !items.isEmpty else { return nil }
        let item = items.removeFirst()
        condition.broadcast()
        return item
    }

    /// What a pop that waits at most a while found.
    enum TimedPop {
        case item(Element)
        /// Closed and drained.
        case closed
        /// Nothing came in time.
        case timedOut
    }

    /// Removes the oldest item, waiting at most `seconds` for one.
    func pop(waitingAtMost seconds: Double) -> TimedPop {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while items.isEmpty && !closed {
            if !condition.wait(until: deadline) && items.isEmpty && !closed { return .timedOut }
        }
        guard !items.isEmpty else { return .closed }
        let item = items.removeFirst()
        condition.broadcast()
        return .item(item)
    }

    /// Waits until an item is there or the queue is closed, removing nothing.
    func waitForItem() {
        condition.lock()
        while items.isEmpty && !closed { condition.wait() }
        condition.unlock()
    }

    /// Wakes both sides; pushes fail and pops drain what is left.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}

/// Byte chunks from an async producer (an HTTP body) to the parsing thread.
///
/// The producer awaits when too many chunks wait (back-pressure without blocking a
/// cooperative thread); the parsing thread blocks while none is available.
/// `@unchecked Sendable`: every stored property is read and written under `condition`.
package final class ChunkChannel: @unchecked Sendable {
    package init() {}

    private let condition = NSCondition()
    private var chunks: [[UInt8]] = []
    private var finished = false
    private var failure: (any Error)?
    private var waitingProducer: CheckedContinuation<Void, Never>?
    private let capacity = 8

    /// Hands a chunk to the parser, suspending while the channel is full.
    func send(_ chunk: [UInt8]) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            if finished {
                condition.unlock()
                continuation.resume()
                return
            }
            chunks.append(chunk)
            condition.broadcast()
            if chunks.count >= capacity {
                waitingProducer = continuation
                condition.unlock()
            } else {
                condition.unlock()
                continuation.resume()
            }
        }
    }

    /// Starts a task that sends every chunk of `chunks` into this channel, then finishes it
    /// (with the sequence's error, if it throws). Cancel the task when the input is no longer read.
    package func feed<Chunks: AsyncSequence & Sendable>(from chunks: Chunks) -> Task<Void, Never> where Chunks.Element == [UInt8] {
        Task {
            do {
                for try await chunk in chunks {
                    if Task.isCancelled { break }
                    await send(chunk)
                }
                finish()
            } catch {
                finish(throwing: error)
            }
        }
    }

    /// Marks the end of the input, or its failure.
    package func finish(throwing error: (any Error)? = nil) {
        condition.lock()
        if !finished {
            finished = true
            failure = error
        }
        let producer = waitingProducer
        waitingProducer = nil
        condition.broadcast()
        condition.unlock()
        producer?.resume()
    }

    /// The next chunk, blocking; `nil` at the end.
    ///
    /// - Throws: The error the producer finished with.
    package func receive() throws -> [UInt8]? {
        condition.lock()
        while chunks.isEmpty && !finished { condition.wait() }
        if chunks.isEmpty {
            let error = failure
            condition.unlock()
            if let error { throw error }
            return nil
        }
        let chunk = chunks.removeFirst()
        let producer = chunks.count < capacity ? waitingProducer : nil
        if producer != nil { waitingProducer = nil }
        condition.unlock()
        producer?.resume()
        return chunk
    }
}

/// A streamed body paused longer than ``SyncOptions/streamingPatience`` while its rows were
/// being written: the transaction rolls back and the sync goes on staged.
struct StreamStalled: Error {}

/// What the parsing thread and the consumer of one response share.
package final class ParsedStream: Sendable {
    let queue = BatchQueue<ReaderMessage>(capacity: 4)
    /// Consumed batches go back to the parsing thread, which reuses their memory.
    let pool = RowBatchPool(capacity: 8)
    let cancellation = CancellationFlag()
    let failure = FailureBox()

    /// Hands every batch to `body` on the calling thread (pops block), recycling it after, and
    /// returns the parsing thread's summary.
    ///
    /// - Throws: What `body` throws, `.cancelled`, or the parsing thread's error (`source` names the input).
    ///
    /// With `patience`, waiting more than that many seconds for the next message throws
    /// ``StreamStalled``.
    func consume(source: String? = nil, patience: Double? = nil, _ body: (RowBatch) throws -> Void) throws -> ReaderSummary {
        var summary: ReaderSummary?
        while let message = try next(patience: patience) {
            if cancellation.isCancelled { throw SyncError(.cancelled, "cancelled", source: source) }
            switch message {
            case .rows(let batch):
                try body(batch)
                pool.recycle(batch)
            case .finished(let finished):
                summary = finished
            }
        }
        if cancellation.isCancelled { throw SyncError(.cancelled, "cancelled", source: source) }
        guard let summary else { throw failure.error ?? SyncError(.input, "the response ended early", source: source) }
        return summary
    }

    /// The next message (`nil` once the queue is closed and drained), waiting at most
    /// `patience` seconds when given.
    private func next(patience: Double?) throws -> ReaderMessage? {
        // A patience of a year or more (or infinity) is no limit: no deadline is computed from it.
        guard let patience, patience < 31_536_000 else { return queue.pop() }
        switch queue.pop(waitingAtMost: patience) {
        case .item(let message): return message
        case .closed: return nil
        case .timedOut: throw StreamStalled()
        }
    }

    /// Returns once the parsing thread has sent its first message (or ended), without taking it.
    func awaitFirstMessage() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                self.queue.waitForItem()
                continuation.resume()
            }
            thread.name = "Replica.waiter"
            thread.start()
        }
    }

    /// ``consume(source:_:)`` on a thread of its own (a blocked Dispatch worker could starve the
    /// pool under load), for a caller that awaits.
    package func drain(_ body: @escaping (RowBatch) throws -> Void) async throws -> ReaderSummary {
        // `body` runs on one background thread while the caller awaits: never concurrently.
        let consumer = UncheckedBox(body)
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try self.consume(consumer.value) })
            }
            thread.name = "Replica.stager"
            thread.start()
        }
    }
}

/// Tells an async caller that a thread has ended: the thread calls ``signal()`` last thing,
/// the caller awaits ``wait()``.
/// `@unchecked Sendable`: `done` and `waiters` are read and written under `lock` only.
final class ThreadCompletion: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func signal() {
        lock.lock()
        done = true
        let waiting = waiters
        waiters = []
        lock.unlock()
        for waiter in waiting { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if done {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append(continuation)
                lock.unlock()
            }
        }
    }
}
