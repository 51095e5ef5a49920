import Foundation

/// A sync session's pages written while they are parsed: one transaction of the store stays
/// open from the first page's rows to the session's commit and takes each page's parsed rows
/// as they come, so a paged sync writes at the speed of a file import instead of staging every
/// page and merging them at the end.
///
/// The session's task hands each page over (``hand(_:)``) as its parsing begins, and, once the
/// traversal has ended, what the commit adds (``commit(_:)``: stale deletions, tombstones, the
/// client's records). The store's transaction takes them in order on its own thread
/// (``consume(source:_:)``): a page whose parsing has ended is done for the session while the
/// transaction still writes its last rows, so the next page is parsed meanwhile and the writer
/// never waits at a page boundary. An error writing a page ends the transaction and is thrown by
/// the next hand-over or the commit. With `patience`
/// (SQLite, whose writer the transaction holds), a wait of more than that many seconds for the
/// next page or its next rows throws ``StreamStalled`` inside the transaction, which rolls it
/// back and lets go of the writer, and so does a wait of more than that for another process's
/// write lock (`SyncError` `.busy`); the session then stages its pages instead.
///
/// ```swift
/// let live = LiveTransaction.start(store: store, source: "GET /people", patience: 0.1, ...)
/// try await live.hand(parsedStream)      // written after the pages before it
/// let outcome = try await live.commit(LiveTransaction.Ending(stale: deletions))
/// ```
package final class LiveTransaction: Sendable {
    /// What the transaction does after the pages, decided once the traversal has ended.
    package struct Ending: Sendable {
        package var stale: [StaleDeletion] = []
        package var tombstones: [Tombstones] = []
        package var records: [ClientCache.Record] = []
        /// What the commit does to the outbox (a confirmed mutation leaves it with the server's reply).
        package var outbox = OutboxWork()
    }

    private enum Message: Sendable {
        case page(ParsedStream)
        case commit(Ending)
    }

    private let messages = BridgeQueue<Message>(capacity: 1)
    /// How long the transaction waits for the next page or rows; `nil`: as long as it takes.
    let patience: Double?
    private let task = Locked<Task<WriteOutcome, any Error>?>(nil)
    /// The trace the commit runs under (read in the committing task, which is not the
    /// transaction's): the store publishes the change set as its child.
    private let commitTrace = Locked<WriteTrace?>(nil)
    /// How the transaction ended, once it has.
    private let ending = Locked<(any Error)?>(nil)

    private init(patience: Double?) {
        self.patience = patience.flatMap { $0 < 31_536_000 ? $0 : nil }
    }

    /// Begins the transaction on `store` (it takes the writer at once: start it when the first
    /// page's rows are there).
    static func start(store: any ReplicaStore, source: String, patience: Double?, busyTimeout: Double?) -> LiveTransaction {
        let live = LiveTransaction(patience: patience)
        var job = WriteJob(source: source)
        job.rows = .live(live)
        // Waiting for another writer's lock is a pause too: past `patience`, the session stages,
        // and its commit waits for the lock as long as the store says.
        job.busyTimeout = live.patience.map { min($0, busyTimeout ?? $0) } ?? busyTimeout
        let task = Task {
            do {
                let outcome = try await store.transact(job)
                live.close(SyncError(.input, "this sync session's transaction has committed", source: source))
                return outcome
            } catch {
                live.close(error)
                throw error
            }
        }
        live.task.withLock { $0 = task }
        return live
    }

    // MARK: The session's side

    /// Hands one page's parsed rows to the transaction, which writes them after the pages handed
    /// before; returns at once. Should the transaction end before the page's last rows, it
    /// abandons the stream (``ParsedStream/awaitParsed(source:)`` throws its error).
    ///
    /// - Throws: How the transaction had already ended (``StreamStalled`` after a pause: it rolled
    ///   back; what writing an earlier page threw).
    func hand(_ stream: ParsedStream) async throws {
        guard messages.push(.page(stream), bounded: false) else { throw try await endingError() }
    }

    /// Returns once `stream`, handed over, has been parsed to its end, with the parsing thread's
    /// summary: the transaction may still be writing its last rows.
    ///
    /// - Throws: The transaction's error when it ended before taking the whole stream
    ///   (``StreamStalled`` after a pause), else the parsing thread's error.
    func parsed(_ stream: ParsedStream, source: String) async throws -> ReaderSummary {
        do {
            return try await stream.awaitParsed(source: source)
        } catch where stream.abandoned.value != nil {
            throw try await endingError()
        }
    }

    /// Ends the pages: the transaction deletes and records what `ending` says, and commits.
    ///
    /// - Throws: The transaction's error (``StreamStalled`` when it had rolled back after a pause).
    func commit(_ ending: Ending) async throws -> WriteOutcome {
        commitTrace.withLock { $0 = WriteTrace.current }
        messages.push(.commit(ending), bounded: false)
        guard let task = task.withLock({ $0 }) else { throw try await endingError() }
        return try await task.value
    }

    /// Rolls the transaction back unless it has ended (a session discarded, failed or dropped).
    func abort() {
        messages.finish(throwing: SyncError(.cancelled, "the sync session ended before its commit; nothing was written"))
    }

    /// Why the transaction ended, once it has.
    private func endingError() async throws -> any Error {
        if let task = task.withLock({ $0 }) { _ = await task.result }
        return ending.withLock { $0 } ?? SyncError(.input, "the sync session's transaction has ended")
    }

    /// The transaction has ended with `error`: pages still waiting are abandoned with it.
    private func close(_ error: any Error) {
        ending.withLock { if $0 == nil { $0 = error } }
        messages.finish()
        while case .page(let stream)? = try? messages.pop() { stream.abandon(error) }
    }

    // MARK: The transaction's side

    /// The trace of the session's commit, once it has begun.
    package var trace: WriteTrace? { commitTrace.withLock { $0 } }

    /// Writes every page handed over with `hand` (on the transaction's thread, which blocks
    /// between them) until the commit's ``Ending``, which it returns.
    ///
    /// - Throws: ``StreamStalled`` when a page or its rows took longer than ``patience``; what
    ///   `write` or a page's parsing threw; `.cancelled` when the session ended without a commit.
    package func consume(source: String, _ write: (RowBatch) throws -> Void) throws -> Ending {
        while true {
            let message: Message
            if let patience {
                switch try messages.pop(waitingAtMost: patience) {
                case .item(let item): message = item
                case .timedOut: throw StreamStalled()
                case .finished: throw SyncError(.cancelled, "the sync session ended before its commit; nothing was written", source: source)
                }
            } else {
                guard let item = try messages.pop() else {
                    throw SyncError(.cancelled, "the sync session ended before its commit; nothing was written", source: source)
                }
                message = item
            }
            switch message {
            case .commit(let ending):
                return ending
            case .page(let stream):
                do {
                    _ = try stream.consume(source: source, patience: patience, write)
                } catch {
                    stream.abandon(error)
                    throw error
                }
            }
        }
    }

    /// ``consume(source:_:)`` on a thread of its own, for a transaction that awaits (PostgreSQL's).
    package func drain(source: String, _ write: @escaping (RowBatch) throws -> Void) async throws -> Ending {
        let consumer = UncheckedBox(write)
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try self.consume(source: source, consumer.value) })
            }
            thread.name = "Replica.live"
            thread.start()
        }
    }
}
