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
}

/// One logical sync of a path: every page of a collection commits together, or nothing does.
///
/// Pages are parsed as they stream in and staged outside the database (in memory, spilling
/// to an unlinked scratch file past ``SyncOptions/stagingMemory``), so a slow or stalled response never holds the
/// store's write lock: other syncs commit and readers read meanwhile. ``commit(complete:)``
/// then takes the writer once, for one short transaction: it upserts the staged rows,
/// deletes stale rows (only after a complete traversal) and publishes one change set.
/// Dropping or ``discard()``-ing a session leaves the store exactly as it was.
///
/// Sessions work the same on every store (``ReplicaStore/session(_:_:options:)``): on SQLite
/// the commit is one GRDB write transaction, on PostgreSQL one transaction of `COPY` into
/// temporary tables and one merge per entity.
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
/// `@unchecked Sendable`: its state is read and written under `lock`, and `busy` keeps
/// calls from overlapping, so the staged rows are only touched by one call at a time.
public final class SyncSession: @unchecked Sendable {
    /// The store the session commits into.
    public let store: any ReplicaStore
    let plan: SyncPlan
    let options: SyncOptions
    /// The description of the synced path, for errors.
    let source: String
    private let lock = NSLock()
    private var busy = false
    private var finished = false
    private let staged: StagedRows
    /// Keys that count as seen, by entity index: staged pages' own objects, skipped objects, vouched pages.
    private var seen: [PrimaryKeys]
    /// Whether every seen key names a row staged by this session (nothing vouched for, no skipped keys).
    private var seenAllStaged = true
    /// Entities whose collection every staged page held as a complete array.
    private var completeCollections: Set<Int>?
    private var statistics = PlanStatistics()
    private var byteCount: Int64 = 0
    private var metadata: JSONValue?
    private var data: JSONValue?
    private let tracked: [Bool]

    init(store: any ReplicaStore, plan: SyncPlan, options: SyncOptions, source: String) {
        self.store = store
        self.plan = plan
        self.options = options
        self.source = source
        self.staged = StagedRows(memoryBudget: max(0, options.stagingMemory))
        let count = store.mapping.maps.count
        var tracked = plan.staleEntities
        if let target = plan.targetEntity { tracked.insert(target) }
        self.tracked = (0..<count).map { tracked.contains($0) }
        self.seen = Array(repeating: PrimaryKeys(), count: count)
    }

    /// The number of rows staged so far.
    public var stagedRowCount: Int { withState { staged.rowCount } }

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
        guard let target = plan.targetEntity else { return }
        lock.lock()
        seen[target].formUnion(keys)
        if !keys.isEmpty { seenAllStaged = false }
        // An unchanged page of the collection is a complete page of it, as when it was staged.
        if completeCollections == nil { completeCollections = [target] }
        lock.unlock()
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
        lock.lock()
        finished = true
        let busy = self.busy
        lock.unlock()
        // A call under way discards what it staged when it sees `finished`.
        if !busy { staged.discard() }
    }

    // MARK: Internals

    /// Marks a call under way; throws when the session has ended or another call is under way.
    private func begin() throws {
        lock.lock()
        defer { lock.unlock() }
        if finished { throw SyncError(.input, "this sync session has ended (committed, failed or discarded)", source: source) }
        if busy { throw SyncError(.input, "a sync session takes one call at a time", source: source) }
        busy = true
    }

    private func end(failed: Bool) {
        lock.lock()
        busy = false
        if failed { finished = true }
        let drop = finished
        lock.unlock()
        if drop { staged.discard() }
    }

    private func withState<T>(_ body: () -> T) -> T {
        lock.withLock(body)
    }

    /// Stages one page read from `next` (`channel`, when given, is finished on cancellation).
    func stage(source: String, channel: ChunkChannel?, next: @escaping () throws -> [UInt8]?) async throws -> StagedPage {
        try begin()
        do {
            let page = try await stagePage(source: source, channel: channel, next: next)
            end(failed: false)
            return page
        } catch {
            end(failed: true)
            throw error
        }
    }

    private func stagePage(source: String, channel: ChunkChannel?, next: @escaping () throws -> [UInt8]?) async throws -> StagedPage {
        let plan = self.plan
        // Only this call's consumer touches the staged rows until it returns.
        let staged = UncheckedBox(self.staged)
        let tracked = self.tracked
        let frontEnd = store.backend.frontEnd
        let keyIndexes = frontEnd.mapping.maps.map(\.primaryKeyIndex)
        let count = keyIndexes.count
        // The keys of this page, by entity: the consumer fills them on its background thread.
        let pageKeys = UncheckedBox(KeysBox(count: count))
        let summary = try await frontEnd.parsing(plan, source: source, totalBytes: nil, options: options, channel: channel,
                                               next: next) { stream in
            try await stream.drain { batch in
                batch.collectTopLevelKeys(keyIndexes: keyIndexes, tracked: tracked, into: &pageKeys.value.keys)
                try staged.value.append(batch)
            }
        }
        var keys = pageKeys.value.keys
        let skippedKeys = summary.statistics.skippedKeys(planner: frontEnd.planner)
        for (entity, kept) in skippedKeys where tracked[entity] { keys[entity].formUnion(kept) }
        let isData: Bool
        if case .data = plan.shape { isData = true } else { isData = false }
        withState {
            for entity in 0..<count where tracked[entity] { seen[entity].formUnion(keys[entity]) }
            if !skippedKeys.isEmpty { seenAllStaged = false }
            if case .data = plan.shape {
                completeCollections = []
            } else {
                completeCollections = completeCollections.map { $0.intersection(summary.completeCollections) }
                    ?? summary.completeCollections
        }
        statistics.objectCount += summary.statistics.objectCount
        statistics.ignored.merge(summary.statistics.ignored)
        statistics.skipped += summary.statistics.skipped
        byteCount += summary.byteCount
        if isData { data = summary.skeleton } else if metadata == nil { metadata = summary.skeleton }
        }
        return StagedPage(keys: plan.targetEntity.map { keys[$0] } ?? PrimaryKeys(),
                          metadata: isData ? nil : summary.skeleton, data: isData ? summary.skeleton : nil,
                          objectCount: summary.statistics.objectCount, skipped: summary.statistics.skipped,
                          ignoredKeyCount: summary.statistics.ignoredKeyCount, byteCount: summary.byteCount)
    }

    /// Commits, writing the client's `records` (validators, page keys) in the same transaction.
    func commit(complete: Bool, records: [ClientCache.Record]) async throws -> SyncResult {
        try begin()
        do {
            let result = try await merge(complete: complete, records: records)
            withState { finished = true }
            end(failed: false)
            return result
        } catch {
            end(failed: true)
            throw store.writeError(error, source: source)
        }
    }

    private func merge(complete: Bool, records: [ClientCache.Record]) async throws -> SyncResult {
        let (seen, seenAllStaged, completeCollections, statistics, byteCount, metadata, data) = withState {
            (self.seen, self.seenAllStaged, self.completeCollections ?? [], self.statistics, self.byteCount,
             self.metadata, self.data)
        }
        let plan = self.plan
        let seenKeys = plan.targetEntity.map { seen[$0] } ?? PrimaryKeys()
        var result = SyncResult(changes: ChangeSet(), skipped: statistics.skipped,
                                ignoredKeyCount: statistics.ignoredKeyCount, objectCount: statistics.objectCount,
                                byteCount: byteCount, data: data, route: plan.route, metadata: metadata,
                                seenKeys: seenKeys, scope: plan.scope)
        result.ignoredKeys = statistics.ignored.keys(entityNames: store.mapping.maps.map(\.entity.name))
        let deleting = complete ? completeCollections.intersection(plan.staleEntities).sorted() : []
        // Nothing staged and nothing to delete: the store stays as it is.
        if staged.isEmpty && deleting.isEmpty && records.isEmpty { return result }
        // Every key this session saw counts as seen; its staged top-level keys are among them.
        var job = WriteJob(source: source)
        job.rows = .staged(staged)
        job.stale = .fixed(deleting.map { entity in
            StaleDeletion(entity: entity, scope: entity == plan.targetEntity ? plan.scope : nil, keeping: seen[entity],
                          includesWritten: true, allWritten: seenAllStaged)
        })
        job.records = records
        let outcome = try await store.transact(job)
        result.changes = outcome.changes
        result.writeLockDuration = outcome.writeLockDuration
        return result
    }
}

/// The keys one page's consumer collects; only that consumer's thread touches it while the page is staged.
final class KeysBox {
    var keys: [PrimaryKeys]
    init(count: Int) { keys = Array(repeating: PrimaryKeys(), count: count) }
}
