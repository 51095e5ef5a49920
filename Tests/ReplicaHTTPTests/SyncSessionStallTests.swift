import Foundation
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

@Suite("Sync sessions over HTTP")
struct SyncSessionStallTests {
    @Test("while a sync stalls mid-body, another sync commits, readers read, and the stalled one commits whole afterwards",
          .timeLimit(.minutes(3)))
    func stalledBodyHoldsNoLock() async throws {
        let api = try await PeopleAPI.start()
        try await withTeardown {
            let people = (1...300).map { JSONValue.object(["id": .int(Int64($0)), "name": .string("person \($0)")]) }
            try await api.server.load(json: .array(people), into: "people")
            try await api.server.load(json: .array([.object(["id": 1, "name": "car", "color": "red"])]), into: "cars")
            // The body stalls until the test releases it (the 120 s are only a bound), so B runs
            // inside the stall however slowly a loaded machine answers it.
            api.server.setConditions(MockConditions(faults: [
                MockFault(.stallBody(afterBytes: 4000, duration: .seconds(120)), method: "GET", path: "/people"),
            ]))
            let changes = ChangeSetLog()
            let token = api.engine.addObserver(queue: DispatchQueue(label: "observer")) { changes.append($0) }
            defer { api.engine.removeObserver(token) }

            // A: parses what arrived before the stall, then waits for the rest of the body.
            let (parsed, parsedSignal) = AsyncStream<Void>.makeStream()
            let options = SyncOptions(progress: { _ in parsedSignal.yield() }, progressInterval: 1)
            let clock = ContinuousClock()
            let a = Task { try await api.client.call("/people", options: options) }
            var iterator = parsed.makeAsyncIterator()
            _ = await iterator.next()
            let stalled = clock.now

            // B commits meanwhile, and readers read. Had B needed A's write lock, it would wait for
            // the release below, which comes only after B: its call would time out instead.
            let b = try await api.client.call("/cars")
            #expect(b.changes["Car"]?.inserted.integers == [1])
            #expect(try api.store.count("Car") == 1)
            #expect(try api.store.count("Person") == 0)

            // Held at least 3 s, so that a writer taken during the stall would show in A's lock time.
            try await Task.sleep(until: stalled + .seconds(3), clock: .continuous)
            #expect(try api.store.count("Person") == 0)
            let released = clock.now
            #expect(api.server.releaseStalls() == 1)

            let result = try await a.value
            #expect(result.changes["Person"]?.inserted.count == 300)
            #expect(try api.store.count("Person") == 300)
            let writeLock = try #require(result.sync.writeLockDuration)
            // The writer is held only for the merge after the release, never across the stall.
            #expect(writeLock < stalled.duration(to: released), "A held the writer for \(writeLock)")
            // A landed as one commit after B's.
            try await waitUntil("two change sets observed") { changes.count == 2 }
            #expect(changes.values.map { $0.entities.keys.sorted() } == [["Car"], ["Person"]])
        } teardown: {
            await api.stop()
        }
    }
}

/// Change sets as an observer receives them. `@unchecked Sendable`: guarded by `lock`.
final class ChangeSetLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [ChangeSet] = []
    func append(_ item: ChangeSet) { lock.withLock { items.append(item) } }
    var values: [ChangeSet] { lock.withLock { items } }
    var count: Int { lock.withLock { items.count } }
}
