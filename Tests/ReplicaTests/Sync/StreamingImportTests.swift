import Foundation
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// `sync(chunks:)` and `importChunks`: rows are written as the body arrives while it keeps
/// coming; a body that pauses longer than `SyncOptions.streamingPatience` is rolled back,
/// lets go of the writer, and is staged and committed whole once it has ended.
@Suite("Streamed imports")
struct StreamingImportTests {
    static func items(_ ids: ClosedRange<Int>) -> String {
        ids.map { #"{"id": \#($0), "name": "item \#($0)", "count": \#($0 % 7)}"# }.joined(separator: ",")
    }

    @Test("a body that keeps coming lands as it does when staged from the start")
    func eagerEqualsStaged() async throws {
        // One invalid object, skipped: its key still counts as seen either way.
        let json = Array(("[" + Self.items(1...5000) + #", {"id": 5001, "count": "nine"}]"#).utf8)
        var outcomes: [String] = []
        // No pause of a loaded machine outlasts an infinite patience, so the first import is
        // written as it arrives; 0 stages the second from the start.
        for patience: Double in [.infinity, 0] {
            let store = try Store.inMemory(schema: FastObjectDecoderTests.schema)
            let engine = try SQLiteReplica(store: store)
            let result = try await engine.importChunks(Chunked(bytes: json, size: 4096), into: .entity("Item"),
                                                       options: SyncOptions(onInvalid: .skip, streamingPatience: patience))
            #expect(result.changes["Item"]?.inserted.count == 5000)
            #expect(result.writeLockDuration != nil)
            #expect(!result.stagedAfterPause, "staged after a pause of \(patience) s")
            #expect(result.seenKeys.count == 5001)
            outcomes.append("\(result.changes.entities) \(result.seenKeys) \(try store.rows("Item"))")
        }
        #expect(outcomes[0] == outcomes[1])
    }

    @Test("a body that pauses mid-way lets go of the writer: another import commits, nothing of the paused one shows, and it lands whole after")
    func pausedBodyLetsGo() async throws {
        let store = try Store.inMemory(schema: FastObjectDecoderTests.schema)
        let engine = try SQLiteReplica(store: store)
        let changes = ChangeLog()
        let token = engine.addObserver(queue: DispatchQueue(label: "observer")) { changes.append($0) }
        defer { engine.removeObserver(token) }
        let (body, continuation) = AsyncStream<[UInt8]>.makeStream()
        // More than two batches of rows before the pause, so the paused import had written rows;
        // a small memory budget sends most of what it read to the scratch file.
        let first = Array(("[" + Self.items(1...6000) + ",").utf8)
        for start in stride(from: 0, to: first.count, by: 8192) {
            continuation.yield(Array(first[start..<min(first.count, start + 8192)]))
        }
        let (parsed, parsedSignal) = AsyncStream<Int>.makeStream()
        let options = SyncOptions(progress: { parsedSignal.yield($0.objectsWritten) }, progressInterval: 1000,
                                  stagingMemory: 1024, streamingPatience: 0.1)
        let paused = Task { try await engine.importChunks(body, into: .entity("Item"), options: options) }
        // Once 5000 of the 6000 objects are parsed, the paused import is writing them (it started on the
        // first batch) and waits for the rest of its body.
        for await count in parsed where count >= 5000 { break }
        try await Task.sleep(for: .milliseconds(30))

        // The other import can only commit once the paused one has rolled back and let go.
        let other = try await engine.importChunks(Chunked(bytes: Array(#"[{"id": 100000, "name": "other"}]"#.utf8), size: 64),
                                                  into: .entity("Item"))
        #expect(other.changes["Item"]?.inserted.integers == [100000])
        #expect(try store.count("Item") == 1)

        continuation.yield(Array((Self.items(6001...7000) + "]").utf8))
        continuation.finish()
        let result = try await paused.value
        #expect(result.stagedAfterPause)
        #expect(result.changes["Item"]?.inserted.count == 7000)
        #expect(result.objectCount == 7000)
        #expect(try store.count("Item") == 7001)
        #expect(try store.rows("Item", where: "id = 6000").first?.values[1] == .string("item 6000"))
        try await waitUntil("two change sets observed") { changes.count == 2 }
        #expect(changes.values.map { $0["Item"]?.inserted.count } == [1, 7000])
    }

    @Test("a body that fails after a pause leaves the store as it was")
    func pausedThenFailed() async throws {
        let store = try Store.inMemory(schema: FastObjectDecoderTests.schema)
        let engine = try SQLiteReplica(store: store)
        let (body, continuation) = AsyncStream<[UInt8]>.makeStream()
        continuation.yield(Array(("[" + Self.items(1...5000) + ",").utf8))
        let paused = Task { try await engine.importChunks(body, into: .entity("Item"), options: SyncOptions(streamingPatience: 0.05)) }
        try await Task.sleep(for: .milliseconds(300))
        continuation.yield(Array(#"{"id": 5001, "name": }]"#.utf8))
        continuation.finish()
        let error = await #expect(throws: SyncError.self) { try await paused.value }
        #expect(error?.code == .malformedJSON)
        #expect(try store.count("Item") == 0)
    }
}
