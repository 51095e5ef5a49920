import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// The session state machine alone: no store, no parsing.
@Suite("Sync session state")
struct SyncSessionStateTests {
    typealias State = SyncSession.State

    static let ended = "this sync session has ended (committed, failed or discarded)"
    static let oneCall = "a sync session takes one call at a time"

    /// Entities 0 (the route's, with stale deletion), 1 (stale deletion), 2 (neither).
    static func state(target: Int? = 0, stale: Set<Int> = [0, 1], isData: Bool = false) -> State {
        State(entityCount: 3, targetEntity: target, staleEntities: stale, isData: isData, source: "GET /people")
    }

    static func keys(_ values: Int64...) -> PrimaryKeys { PrimaryKeys(values.map { .integer($0) }) }

    static func page(_ target: PrimaryKeys, other: PrimaryKeys = PrimaryKeys(), untracked: PrimaryKeys = PrimaryKeys(),
                     complete: Set<Int> = [0], objects: Int = 0, bytes: Int64 = 0, skeleton: JSONValue = .null, rows: Int = 0) -> State.Page {
        var statistics = PlanStatistics()
        statistics.objectCount = objects
        return State.Page(keys: [target, other, untracked], completeCollections: complete, statistics: statistics,
                          byteCount: bytes, skeleton: skeleton, rowCount: rows)
    }

    /// Expects `body` to throw the session error with `message`, naming the session's source.
    static func expectError(_ message: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        let error = #expect(throws: SyncError.self, sourceLocation: sourceLocation) { try body() }
        #expect(error?.code == .input && error?.message == message && error?.source == "GET /people",
                "\(error.map(String.init(describing:)) ?? "")", sourceLocation: sourceLocation)
    }

    @Test("a staged page returns the session to idle and records its keys, collections, counts and envelope")
    func stagePage() throws {
        var state = Self.state()
        #expect(state.phase == .idle && state.completeCollections == nil && state.seenAllStaged)
        try state.beginStage()
        #expect(state.phase == .staging)
        let first = state.endStage(Self.page(Self.keys(1, 2), other: Self.keys(7), untracked: Self.keys(9), complete: [0, 1],
                                             objects: 3, bytes: 100, skeleton: ["meta": ["page": 1]], rows: 3))
        #expect(state.phase == .idle && first.effect == .keepStagedRows)
        #expect(first.keys == Self.keys(1, 2))
        try state.beginStage()
        let second = state.endStage(Self.page(Self.keys(3), complete: [0], objects: 1, bytes: 20, skeleton: ["meta": ["page": 2]], rows: 1))
        #expect(second.keys == Self.keys(3) && second.effect == .keepStagedRows)
        #expect(state.seen == [Self.keys(1, 2, 3), Self.keys(7), PrimaryKeys()], "untracked entities' keys are not kept")
        #expect(state.seenAllStaged)
        #expect(state.completeCollections == [0], "complete in every page")
        #expect(state.statistics.objectCount == 4 && state.byteCount == 120 && state.stagedRowCount == 4)
        #expect(state.metadata == ["meta": ["page": 1]] && state.data == nil, "the first page's envelope")
    }

    @Test("DATA pages: the last page is the data, and no collection is complete")
    func dataPages() throws {
        var state = Self.state(target: nil, stale: [], isData: true)
        for n in 1 ... 2 {
            try state.beginStage()
            let staged = state.endStage(Self.page(PrimaryKeys(), complete: [0], skeleton: ["n": .int(Int64(n))]))
            #expect(staged.keys.isEmpty)
        }
        #expect(state.data == ["n": 2] && state.metadata == nil)
        #expect(state.completeCollections == [])
        #expect(try state.beginCommit(complete: true).deleting == [])
    }

    @Test("a skipped object's key counts as seen (tracked entities only) and makes seenAllStaged false")
    func skippedKeys() throws {
        var state = Self.state()
        try state.beginStage()
        var page = Self.page(Self.keys(1))
        page.skippedKeys = [0: Self.keys(5), 2: Self.keys(6)]
        let staged = state.endStage(page)
        #expect(staged.keys == Self.keys(1, 5), "the page vouches for its skipped objects too")
        #expect(state.seen[0] == Self.keys(1, 5) && state.seen[2].isEmpty)
        #expect(!state.seenAllStaged)
    }

    @Test("a commit deletes stale rows only when complete: complete collections ∩ entities with stale deletion")
    func deleting() throws {
        var state = Self.state(stale: [0, 1])
        try state.beginStage()
        _ = state.endStage(Self.page(Self.keys(1), complete: [0, 1, 2], rows: 1))
        #expect(state.deleting(complete: false) == [])
        #expect(state.deleting(complete: true) == [0, 1], "entity 2 has no stale deletion")

        let incomplete = try state.beginCommit(complete: false)
        #expect(state.phase == .committing)
        #expect(incomplete.deleting == [] && incomplete.seenKeys == Self.keys(1) && incomplete.seenAllStaged)
        #expect(state.endCommit() == .dropStagedRows)
        #expect(state.phase == .finished(.committed) && state.stagedRowCount == 0)

        var other = Self.state(stale: [0, 1])
        try other.beginStage()
        _ = other.endStage(Self.page(Self.keys(1), complete: [0, 1]))
        try other.beginStage()
        _ = other.endStage(Self.page(Self.keys(2), complete: [1]))
        #expect(try other.beginCommit(complete: true).deleting == [1], "the route's collection was incomplete in page 2")

        var empty = Self.state()
        #expect(try empty.beginCommit(complete: true).deleting == [], "no page, no vouch: nothing is known complete")
    }

    @Test("vouching: counts keys as seen, marks the route's collection complete when nothing was staged")
    func vouching() throws {
        var state = Self.state()
        state.vouch(for: PrimaryKeys())
        #expect(state.completeCollections == [0] && state.seenAllStaged, "no key: every seen key is still staged")
        state.vouch(for: Self.keys(4, 5))
        #expect(state.seen[0] == Self.keys(4, 5) && !state.seenAllStaged)
        let commit = try state.beginCommit(complete: true)
        #expect(commit.deleting == [0] && commit.seenKeys == Self.keys(4, 5) && !commit.seenAllStaged)

        // After a page, a vouch keeps what the pages said of complete collections.
        var staged = Self.state()
        try staged.beginStage()
        _ = staged.endStage(Self.page(Self.keys(1), complete: [1]))
        staged.vouch(for: Self.keys(2))
        #expect(staged.completeCollections == [1] && staged.seen[0] == Self.keys(1, 2))

        // A page after a vouch intersects with it.
        var vouched = Self.state()
        vouched.vouch(for: Self.keys(2))
        try vouched.beginStage()
        _ = vouched.endStage(Self.page(Self.keys(1), complete: [0, 1]))
        #expect(vouched.completeCollections == [0])

        // A route without an entity (DATA, MANY) has nothing to vouch for.
        var data = Self.state(target: nil, stale: [])
        data.vouch(for: Self.keys(1))
        #expect(data.seen == [PrimaryKeys(), PrimaryKeys(), PrimaryKeys()] && data.completeCollections == nil && data.seenAllStaged)
    }

    @Test("one call at a time; no call once the session has ended, with today's messages")
    func illegalCalls() throws {
        var state = Self.state()
        try state.beginStage()
        Self.expectError(Self.oneCall) { try state.beginStage() }
        Self.expectError(Self.oneCall) { _ = try state.beginCommit(complete: true) }
        #expect(state.phase == .staging, "a refused call changes nothing")
        _ = state.endStage(Self.page(Self.keys(1)))
        _ = try state.beginCommit(complete: true)
        Self.expectError(Self.oneCall) { try state.beginStage() }
        Self.expectError(Self.oneCall) { _ = try state.beginCommit(complete: true) }
        _ = state.endCommit()

        // After a commit.
        Self.expectError(Self.ended) { try state.beginStage() }
        Self.expectError(Self.ended) { _ = try state.beginCommit(complete: true) }
        #expect(state.phase == .finished(.committed))

        // After a discard.
        var discarded = Self.state()
        _ = discarded.discard()
        Self.expectError(Self.ended) { _ = try discarded.beginCommit(complete: true) }
        Self.expectError(Self.ended) { try discarded.beginStage() }

        // Ends that match no call under way change nothing.
        var idle = Self.state()
        let unexpected = idle.endStage(Self.page(Self.keys(1), rows: 1))
        #expect(unexpected.keys.isEmpty && unexpected.effect == .keepStagedRows)
        #expect(idle.endCommit() == .keepStagedRows && idle.fail() == .keepStagedRows)
        #expect(idle.phase == .idle && idle.seen[0].isEmpty && idle.stagedRowCount == 0)
        try idle.beginStage()
        #expect(idle.endCommit() == .keepStagedRows && idle.phase == .staging)
    }

    @Test("a failure finishes the session, from a stage or a commit, and drops the staged rows")
    func failure() throws {
        var staging = Self.state()
        try staging.beginStage()
        _ = staging.endStage(Self.page(Self.keys(1), rows: 2))
        try staging.beginStage()
        #expect(staging.fail() == .dropStagedRows)
        #expect(staging.phase == .finished(.failed) && staging.stagedRowCount == 0)
        Self.expectError(Self.ended) { _ = try staging.beginCommit(complete: true) }
        #expect(staging.fail() == .keepStagedRows, "already ended")

        var committing = Self.state()
        _ = try committing.beginCommit(complete: true)
        #expect(committing.fail() == .dropStagedRows && committing.phase == .finished(.failed))
        Self.expectError(Self.ended) { try committing.beginStage() }
    }

    @Test("discard: at once when idle; during a call, the session ends when the call does")
    func discard() throws {
        var idle = Self.state()
        try idle.beginStage()
        _ = idle.endStage(Self.page(Self.keys(1), rows: 3))
        #expect(idle.discard() == .dropStagedRows)
        #expect(idle.phase == .finished(.discarded) && idle.stagedRowCount == 0)
        #expect(idle.discard() == .keepStagedRows && idle.phase == .finished(.discarded), "discarding twice is harmless")

        // During a stage: the call keeps the staged rows until it ends, then the session is discarded.
        var staging = Self.state()
        try staging.beginStage()
        #expect(staging.discard() == .keepStagedRows)
        #expect(staging.phase == .discarding(.stage))
        Self.expectError(Self.ended) { try staging.beginStage() }
        #expect(staging.discard() == .keepStagedRows && staging.phase == .discarding(.stage))
        let staged = staging.endStage(Self.page(Self.keys(1), rows: 1))
        #expect(staged.effect == .dropStagedRows && staged.keys == Self.keys(1))
        #expect(staging.phase == .finished(.discarded) && staging.stagedRowCount == 0)

        // During a commit that then succeeds: it committed.
        var committing = Self.state()
        _ = try committing.beginCommit(complete: true)
        #expect(committing.discard() == .keepStagedRows && committing.phase == .discarding(.commit))
        #expect(committing.endCommit() == .dropStagedRows && committing.phase == .finished(.committed))

        // During a call that then fails: it failed.
        var failing = Self.state()
        try failing.beginStage()
        _ = failing.discard()
        #expect(failing.fail() == .dropStagedRows && failing.phase == .finished(.failed))

        // After the end: nothing changes.
        var committed = Self.state()
        _ = try committed.beginCommit(complete: false)
        _ = committed.endCommit()
        #expect(committed.discard() == .keepStagedRows && committed.phase == .finished(.committed))
    }
}
