import Foundation

/// A sync session's pages written while they are parsed: one transaction of the store stays
/// open from the first page's rows to the session's commit and takes each page's parsed rows
/// as they come, so a paged sync writes at the speed of a file import instead of staging every
/// page and merging them at the end.
///
/// The session's task hands each page over (``write(_:)``) and, once the traversal has ended,
/// what the commit adds (``commit(_:)``: stale deletions, tombstones, the client's records). The
/// store's transaction takes them on its own thread (``consume(source:_:)``). With `patience`
/// (SQLite, whose writer the transaction holds), a wait of more than that many seconds for the
/// next page or its next rows throws ``StreamStalled`` inside the transaction, which rolls it
/// back and lets go of the writer, and so does a wait of more than that for another process's
/// write lock (`SyncError` `.busy`); the session then stages its pages instead.
///
/// ```swift
/// let live = LiveTransaction.start(store: store, source: "GET /people", patience: 0.1, ...)
/// let page = try await live.write(parsedStream)      // returns once the page's rows are written
/// let outcome = try await live.commit(LiveTransaction.Ending(stale: deletions))
/// ```
package final class LiveTransaction: Sendable {
    /// What the transaction does after the pages, decided once the traversal has ended.
    package struct Ending: Sendable {
        package var stale: [StaleDeletion] = []
        package var tombstones: [Tombstones] = []
        package var records: [ClientCache.Record] = []
    }

    /// One page as the transaction wrote it.
    struct WrittenPage: Sendable {
        var summary: ReaderSummary
        /// The keys of the page's top-level rows, by entity index (tracked entities only).
        var keys: [PrimaryKeys]
        var rowCount: Int
    }

    private enum Message: Sendable {
        case page(ParsedStream, BridgeQueue<WrittenPage>)
        case commit(Ending)
    }

    private let messages = BridgeQueue<Message>(capacity: 1)
    /// How long the transaction waits for the next page or rows; `nil`: as long as it takes.
    let patience: Double?
    private let keyIndexes: [Int]
    private let tracked: [Bool]
    private let task = Locked<Task<WriteOutcome, any Error>?>(nil)
    /// The trace the commit runs under (read in the committing task, which is not the
    /// transaction's): the store publishes the change set as its child.
    private let commitTrace = Locked<WriteTrace?>(nil)
    /// How the transaction ended, once it has.
    private let ending = Locked<(any Error)?>(nil)

    private init(patience: Double?, keyIndexes: [Int], tracked: [Bool]) {
        self.patience = patience.flatMap { $0 < 31_536_000 ? $0 : nil }
        self.keyIndexes = keyIndexes
        self.tracked = tracked
    }

    /// Begins the transaction on `store` (it takes the writer at once: start it when the first
    /// page's rows are there).
    ///
    /// - Parameters:
    ///   - tracked: By entity index, whether a page's top-level keys are collected for it.
    static func start(store: any ReplicaStore, source: String, patience: Double?, busyTimeout: Double?,
                      tracked: [Bool]) -> LiveTransaction {
        let live = LiveTransaction(patience: patience, keyIndexes: store.mapping.maps.map(\.primaryKeyIndex), tracked: tracked)
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

    /// Hands one page's parsed rows to the transaction; returns once they are written.
    ///
    /// - Throws: What writing them threw (``StreamStalled`` after a pause: the transaction rolled
    ///   back), or how the transaction had already ended.
    func write(_ stream: ParsedStream) async throws -> WrittenPage {
        let receipt = BridgeQueue<WrittenPage>(capacity: 1)
        guard messages.push(.page(stream, receipt), bounded: false) else { throw try await endingError() }
        guard let page = try await receipt.next() else { throw try await endingError() }
        return page
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

    /// The transaction has ended with `error`: pages still waiting fail with it.
    private func close(_ error: any Error) {
        ending.withLock { if $0 == nil { $0 = error } }
        messages.finish()
        while case .page(_, let receipt)? = try? messages.pop() { receipt.finish(throwing: error) }
    }

    // MARK: The transaction's side

    /// The trace of the session's commit, once it has begun.
    package var trace: WriteTrace? { commitTrace.withLock { $0 } }

    /// Writes every page handed over with `write` (on the transaction's thread, which blocks
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
            case .page(let stream, let receipt):
                do {
                    var keys = Array(repeating: PrimaryKeys(), count: keyIndexes.count)
                    var rows = 0
                    let summary = try stream.consume(source: source, patience: patience) { batch in
                        batch.collectTopLevelKeys(keyIndexes: keyIndexes, tracked: tracked, into: &keys)
                        rows += batch.count
                        try write(batch)
                    }
                    receipt.push(WrittenPage(summary: summary, keys: keys, rowCount: rows), bounded: false)
                    receipt.finish()
                } catch {
                    receipt.finish(throwing: error)
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
