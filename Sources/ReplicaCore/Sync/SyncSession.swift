import Foundation

/// One page of a sync session, parsed and staged (not yet in the store).
public struct StagedPage: Sendable {
    /// The keys of the page's own objects (of the route's entity), skipped ones included:
    /// what the page vouches for. Record them to ``SyncSession/vouch(for:)`` when the page
    /// later answers 304 Not Modified.
    public var keys: PrimaryKeys
    /// The response without its streamed collections: the envelope's metadata, such as
    /// `{"meta": {"next_cursor": "abc"}, "data": []}`.
    public var metadata: JSONValue?
    /// For DATA routes, the parsed response.
    public var data: JSONValue?
    /// Objects read (including nested and skipped ones).
    public var objectCount: Int
    /// Objects skipped under ``InvalidObjectPolicy/skip``.
    public var skipped: [SkippedObject]
    /// JSON keys that matched no attribute or relationship.
    public var ignoredKeyCount: Int
    /// Bytes of JSON read.
    public var byteCount: Int64

    package init(keys: PrimaryKeys, metadata: JSONValue?, data: JSONValue?, objectCount: Int, skipped: [SkippedObject],
                 ignoredKeyCount: Int, byteCount: Int64) {
        self.keys = keys
        self.metadata = metadata
        self.data = data
        self.objectCount = objectCount
        self.skipped = skipped
        self.ignoredKeyCount = ignoredKeyCount
        self.byteCount = byteCount
    }
}

/// One logical sync of a path: every page of a collection commits together, or nothing does.
///
/// Pages are parsed as they stream in and written, as a file import writes, into one
/// transaction that stays open from the first page's rows to ``commit(complete:)``, for as long
/// as the pages keep coming: readers see none of it until the commit. A page's stage call
/// returns once the page is parsed; the transaction writes its last rows while the next page is
/// parsed, and an error writing them is thrown by the next stage call or the commit. When the next page or
/// its next rows keep the writer waiting longer than ``SyncOptions/streamingPatience`` (0.1 s by
/// default), that transaction rolls back, so a slow or stalled response never holds the store's
/// write lock: other syncs commit and readers read meanwhile (and when another process holds
/// the write lock for longer than that, the transaction does not wait for it). The session then stages every
/// page outside the database (in memory, spilling to an unlinked scratch file past
/// ``SyncOptions/stagingMemory``; the pages already written are parsed again from their bytes,
/// which it keeps), and ``commit(complete:)`` takes the writer once, for one short transaction
/// that upserts the staged rows. A `streamingPatience` of 0 stages from the start, and so does
/// an in-memory SQLite store (its reads wait for its writer, and a traversal reads between
/// pages). Either way
/// the commit deletes stale rows (only after a complete traversal), writes the client's
/// records and publishes one change set, and ``SyncResult/stagedAfterPause`` says which way it
/// went. Dropping or ``discard()``-ing a session leaves the store exactly as it was, and lets
/// go of the writer at once.
///
/// Sessions work the same on every store (``ReplicaStore/session(_:_:options:)``): on SQLite
/// the pages and the commit are one GRDB write transaction, on PostgreSQL one transaction of
/// `COPY` into temporary tables as the pages come (which locks nothing, so it waits as long as
/// they take) and one merge per entity at the commit.
///
/// ```swift
/// let session = try store.session(.get, "/people", options: SyncOptions())
/// for page in pages {
///     let staged = try await session.stage(chunks: page.body, source: page.url)
///     remember(page.url, staged.keys)
/// }
/// session.vouch(for: keysOfAnUnchangedPage)      // a page that answered 304
/// let result = try await session.commit(complete: true)
/// ```
///
/// A session is used by one task at a time: a call made while another is under way throws.
/// Its lifecycle, page facts and way of writing are one ``State`` value in a ``Locked``; the
/// state admits one call at a time, so the staged rows are only touched by the call under way,
/// or dropped once the session has ended.
public final class SyncSession: Sendable {
    /// The store the session commits into.
    public let store: any ReplicaStore
    let plan: SyncPlan
    let options: SyncOptions
    /// The description of the synced path, for errors.
    let source: String
    private let state: Locked<State>
    /// The staged rows: handed to the call under way (the state admits one at a time).
    private let staged: UncheckedBox<StagedRows>
    /// The body bytes taken in so far, against ``SyncOptions/maxStagingBytes``.
    let intake: StagingIntake
    /// The open transaction the pages are written into, while they are (see ``State/writesLive``:
    /// until a pause longer than ``SyncOptions/streamingPatience`` rolls it back, after which
    /// every page is staged).
    private let live = Locked<LiveTransaction?>(nil)

    /// - Parameter staging: Stage every page (no open transaction), as a body that already paused does.
    package init(store: any ReplicaStore, plan: SyncPlan, options: SyncOptions, source: String, staging: Bool = false) {
        self.store = store
        self.plan = plan
        self.options = options
        self.source = source
        self.staged = UncheckedBox(StagedRows(memoryBudget: max(0, options.stagingMemory)))
        self.intake = StagingIntake(limit: options.maxStagingBytes)
        var isData = false
        if case .data = plan.shape { isData = true }
        let writesLive = !staging && !isData && options.streamingPatience > 0 && store.backend.readsBesideWrites
        self.state = Locked(State(plan: plan, entityCount: store.mapping.maps.count, source: source, writesLive: writesLive))
    }

    deinit {
        live.withLock { $0 }?.abort()
    }

    /// The number of rows taken in so far (by the pages whose stage call has returned): staged,
    /// or handed to the session's open transaction.
    public var stagedRowCount: Int { withState { $0.stagedRowCount } }

    /// Parses one page arriving as byte chunks (an HTTP body) and stages its rows.
    ///
    /// ```swift
    /// let page = try await session.stage(chunks: response.body, source: "GET \(url)")
    /// ```
    ///
    /// - Parameters:
    ///   - chunks: The page's body.
    ///   - source: What the page is (its URL), for errors; the session's path by default.
    /// - Returns: The page's keys, metadata and counts.
    /// - Throws: ``SyncError`` naming `source` (malformed JSON at byte N, an invalid object under
    ///   the `fail` policy, cancellation), or the sequence's own error. The session is then
    ///   discarded: the store is unchanged.
    public func stage<Chunks: AsyncSequence & Sendable>(chunks: Chunks, source: String? = nil) async throws -> StagedPage
    where Chunks.Element == [UInt8] {
        let channel = ChunkChannel()
        let feeder = channel.feed(from: chunks)
        defer { feeder.cancel() }
        return try await withTaskCancellationHandler {
            try await stage(source: source ?? self.source, channel: channel) { try channel.receive() }
        } onCancel: {
            channel.finish(throwing: CancellationError())
        }
    }

    /// Parses one page held in memory and stages its rows.
    ///
    /// ```swift
    /// let page = try await session.stage(body: Data(json.utf8))
    /// ```
    ///
    /// - Throws: ``SyncError``; the session is then discarded.
    public func stage(body: Data, source: String? = nil) async throws -> StagedPage {
        let chunkSize = max(1, options.chunkSize)
        var offset = 0
        return try await stage(source: source ?? self.source, channel: nil) {
            guard offset < body.count else { return nil }
            let end = min(body.count, offset + chunkSize)
            defer { offset = end }
            return [UInt8](body[body.startIndex + offset ..< body.startIndex + end])
        }
    }

    /// Counts `keys` (of the route's entity) as seen: the objects of a page that answered
    /// 304 Not Modified, as recorded when it last answered 200. Their rows stay.
    public func vouch(for keys: PrimaryKeys) {
        withState { $0.vouch(for: keys) }
    }

    /// Deletes rows of the route's entity at commit, in the same transaction as the staged rows:
    /// the tombstones of an incremental sync (keys the API says were deleted). Only rows inside
    /// the route's scope go; a key a staged page also lists stays (deleted, then created again).
    ///
    /// ```swift
    /// let session = try store.session(.get, "/people")
    /// _ = try await session.stage(body: Data(#"[{"id": 3, "name": "Ada"}]"#.utf8))
    /// try session.delete(PrimaryKeys([.integer(7), .integer(9)]))
    /// let result = try await session.commit(complete: false)   // 3 upserted, 7 and 9 deleted
    /// ```
    ///
    /// - Parameter keys: The deleted keys (a composite key as ``AttributeValue/compositeKey(_:)``).
    /// - Throws: ``SyncError`` (`.input`) when the session has ended or a call is under way.
    public func delete(_ keys: PrimaryKeys) throws {
        try withState { try $0.addTombstones(keys) }
    }

    /// Commits every staged page in one write transaction and publishes one change set.
    ///
    /// ```swift
    /// let result = try await session.commit(complete: reachedLastPage)
    /// ```
    ///
    /// - Parameter complete: `true` when the whole collection was traversed (last page
    ///   reached, every page answered). Only then are rows the pages did not list deleted, as
    ///   the route's stale policy says. A sync cut short (a page limit) passes `false`: its
    ///   rows are upserted and nothing is deleted.
    /// - Returns: What changed, with the counts of every staged page.
    /// - Throws: ``SyncError`` (a constraint violation naming the row, cancellation); the
    ///   store is then exactly as before.
    public func commit(complete: Bool = true) async throws -> SyncResult {
        try await commit(complete: complete, records: [])
    }

    /// Ends the session without writing anything (dropping it does the same).
    public func discard() {
        // During a call, that call drops what it staged when it ends.
        apply(withState { $0.discard() })
    }

    // MARK: Internals

    /// Runs `body` on the state, under the lock.
    private func withState<T>(_ body: (inout State) throws -> T) rethrows -> T {
        try state.withLock(body)
    }

    /// Does what a transition asks.
    private func apply(_ effect: State.Effect) {
        switch effect {
        case .keepStagedRows: break
        case .dropStagedRows:
            staged.value.discard()
            live.withLock { $0 }?.abort()
            // Dropped here, outside the lock: their scratch files close.
            _ = withState { $0.dropLoggedPages() }
        }
    }

    /// Stages one page read from `next` (`channel`, when given, is finished on cancellation).
    func stage(source: String, channel: ChunkChannel?, next: @escaping () throws -> [UInt8]?) async throws -> StagedPage {
        try withState { try $0.beginStage() }
        let page: State.Page
        do {
            page = try await stagePage(source: source, channel: channel, next: Self.counting(next, into: intake, source: source))
        } catch {
            apply(withState { $0.fail() })
            throw Self.surfaced(error)
        }
        let (keys, effect) = withState { $0.endStage(page) }
        apply(effect)
        let isData = withState { $0.isData }
        return StagedPage(keys: keys, metadata: isData ? nil : page.skeleton, data: isData ? page.skeleton : nil,
                          objectCount: page.statistics.objectCount, skipped: page.statistics.skipped,
                          ignoredKeyCount: page.statistics.ignoredKeyCount, byteCount: page.byteCount)
    }

    /// Parses one page and writes its rows into the session's open transaction while it can,
    /// else stages them.
    private func stagePage(source: String, channel: ChunkChannel?, next: @escaping () throws -> [UInt8]?) async throws -> State.Page {
        let (writesLive, loggedBytes, claimsBefore) = withState { ($0.writesLive, $0.loggedMemoryBytes, $0.claims) }
        guard writesLive else { return try await stageRows(source: source, channel: channel, next: next) }
        // The page's bytes are kept: after a pause, the pages written so far are staged from them.
        // The session's pages share one memory budget; past it, they go to scratch files.
        let log = ChunkLog(memoryBudget: max(0, options.stagingMemory - loggedBytes))
        let keepsLog = store.backend.stagingHoldsWriteLock
        // What reading the page threw (the maximum staging size, the log's scratch file, the
        // transport): the chunk it was reading left the body without reaching the log.
        let readFailure = Locked<(any Error)?>(nil)
        do {
            let page = try await writeLive(source: source) {
                do {
                    guard let chunk = try next() else { return nil }
                    if keepsLog { try log.append(chunk) }
                    return chunk
                } catch {
                    readFailure.withLock { $0 = $0 ?? error }
                    throw error
                }
            }
            // The parsing thread has ended: the log is handed over to the session.
            if keepsLog { withState { $0.log(LoggedPage(log: UncheckedBox(log), claimsBefore: claimsBefore, source: source)) } }
            return page
        } catch let error where Self.letsGoOfWriter(error) {
            // Rolled back (or never begun: another process holds the write lock), and the parsing
            // thread has ended. Had reading failed, the page's replay would miss what that read took
            // from the body (read as an empty or cut-short page): the page fails with that error.
            if let failure = readFailure.withLock({ $0 }) { throw failure }
            // Else stage the earlier pages, then this one (what it read, then the rest).
            try await stageLogged(afterPause: error is StreamStalled)
            return try await stageRows(source: source, channel: channel) {
                if let chunk = try log.replay() { return chunk }
                return try next()
            }
        }
    }

    /// Parses one page and hands its rows to the session's open transaction (starting the
    /// transaction once the first page's rows are there). Returns once the page is parsed, while
    /// the transaction may still be writing its last rows: the next page is parsed meanwhile.
    private func writeLive(source: String, next: @escaping () throws -> [UInt8]?) async throws -> State.Page {
        let frontEnd = store.backend.frontEnd
        let (tracked, claims) = withState { ($0.tracked, $0.claims) }
        let store = self.store
        let plan = self.plan
        let patience = store.backend.stagingHoldsWriteLock ? options.streamingPatience : nil
        let live = self.live
        let keyIndexes = frontEnd.mapping.maps.map(\.primaryKeyIndex)
        // The page's keys and rows, counted on the parsing thread as it hands each batch over.
        let counted = UncheckedBox(KeysBox(count: keyIndexes.count))
        // Not given the channel: after a pause it goes on feeding the staged page.
        let summary = try await frontEnd.parsing(plan, source: source, totalBytes: nil, options: options,
                                                 priorClaims: claims, next: next, observe: { batch in
            batch.collectTopLevelKeys(keyIndexes: keyIndexes, tracked: tracked, into: &counted.value.keys)
            counted.value.rowCount += batch.count
        }) { stream in
            let transaction: LiveTransaction
            if let open = live.withLock({ $0 }) {
                transaction = open
            } else {
                await stream.awaitFirstMessage()
                transaction = LiveTransaction.start(store: store, source: self.source, patience: patience,
                                                    busyTimeout: plan.busyTimeout)
                live.withLock { $0 = transaction }
            }
            try await transaction.hand(stream)
            return try await transaction.parsed(stream, source: source)
        }
        return State.Page(keys: counted.value.keys, skippedKeys: summary.statistics.skippedKeys(planner: frontEnd.planner),
                          completeCollections: summary.completeCollections, statistics: summary.statistics,
                          byteCount: summary.byteCount, skeleton: summary.skeleton, rowCount: counted.value.rowCount)
    }

    /// Whether the open transaction ended so that the session stages instead: it rolled back after
    /// a pause, or another process's write lock kept it from beginning.
    private static func letsGoOfWriter(_ error: any Error) -> Bool {
        error is StreamStalled || (error as? SyncError)?.code == .busy
    }

    /// The open transaction rolled back (after a pause, or on another process's write lock):
    /// stages the pages it had written, from their bytes, and stages every page from now on.
    private func stageLogged(afterPause: Bool) async throws {
        let pages = withState { $0.stopWritingLive(afterPause: afterPause) }
        live.withLock { $0 = nil }
        let frontEnd = store.backend.frontEnd
        let staged = self.staged
        for page in pages {
            let log = page.log.value
            _ = try await frontEnd.parsing(plan, source: page.source, totalBytes: nil, options: options,
                                           priorClaims: page.claimsBefore, next: { try log.replay() }) { stream in
                try await stream.drain { batch in try staged.value.append(batch) }
            }
        }
    }

    /// Parses one page and appends its rows to the staged rows (owned by this call while it runs).
    private func stageRows(source: String, channel: ChunkChannel?, next: @escaping () throws -> [UInt8]?) async throws -> State.Page {
        let plan = self.plan
        // Only this call's consumer touches the staged rows until it returns.
        let staged = self.staged
        let rowsBefore = staged.value.rowCount
        let (tracked, claims) = withState { ($0.tracked, $0.claims) }
        let frontEnd = store.backend.frontEnd
        let keyIndexes = frontEnd.mapping.maps.map(\.primaryKeyIndex)
        // The keys of this page, by entity: the consumer fills them on its background thread.
        let pageKeys = UncheckedBox(KeysBox(count: keyIndexes.count))
        let summary = try await frontEnd.parsing(plan, source: source, totalBytes: nil, options: options, channel: channel,
                                               priorClaims: claims, next: next) { stream in
            try await stream.drain { batch in
                batch.collectTopLevelKeys(keyIndexes: keyIndexes, tracked: tracked, into: &pageKeys.value.keys)
                try staged.value.append(batch)
            }
        }
        return State.Page(keys: pageKeys.value.keys, skippedKeys: summary.statistics.skippedKeys(planner: frontEnd.planner),
                          completeCollections: summary.completeCollections, statistics: summary.statistics,
                          byteCount: summary.byteCount, skeleton: summary.skeleton, rowCount: staged.value.rowCount - rowsBefore)
    }

    /// Commits, writing the client's `records` (validators, page keys) and what `outbox` says
    /// (a mutation the server confirmed) in the same transaction.
    package func commit(complete: Bool, records: [ClientCache.Record], outbox: OutboxWork = OutboxWork()) async throws -> SyncResult {
        let facts = try withState { try $0.beginCommit(complete: complete) }
        do {
            let result = try await merge(facts, records: records, outbox: outbox)
            apply(withState { $0.endCommit() })
            return result
        } catch {
            apply(withState { $0.fail() })
            throw Self.surfaced(store.writeError(error, source: source))
        }
    }

    private func merge(_ facts: State.CommitPlan, records: [ClientCache.Record], outbox: OutboxWork) async throws -> SyncResult {
        let plan = self.plan
        let statistics = facts.statistics
        var result = SyncResult(changes: ChangeSet(), skipped: statistics.skipped,
                                ignoredKeyCount: statistics.ignoredKeyCount, objectCount: statistics.objectCount,
                                byteCount: facts.byteCount, data: facts.data, route: plan.route, metadata: facts.metadata,
                                seenKeys: facts.seenKeys, scope: plan.scope)
        result.ignoredKeys = statistics.ignored.keys(entityNames: store.mapping.maps.map(\.entity.name))
        // Every key this session saw counts as seen; its top-level keys are among them.
        var ending = LiveTransaction.Ending()
        ending.stale = facts.deleting.map { entity in
            StaleDeletion(entity: entity, scope: entity == plan.targetEntity ? plan.scope : nil, keeping: facts.seen[entity],
                          includesWritten: true, allWritten: facts.seenAllStaged)
        }
        ending.records = records
        ending.outbox = outbox
        if let target = plan.targetEntity, !facts.tombstones.isEmpty {
            ending.tombstones = [Tombstones(entity: target, scope: plan.scope, keys: facts.tombstones)]
        }
        if withState({ $0.writesLive }), let transaction = live.withLock({ $0 }) {
            do {
                let outcome = try await transaction.commit(ending)
                result.changes = outcome.changes
                result.writeLockDuration = outcome.writeLockDuration
                return result
            } catch let error where Self.letsGoOfWriter(error) {
                // The pause came after the last page: stage the pages, then merge them.
                try await stageLogged(afterPause: error is StreamStalled)
            }
        }
        result.stagedAfterPause = withState { $0.stagedAfterPause }
        // Nothing staged and nothing to delete: the store stays as it is.
        if staged.value.isEmpty && ending.stale.isEmpty && records.isEmpty && ending.tombstones.isEmpty && outbox.isEmpty {
            return result
        }
        var job = WriteJob(source: source)
        job.rows = .staged(staged)
        job.end(with: ending)
        job.busyTimeout = plan.busyTimeout
        let outcome = try await store.transact(job)
        result.changes = outcome.changes
        result.writeLockDuration = outcome.writeLockDuration
        return result
    }
}

/// A page written into a session's open transaction: its bytes, to parse it again should the
/// transaction roll back after a pause, with the claims its parsing started from.
struct LoggedPage: Sendable {
    /// Handed from the parsing thread that wrote it to the call that replays it.
    var log: UncheckedBox<ChunkLog>
    var claimsBefore: [ClaimKey: ChildClaimRecord]
    var source: String
}

/// The keys (and rows) of one page, collected by one thread while the page is parsed or staged,
/// and read once that thread has ended.
final class KeysBox {
    var keys: [PrimaryKeys]
    var rowCount = 0
    init(count: Int) { keys = Array(repeating: PrimaryKeys(), count: count) }
}
