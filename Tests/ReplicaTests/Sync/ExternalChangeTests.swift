import Foundation
import GRDB
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("External changes")
struct ExternalChangeTests {
    @Test("a write by another connection is reported as unknown changes; the engine's own writes are not")
    func detectsOtherConnections() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("blog.sqlite")
        let store = try Store(path: path, schema: try Schema(contentsOf: TestSupport.schemaFile("blog.json")))
        let engine = try SQLiteReplica(store: store)
        let stream = engine.changes()
        let monitor = engine.detectExternalChanges(every: .milliseconds(20))
        defer { monitor.stop() }
        var iterator = stream.makeAsyncIterator()
        // Our own write: reported exactly, once.
        _ = try await engine.sync(.get, "/users", body: Data(#"[{"user_id": 1, "name": "Ann"}]"#.utf8))
        let own = await iterator.next()
        #expect(own?["User"]?.inserted.integers == [1])
        #expect(own?["User"]?.isUnknown == false)
        // Another process (here: another connection) writes the file.
        let other = try DatabaseQueue(path: path)
        try await other.write { db in try db.execute(sql: "INSERT INTO users (userID, name) VALUES (2, 'Bob')") }
        let external = await iterator.next()
        #expect(external?["User"]?.isUnknown == true)
        #expect(external?.changedEntities == ["User", "Post", "Comment"])
        try other.close()
    }

    @Test("a commit by another connection right after the monitor starts is reported: its baseline is read before it returns")
    func commitRightAfterStart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("blog.sqlite")
        let store = try Store(path: path, schema: try Schema(contentsOf: TestSupport.schemaFile("blog.json")))
        let engine = try SQLiteReplica(store: store)
        let stream = engine.changes()
        // The first poll comes a second later; the commit lands before it.
        let monitor = engine.detectExternalChanges(every: .seconds(1))
        defer { monitor.stop() }
        let other = try DatabaseQueue(path: path)
        try await other.write { db in try db.execute(sql: "INSERT INTO users (userID, name) VALUES (2, 'Bob')") }
        try other.close()
        let external = await withTaskGroup(of: ChangeSet?.self) { group in
            group.addTask {
                var iterator = stream.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        #expect(external?["User"]?.isUnknown == true, "the commit was taken for the baseline and never reported")
    }
}
