extension SyncSession {
    /// A session's lifecycle, what its pages taught it and how they reach the store, as a value
    /// that only its transition functions change: no I/O here. ``SyncSession`` parses, stages and writes, and applies
    /// these transitions under its lock, doing the ``Effect`` each returns.
    ///
    /// The phases: ``Phase/idle`` takes one call; ``Phase/staging`` and ``Phase/committing``
    /// hold the session for the call under way (another call throws);
    /// ``Phase/discarding(_:)`` is a session discarded during a call, which ends it when that
    /// call ends; ``Phase/finished(_:)`` takes no call. A page staged returns to idle; a commit, a
    /// failure or a discard finishes the session and drops the staged rows.
    ///
    /// ```swift
    /// var state = SyncSession.State(entityCount: 1, targetEntity: 0, staleEntities: [0], isData: false, source: "GET /people")
    /// try state.beginStage()
    /// _ = state.endStage(SyncSession.State.Page(keys: [PrimaryKeys([.integer(1)])], completeCollections: [0], rowCount: 1))
    /// let commit = try state.beginCommit(complete: true)   // commit.deleting == [0]
    /// ```
    struct State: Sendable {
        /// A call that holds the session while it runs.
        enum Call: Sendable, Hashable {
            case stage
            case commit
        }

        /// How a session ended.
        enum Ending: Sendable, Hashable {
            case committed
            case failed
            case discarded
        }

        /// Where a session is in its life.
        enum Phase: Sendable, Hashable {
            /// No call under way: a page may be staged, or the session committed or discarded.
            case idle
            /// A page is being parsed and staged.
            case staging
            /// The staged rows are being written.
            case committing
            /// Discarded while a call was under way: the session ends when that call ends.
            case discarding(Call)
            /// Ended: every call throws.
            case finished(Ending)
        }

        /// What the session does after a transition, besides keeping the new state.
        enum Effect: Sendable, Hashable {
            /// The staged rows stay (the session is live, or the call under way still owns them).
            case keepStagedRows
            /// The session has ended: drop its staged rows.
            case dropStagedRows
        }

        /// How the pages reach the store.
        enum Writing: Sendable {
            /// Into the session's open transaction as they are parsed, with the bytes of the pages
            /// written so far (to stage them should the transaction roll back after a pause).
            case live([LoggedPage])
            /// Staged outside the database; `afterPause` when the open transaction rolled back
            /// after a pause (``SyncResult/stagedAfterPause``).
            case staging(afterPause: Bool)
        }

        /// What one parsed and staged page adds to the session.
        struct Page: Sendable {
            /// The keys of the page's top-level objects, by entity index (tracked entities).
            var keys: [PrimaryKeys]
            /// The keys of objects skipped under ``InvalidObjectPolicy/skip``, by entity index.
            var skippedKeys: [Int: PrimaryKeys] = [:]
            /// Entities whose collection the page held as a complete array.
            var completeCollections: Set<Int> = []
            var statistics = PlanStatistics()
            var byteCount: Int64 = 0
            /// The response without its streamed collections (for DATA: the whole response).
            var skeleton: JSONValue = .null
            /// The rows the page staged.
            var rowCount = 0
        }

        /// What a commit writes and reports.
        struct CommitPlan: Sendable {
            /// The entities whose stale rows go, sorted: none unless the traversal was complete.
            var deleting: [Int]
            /// The keys that count as seen, by entity index.
            var seen: [PrimaryKeys]
            /// Whether every seen key names a staged row (nothing vouched for, nothing skipped).
            var seenAllStaged: Bool
            /// The seen keys of the route's entity.
            var seenKeys: PrimaryKeys
            var statistics: PlanStatistics
            var byteCount: Int64
            var metadata: JSONValue?
            var data: JSONValue?
            /// Keys of the route's entity to delete (tombstones), without those a page listed.
            var tombstones: PrimaryKeys
        }

        /// What the session syncs, for errors.
        let source: String
        /// The route's entity (the one pages vouch for), if any.
        let targetEntity: Int?
        /// Entities whose stale rows a complete collection deletes.
        let staleEntities: Set<Int>
        /// `true` for a DATA route: pages hold no collection, and the last page is the data.
        let isData: Bool
        /// By entity index: whether its seen keys are kept (the route's entity, entities with stale deletion).
        let tracked: [Bool]

        private(set) var phase: Phase = .idle
        /// Keys that count as seen, by entity index: staged pages' own objects, skipped objects, vouched pages.
        private(set) var seen: [PrimaryKeys]
        /// Whether every seen key names a row staged by this session (nothing vouched for, no skipped keys).
        private(set) var seenAllStaged = true
        /// Entities whose collection every page held as a complete array (`nil` before the first page or vouch).
        private(set) var completeCollections: Set<Int>?
        private(set) var statistics = PlanStatistics()
        /// The one-to-many claims of the pages staged so far, which the next page's check starts from.
        private(set) var claims: [ClaimKey: ChildClaimRecord] = [:]
        private(set) var byteCount: Int64 = 0
        private(set) var metadata: JSONValue?
        private(set) var data: JSONValue?
        /// The rows of the pages staged so far (0 once the session has ended).
        private(set) var stagedRowCount = 0
        /// Keys of the route's entity that the API says were deleted (``SyncSession/delete(_:)``).
        private(set) var tombstones = PrimaryKeys()
        /// How the pages reach the store: into an open transaction until a pause rolls it back, or staged.
        private(set) var writing = Writing.staging(afterPause: false)

        /// An idle session that has staged nothing, whose pages are written into an open
        /// transaction when `writesLive` (else staged).
        init(entityCount: Int, targetEntity: Int?, staleEntities: Set<Int>, isData: Bool, source: String, writesLive: Bool = false) {
            self.source = source
            self.targetEntity = targetEntity
            self.staleEntities = staleEntities
            self.isData = isData
            var tracked = staleEntities
            if let targetEntity { tracked.insert(targetEntity) }
            self.tracked = (0 ..< entityCount).map { tracked.contains($0) }
            self.seen = Array(repeating: PrimaryKeys(), count: entityCount)
            if writesLive { writing = .live([]) }
        }

        /// An idle session of `plan`, whose pages are written into an open transaction when
        /// `writesLive` (else staged).
        init(plan: SyncPlan, entityCount: Int, source: String, writesLive: Bool = false) {
            let isData: Bool
            if case .data = plan.shape { isData = true } else { isData = false }
            self.init(entityCount: entityCount, targetEntity: plan.targetEntity, staleEntities: plan.staleEntities,
                      isData: isData, source: source, writesLive: writesLive)
        }

        // MARK: Calls

        /// idle → staging.
        ///
        /// - Throws: ``SyncError`` (`.input`) when the session has ended or a call is under way.
        mutating func beginStage() throws(SyncError) {
            try checkIdle()
            phase = .staging
        }

        /// staging → idle, recording `page`; discarding → finished (discarded).
        ///
        /// - Returns: The page's keys of the route's entity (skipped objects' included), and the effect.
        ///   Ignored (no change) unless a stage call is under way.
        mutating func endStage(_ page: Page) -> (keys: PrimaryKeys, effect: Effect) {
            switch phase {
            case .staging:
                phase = .idle
                return (record(page), .keepStagedRows)
            case .discarding(.stage):
                let keys = record(page)
                return (keys, finish(.discarded))
            default:
                return (PrimaryKeys(), .keepStagedRows)
            }
        }

        /// idle → committing.
        ///
        /// - Parameter complete: Whether the whole collection was traversed.
        /// - Returns: What to write: see ``deleting(complete:)``.
        /// - Throws: ``SyncError`` (`.input`) when the session has ended or a call is under way.
        mutating func beginCommit(complete: Bool) throws(SyncError) -> CommitPlan {
            try checkIdle()
            phase = .committing
            let seenKeys = targetEntity.map { seen[$0] } ?? PrimaryKeys()
            // A key both listed and deleted was deleted, then created again: its listed row stays.
            var tombstones = self.tombstones
            tombstones.normalize(excluding: seenKeys)
            return CommitPlan(deleting: deleting(complete: complete), seen: seen, seenAllStaged: seenAllStaged,
                              seenKeys: seenKeys, statistics: statistics, byteCount: byteCount, metadata: metadata, data: data,
                              tombstones: tombstones)
        }

        /// committing (or discarding during a commit) → finished (committed). Ignored otherwise.
        mutating func endCommit() -> Effect {
            switch phase {
            case .committing, .discarding(.commit): return finish(.committed)
            default: return .keepStagedRows
            }
        }

        /// The call under way failed: → finished (failed). Ignored when no call is under way.
        mutating func fail() -> Effect {
            switch phase {
            case .staging, .committing, .discarding: return finish(.failed)
            case .idle, .finished: return .keepStagedRows
            }
        }

        /// idle → finished (discarded); during a call → discarding (that call's end finishes the
        /// session, and until then it owns the staged rows); finished → unchanged.
        mutating func discard() -> Effect {
            switch phase {
            case .idle: return finish(.discarded)
            case .staging: phase = .discarding(.stage)
            case .committing: phase = .discarding(.commit)
            case .discarding, .finished: break
            }
            return .keepStagedRows
        }

        // MARK: Page facts

        /// Counts `keys` of the route's entity as seen: the objects of a page that answered 304
        /// Not Modified. They make ``seenAllStaged`` false; and the first vouch before any page
        /// counts the route's collection as complete, as it was when the page was staged.
        mutating func vouch(for keys: PrimaryKeys) {
            guard let target = targetEntity else { return }
            seen[target].formUnion(keys)
            if !keys.isEmpty { seenAllStaged = false }
            // An unchanged page of the collection is a complete page of it, as when it was staged.
            if completeCollections == nil { completeCollections = [target] }
        }

        /// Records keys of the route's entity as deleted upstream; ignored for a route without an entity.
        ///
        /// - Throws: ``SyncError`` (`.input`) when the session has ended or a call is under way.
        mutating func addTombstones(_ keys: PrimaryKeys) throws(SyncError) {
            try checkIdle()
            guard targetEntity != nil else { return }
            tombstones.formUnion(keys)
        }

        /// The entities whose stale rows a commit deletes, sorted: complete collections of entities
        /// with stale deletion when the traversal was `complete`, else none.
        func deleting(complete: Bool) -> [Int] {
            complete ? (completeCollections ?? []).intersection(staleEntities).sorted() : []
        }

        /// Adds a page's keys, collections, counts and envelope; returns its keys of the route's entity.
        private mutating func record(_ page: Page) -> PrimaryKeys {
            var keys = page.keys
            if keys.count < tracked.count { keys += Array(repeating: PrimaryKeys(), count: tracked.count - keys.count) }
            for (entity, kept) in page.skippedKeys where tracked.indices.contains(entity) && tracked[entity] {
                keys[entity].formUnion(kept)
            }
            for entity in tracked.indices where tracked[entity] { seen[entity].formUnion(keys[entity]) }
            if !page.skippedKeys.isEmpty { seenAllStaged = false }
            if isData {
                completeCollections = []
            } else {
                completeCollections = completeCollections.map { $0.intersection(page.completeCollections) } ?? page.completeCollections
            }
            statistics.objectCount += page.statistics.objectCount
            statistics.ignored.merge(page.statistics.ignored)
            statistics.skipped += page.statistics.skipped
            // The page's check started from the earlier pages' claims: its own hold them all.
            claims = page.statistics.claims
            byteCount += page.byteCount
            if isData { data = page.skeleton } else if metadata == nil { metadata = page.skeleton }
            stagedRowCount += page.rowCount
            return targetEntity.map { keys[$0] } ?? PrimaryKeys()
        }

        // MARK: Writing live

        /// Whether pages are written into the session's open transaction as they are parsed.
        var writesLive: Bool {
            if case .live = writing { return true }
            return false
        }

        /// Whether the open transaction rolled back after a pause (the pages were staged instead).
        var stagedAfterPause: Bool {
            if case .staging(afterPause: true) = writing { return true }
            return false
        }

        /// The memory the logged pages' bytes hold, of the session's one budget.
        var loggedMemoryBytes: Int {
            guard case .live(let pages) = writing else { return 0 }
            return pages.reduce(0) { $0 + $1.log.value.memoryBytes }
        }

        /// Keeps the bytes of a page written live. Ignored once pages are staged.
        mutating func log(_ page: LoggedPage) {
            guard case .live(var pages) = writing else { return }
            pages.append(page)
            writing = .live(pages)
        }

        /// The open transaction rolled back (after a pause when `afterPause`, or on another
        /// process's write lock): every page is staged from now on.
        ///
        /// - Returns: The pages written live so far, to stage from their bytes.
        mutating func stopWritingLive(afterPause: Bool) -> [LoggedPage] {
            guard case .live(let pages) = writing else { return [] }
            writing = .staging(afterPause: afterPause)
            return pages
        }

        /// Lets go of the logged pages (the session has ended); returns them, to drop outside the lock.
        mutating func dropLoggedPages() -> [LoggedPage] {
            guard case .live(let pages) = writing else { return [] }
            writing = .live([])
            return pages
        }

        // MARK: Internals

        private func checkIdle() throws(SyncError) {
            switch phase {
            case .idle:
                return
            case .finished, .discarding:
                throw SyncError(.input, "this sync session has ended (committed, failed or discarded)", source: source)
            case .staging, .committing:
                throw SyncError(.input, "a sync session takes one call at a time", source: source)
            }
        }

        private mutating func finish(_ ending: Ending) -> Effect {
            phase = .finished(ending)
            stagedRowCount = 0
            return .dropStagedRows
        }
    }
}
