import Foundation

/// The write driver: every write of every store (an import, a sync, a session's commit, a
/// deletion) becomes one ``WriteJob`` here and runs through the store's one transaction
/// (``StoreBackend/perform(_:)``), with the store's errors mapped in one place.
extension ReplicaStore {
    /// Runs `job` in one transaction of the store.
    ///
    /// - Throws: ``SyncError`` naming the job's source: `.cancelled` when the task was
    ///   cancelled, `.database` with the store's description of a database error; the store is
    ///   then exactly as before.
    package func transact(_ job: WriteJob) async throws -> WriteOutcome {
        do {
            return try await backend.perform(job)
        } catch {
            throw writeError(error, source: job.source)
        }
    }

    /// `error` in the user's terms: a ``SyncError`` (and a stalled stream) as it is, a
    /// cancellation as `.cancelled`, anything else as `.database`, described by the store.
    package func writeError(_ error: any Error, source: String) -> any Error {
        if error is SyncError || error is StreamStalled { return error }
        if Task.isCancelled || error is CancellationError {
            return SyncError(.cancelled, "cancelled; nothing was written", source: source)
        }
        return SyncError(.database, backend.describe(error), source: source, underlying: error)
    }

    /// The index of the entity named `name`.
    ///
    /// - Throws: ``SyncError`` `.unknownEntity`.
    package func entityIndex(_ name: String) throws -> Int {
        guard let index = backend.frontEnd.planner.index(of: name) else {
            throw SyncError(.unknownEntity, "unknown entity '\(name)' (the schema has "
                            + mapping.maps.map(\.entity.name).joined(separator: ", ") + ")")
        }
        return index
    }

    /// Parses one response on its own thread while one transaction writes its rows: for inputs
    /// that are all at hand (a buffer, a local file), so the transaction never waits on a network.
    package func run(_ plan: SyncPlan, source: String, totalBytes: Int64?, options: SyncOptions, channel: ChunkChannel? = nil,
                     next: @escaping () throws -> [UInt8]?) async throws -> SyncResult {
        try await backend.frontEnd.parsing(plan, source: source, totalBytes: totalBytes, options: options, channel: channel,
                                           next: next) { stream in
            if case .data = plan.shape { return try await SyncFrontEnd.awaitData(stream, route: plan.route) }
            return try await self.write(plan, stream: stream, source: source)
        }
    }

    /// Writes a parsed stream's rows in one transaction, deleting the stale rows of the
    /// complete collections it held. With `patience` (a body that streams in), a wait of more
    /// than `patience` seconds for the next rows throws ``StreamStalled``, rolling it back.
    package func write(_ plan: SyncPlan, stream: ParsedStream, source: String, patience: Double? = nil) async throws -> SyncResult {
        var job = WriteJob(source: source)
        job.rows = .stream(stream, patience: patience)
        job.stale = .completeCollections(plan)
        job.tracked = plan.staleEntities
        if plan.collectKeys, let target = plan.targetEntity { job.tracked.insert(target) }
        job.reportedEntity = plan.targetEntity.flatMap { job.tracked.contains($0) ? $0 : nil }
        job.busyTimeout = plan.busyTimeout
        let outcome = try await transact(job)
        let summary = outcome.summary ?? ReaderSummary()
        var seen = outcome.reportedKeys
        // Skipped objects' keys count as seen, as in a session.
        if let target = job.reportedEntity, let kept = outcome.skipped[target] { seen.formUnion(kept) }
        var result = SyncResult(changes: outcome.changes, skipped: summary.skipped, ignoredKeyCount: summary.ignoredKeyCount,
                                objectCount: summary.objectCount, byteCount: summary.byteCount, data: nil, route: plan.route,
                                metadata: summary.skeleton, seenKeys: seen, scope: plan.scope)
        result.ignoredKeys = summary.ignoredKeys(entityNames: mapping.maps.map(\.entity.name))
        result.writeLockDuration = outcome.writeLockDuration
        return result
    }

    /// Writes a body that streams in. Where staging holds no write lock (PostgreSQL), it is
    /// written as it comes. Where it does (SQLite), it is written as it comes while it keeps
    /// coming (``SyncOptions/streamingPatience``); after a longer pause the transaction rolls
    /// back, and the body is staged in a one-page ``SyncSession`` and committed at its end.
    package func importStreaming(_ plan: SyncPlan, source: String, options: SyncOptions,
                                 channel: ChunkChannel) async throws -> SyncResult {
        guard backend.stagingHoldsWriteLock else {
            return try await run(plan, source: source, totalBytes: nil, options: options, channel: channel) {
                try channel.receive()
            }
        }
        let session = SyncSession(store: self, plan: plan, options: options, source: source, staging: true)
        var replay: ChunkLog?
        if case .data = plan.shape {
            // Nothing to write: parsed whole, as a session page.
        } else if options.streamingPatience > 0 {
            let log = ChunkLog(memoryBudget: max(0, options.stagingMemory))
            let patience = options.streamingPatience
            // The keys of the body's objects, as the session would report them if it staged.
            var keyed = plan
            keyed.collectKeys = true
            let eager = keyed
            do {
                return try await backend.frontEnd.parsing(plan, source: source, totalBytes: nil, options: options) {
                    guard let chunk = try channel.receive() else { return nil }
                    try log.append(chunk)
                    return chunk
                } consume: { stream in
                    try await self.write(eager, stream: stream, source: source, patience: patience)
                }
            } catch is StreamStalled {
                // Rolled back, and the parsing thread has ended: stage what it read, then the rest.
                replay = log
            }
        }
        let replayed = replay
        _ = try await session.stage(source: source, channel: channel) {
            if let chunk = try replayed?.replay() { return chunk }
            return try channel.receive()
        }
        var result = try await session.commit(complete: true)
        result.stagedAfterPause = replayed != nil
        return result
    }
}
