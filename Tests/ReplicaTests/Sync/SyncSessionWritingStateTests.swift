import Testing
@testable import ReplicaCore

/// How a session's pages reach the store, as its state records it: into an open transaction
/// (their bytes logged) until it rolls back, then staged.
@Suite("Sync session state: writing live, then staging")
struct SyncSessionWritingStateTests {
    typealias State = SyncSession.State

    static func page(bytes: Int, source: String) throws -> LoggedPage {
        let log = ChunkLog(memoryBudget: 1 << 20)
        try log.append(Array(repeating: 1, count: bytes))
        return LoggedPage(log: UncheckedBox(log), claimsBefore: [:], source: source)
    }

    static func live() -> State {
        State(entityCount: 1, targetEntity: 0, staleEntities: [0], isData: false, source: "GET /people", writesLive: true)
    }

    @Test("a session that stages from the start logs nothing and did not pause")
    func stagingFromTheStart() throws {
        var state = State(entityCount: 1, targetEntity: 0, staleEntities: [0], isData: false, source: "GET /people")
        #expect(!state.writesLive)
        state.log(try Self.page(bytes: 10, source: "page 1"))
        #expect(state.loggedMemoryBytes == 0)
        #expect(state.stopWritingLive(afterPause: true).isEmpty)
        #expect(!state.stagedAfterPause)
    }

    @Test("pages written live are logged; a pause hands them over to be staged, and later pages are not logged")
    func pauseHandsOverTheLog() throws {
        var state = Self.live()
        #expect(state.writesLive)
        state.log(try Self.page(bytes: 10, source: "page 1"))
        state.log(try Self.page(bytes: 5, source: "page 2"))
        #expect(state.loggedMemoryBytes == 15)
        let pages = state.stopWritingLive(afterPause: true)
        #expect(pages.map(\.source) == ["page 1", "page 2"])
        #expect(!state.writesLive)
        #expect(state.stagedAfterPause)
        state.log(try Self.page(bytes: 1, source: "page 3"))
        #expect(state.loggedMemoryBytes == 0)
        #expect(state.stopWritingLive(afterPause: false).isEmpty)
        #expect(state.stagedAfterPause)
    }

    @Test("another process's write lock stops writing live without a pause; an ended session drops its log")
    func busyAndDropped() throws {
        var busy = Self.live()
        busy.log(try Self.page(bytes: 3, source: "page 1"))
        #expect(busy.stopWritingLive(afterPause: false).count == 1)
        #expect(!busy.stagedAfterPause)

        var ended = Self.live()
        ended.log(try Self.page(bytes: 3, source: "page 1"))
        #expect(ended.dropLoggedPages().count == 1)
        #expect(ended.loggedMemoryBytes == 0)
        #expect(ended.writesLive)
    }
}
