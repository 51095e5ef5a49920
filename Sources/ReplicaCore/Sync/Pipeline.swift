import Foundation

/// Byte chunks from an async producer (an HTTP body) to the parsing thread: the producer
/// suspends when 8 chunks wait (back-pressure without blocking a cooperative thread); the
/// parsing thread blocks while none is available.
package typealias ChunkChannel = BridgeQueue<[UInt8]>

extension BridgeQueue where Element == [UInt8] {
    /// A channel of up to 8 waiting chunks.
    package convenience init() {
        self.init(capacity: 8)
    }

    /// Starts a task that sends every chunk of `chunks` into this channel, then finishes it
    /// (with the sequence's error, if it throws). Cancel the task when the input is no longer read.
    package func feed<Chunks: AsyncSequence & Sendable>(from chunks: Chunks) -> Task<Void, Never> where Chunks.Element == [UInt8] {
        Task {
            do {
                for try await chunk in chunks {
                    // Never a clean end: a reader would take the body read so far for the whole.
                    if Task.isCancelled { throw CancellationError() }
                    await send(chunk)
                }
                finish()
            } catch {
                finish(throwing: error)
            }
        }
    }

    /// The next chunk, blocking; `nil` at the end.
    ///
    /// - Throws: The error the producer finished with.
    package func receive() throws -> [UInt8]? {
        try pop()
    }
}

/// A streamed body paused longer than ``SyncOptions/streamingPatience`` while its rows were
/// being written: the transaction rolls back and the sync goes on staged.
struct StreamStalled: Error {}

/// What the parsing thread and the consumer of one response share.
package final class ParsedStream: Sendable {
    /// Planned rows from the parsing thread to the writer: both sides are dedicated threads, so
    /// they block; the bound keeps memory flat however large the input is.
    let queue = BridgeQueue<ReaderMessage>(capacity: 4)
    /// Consumed batches go back to the parsing thread, which reuses their memory.
    let pool = RowBatchPool(capacity: 8)
    let cancellation = Latch()
    let failure = Locked<(any Error)?>(nil)
    /// The parsing thread's summary once it has read the whole response (the writer gets it too,
    /// as the queue's last message).
    let parsed = Locked<ReaderSummary?>(nil)
    /// Signalled when the parsing thread has ended.
    let ended = ThreadCompletion()
    /// Why the writer stopped taking this stream's batches before its end: its transaction ended.
    let abandoned = Locked<(any Error)?>(nil)

    /// Hands every batch to `body` on the calling thread (pops block), recycling it after, and
    /// returns the parsing thread's summary.
    ///
    /// - Throws: What `body` throws, `.cancelled`, or the parsing thread's error (`source` names the input).
    ///
    /// With `patience`, waiting more than that many seconds for the next message throws
    /// ``StreamStalled``.
    package func consume(source: String? = nil, patience: Double? = nil, _ body: (RowBatch) throws -> Void) throws -> ReaderSummary {
        var summary: ReaderSummary?
        while let message = try next(patience: patience) {
            if cancellation.isSet { throw SyncError(.cancelled, "cancelled", source: source) }
            switch message {
            case .rows(let batch):
                try body(batch)
                pool.recycle(batch)
            case .finished(let finished):
                summary = finished
            }
        }
        if cancellation.isSet { throw SyncError(.cancelled, "cancelled", source: source) }
        guard let summary else { throw failure.value ?? SyncError(.input, "the response ended early", source: source) }
        return summary
    }

    /// The next message (`nil` once the queue is closed and drained), waiting at most
    /// `patience` seconds when given.
    private func next(patience: Double?) throws -> ReaderMessage? {
        // A patience of a year or more (or infinity) is no limit: no deadline is computed from it.
        guard let patience, patience < 31_536_000 else { return try queue.pop() }
        switch try queue.pop(waitingAtMost: patience) {
        case .item(let message): return message
        case .finished: return nil
        case .timedOut: throw StreamStalled()
        }
    }

    /// The writer will take no more of this stream's batches (its transaction ended with `error`):
    /// the parsing thread stops at its next batch or chunk.
    func abandon(_ error: any Error) {
        abandoned.withLock { if $0 == nil { $0 = error } }
        cancellation.set()
        queue.finish()
    }

    /// Returns once the parsing thread has ended, with its summary, while the writer may still be
    /// taking the last batches: what a page handed to a transaction that writes it later needs.
    ///
    /// - Throws: Why the writer abandoned the stream (its transaction's error), else the parsing
    ///   thread's error.
    func awaitParsed(source: String) async throws -> ReaderSummary {
        await ended.wait()
        if let summary = parsed.value { return summary }
        if let error = abandoned.value { throw error }
        throw failure.value ?? SyncError(.input, "the response ended early", source: source)
    }

    /// Returns once the parsing thread has sent its first message (or ended), without taking it.
    package func awaitFirstMessage() async {
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

/// Where the parsing thread sends its messages: the writer's queue, and what the thread itself
/// keeps of them (its summary; each batch seen by `observe` before the writer takes it).
struct ReaderOutput {
    let queue: BridgeQueue<ReaderMessage>
    let parsed: Locked<ReaderSummary?>
    let observe: (@Sendable (RowBatch) -> Void)?

    /// Sends `message` to the writer.
    ///
    /// - Returns: `false` when the writer has stopped taking messages.
    @discardableResult
    func push(_ message: ReaderMessage) -> Bool {
        switch message {
        case .rows(let batch): observe?(batch)
        case .finished(let summary): parsed.withLock { $0 = summary }
        }
        return queue.push(message)
    }
}

/// Tells an async caller that a thread has ended: the thread calls ``signal()`` last thing,
/// the caller awaits ``wait()``.
final class ThreadCompletion: Sendable {
    private let state = Locked<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func signal() {
        let waiting = state.withLock { state in
            state.done = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }
}
