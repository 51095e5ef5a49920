/// One write transaction of a store, as the write driver (``WriteJob/run(in:frontEnd:)``) uses it:
/// the few things a store does its own way. The driver decides everything else once, for every
/// store: the order of the steps, which stale rows go (``WriteJob/deletions(after:frontEnd:)``),
/// how a live session's ending completes the job, what the outcome reports.
///
/// SQLite's transaction is its row writer on GRDB's single writer queue (each step sent there
/// through a ``ThreadPump``); PostgreSQL's is a write session on one connection (`COPY` into
/// stage tables, one merge per entity). The store opens and commits the transaction around the
/// driver, and publishes the change set after the commit.
///
/// ```swift
/// let outcome = try await job.run(in: transaction, frontEnd: frontEnd)   // inside BEGIN … COMMIT
/// ```
package protocol StoreTransaction {
    /// Writes (or stages) the rows of a parsed stream as they come; `patience` bounds a wait for
    /// the next rows of a body that streams in.
    ///
    /// - Returns: What the reader saw: complete collections, skipped objects, counts.
    func write(_ stream: ParsedStream, patience: Double?, source: String) async throws -> ReaderSummary

    /// Writes (or stages) rows a session staged outside the store.
    func write(_ staged: UncheckedBox<StagedRows>) async throws

    /// Writes (or stages) a live session's pages as they are parsed, until the session ends.
    ///
    /// - Returns: How it ended: its stale deletions, tombstones and records.
    func write(_ live: LiveTransaction, source: String) async throws -> LiveTransaction.Ending

    /// Makes the rows written so far final (PostgreSQL merges its stage tables; SQLite wrote them
    /// already) and deletes each deletion's stale rows, keeping the keys written and those it names.
    func settle(_ deletions: [StaleDeletion]) async throws

    /// Deletes one row (and what cascades from it).
    func delete(entity: Int, key: AttributeValue) async throws

    /// Deletes the rows a delta's tombstones name, inside their scope.
    func delete(_ tombstones: Tombstones) async throws

    /// Writes the client's page records.
    func write(_ records: [ClientCache.Record]) async throws

    /// The keys written of `entity`'s rows (the top-level objects of a response).
    func writtenKeys(of entity: Int) async throws -> PrimaryKeys

    /// The change set of everything the transaction did, the outbox's rebase folded in
    /// (``RebaseChanges/fold(into:)``), numbered (and, where other processes listen, announced,
    /// which PostgreSQL delivers only once the transaction commits).
    func changeSet(folding rebase: RebaseChanges) async throws -> ChangeSet

    /// What the transaction changed so far, by entity name: the rows whose pending mutations the
    /// outbox applies again.
    func changesSoFar() async throws -> [String: EntityChanges]

    /// The store's SQL, for the statements the outbox runs.
    var dialect: SQLDialect { get }

    /// Runs one statement (with `?` placeholders) inside the transaction.
    func execute(_ sql: String, _ arguments: [AttributeValue]) async throws

    /// Runs one statement (with `?` placeholders) inside the transaction and returns its rows,
    /// each column read as `types` says (a statement with `RETURNING` included).
    func select(_ sql: String, _ arguments: [AttributeValue], types: [AttributeType]) async throws -> [[AttributeValue]]
}

extension WriteJob {
    /// The one write driver: carries the job out in `transaction`, the same way on every store.
    ///
    /// Rows first (a parsed stream, staged rows, or a live session's pages, whose ending then
    /// says which stale rows, tombstones and records complete the job), then the stale rows of
    /// the complete collections (a skipped object's key still counts as seen), the deleted row,
    /// the tombstones, the client's records, the outbox's pending mutations applied again on top
    /// (``OutboxPass``), and the change set.
    ///
    /// - Throws: What the transaction threw, or ``SyncError`` `.cancelled` for a task cancelled
    ///   before anything was written; the store rolls the transaction back then.
    package func run(in transaction: some StoreTransaction, frontEnd: SyncFrontEnd) async throws -> WriteOutcome {
        if Task.isCancelled { throw SyncError(.cancelled, "cancelled; nothing was written", source: source) }
        var job = self
        var summary: ReaderSummary?
        switch job.rows {
        case .none: break
        case .stream(let stream, let patience): summary = try await transaction.write(stream, patience: patience, source: job.source)
        case .staged(let staged): try await transaction.write(staged)
        case .live(let live): job.end(with: try await transaction.write(live, source: job.source))
        }
        let (deletions, skipped) = job.deletions(after: summary, frontEnd: frontEnd)
        // What the sender learned is recorded, and what is still pending read, before stale rows go:
        // a pending mutation's row is never stale.
        let outbox = try await OutboxPass.begin(job.outbox, in: transaction, mapping: frontEnd.mapping)
        try await transaction.settle(outbox.keeping(deletions, in: transaction))
        if let row = job.deletedRow { try await transaction.delete(entity: row.entity, key: row.key) }
        for tombstones in job.tombstones where !tombstones.keys.isEmpty {
            try await transaction.delete(tombstones)
        }
        try await transaction.write(job.records)
        // The server's rows are written: the pending mutations go on top again.
        let rebased = try await outbox.finish(in: transaction)
        let changes = try await transaction.changeSet(folding: rebased.changes)
        var reported = PrimaryKeys()
        if let entity = job.reportedEntity { reported = try await transaction.writtenKeys(of: entity) }
        var outcome = WriteOutcome(changes: changes, summary: summary, skipped: skipped, reportedKeys: reported, writeLockDuration: nil)
        outcome.queued = rebased.queued
        outcome.takenBack = rebased.takenBack
        return outcome
    }
}
