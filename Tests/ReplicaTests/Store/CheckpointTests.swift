import Foundation
import GRDB
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("WAL checkpoints beside the writer")
struct CheckpointTests {
    static func size(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    /// Writes `rows` rows of 200 bytes each in one transaction: about 2 MB per 10,000, far past the
    /// 1,000 WAL pages (4 MB) that start a checkpoint.
    static func writeRows(_ writer: any DatabaseWriter, table: String = "t", from first: Int, count rows: Int) throws {
        try writer.write { db in
            let statement = try db.makeStatement(sql: "INSERT OR REPLACE INTO \(table) (id, text) VALUES (?, ?)")
            for id in first..<first + rows {
                try statement.execute(arguments: [id, String(repeating: "x", count: 200)])
            }
        }
    }

    @Test("a commit returns before the WAL is copied into the file; the checkpoint runs on its own queue after it, once for the commits waiting")
    func commitDoesNotCheckpoint() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("t.sqlite")
        // Inactive until the test lets it run: what the commits did alone is seen first.
        let queue = DispatchQueue(label: "test checkpoints", attributes: .initiallyInactive)
        let checkpointer = WALCheckpointer(path: path, queue: queue)
        var configuration = Store.configuration(checkpointer: checkpointer)
        configuration.label = "test"
        let pool = try DatabasePool(path: path, configuration: configuration)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT)") }
        let emptyFile = try Self.size(path)
        try Self.writeRows(pool, from: 0, count: 30_000)
        try Self.writeRows(pool, from: 30_000, count: 30_000)
        // Both commits are in the WAL only: SQLite's automatic checkpoint would have copied the first.
        #expect(try Self.size(path) == emptyFile)
        #expect(try Self.size(path + "-wal") > 10_000_000)
        queue.activate()
        // The two commits scheduled one checkpoint: the second came while the first was waiting.
        #expect(await checkpointer.settle() == 1)
        let copied = try Self.size(path)
        #expect(copied > 12_000_000, "the file has \(copied) bytes")
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 60_000)
        // A small commit leaves the WAL below the threshold: nothing is scheduled.
        try await pool.write { db in try db.execute(sql: "INSERT INTO t (id, text) VALUES (-1, 'small')") }
        #expect(await checkpointer.settle() == 1)
        // Retired (its store was released), it leaves checkpoints to the committing connection, as
        // SQLite does by default: the file grows inside the commit, and nothing more is scheduled.
        checkpointer.retire()
        try Self.writeRows(pool, from: 60_000, count: 30_000)
        #expect(try Self.size(path) > copied + 5_000_000)
        #expect(await checkpointer.settle() == 1)
    }

    @Test("releasing a store closes the file as SQLite's last close does, before the release returns: the WAL is copied and removed, and a reader that never waits opens it at once")
    func releaseClosesTheFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        func users(named letter: String) -> Data {
            let users = (1...20_000).map { #"{"user_id": \#($0), "name": "\#(String(repeating: letter, count: 150))"}"# }
            return Data(("[" + users.joined(separator: ",") + "]").utf8)
        }
        for attempt in 1...5 {
            let path = directory.path("blog-\(attempt).sqlite")
            do {
                let replica = try SQLiteReplica(store: Store(path: path, schema: LockingTests.blog()))
                _ = try await replica.sync(.get, "/users", body: users(named: "n"))
                // The first checkpoint has run (its connection is open); the second one may be under way.
                await replica.close()
                _ = try await replica.sync(.get, "/users", body: users(named: "m"))
            }
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "attempt \(attempt): the WAL is still there")
            // GRDB's default busy mode fails at once on a lock: what a reader of another process may use.
            var configuration = Configuration()
            configuration.readonly = true
            let reader = try DatabaseQueue(path: path, configuration: configuration)
            #expect(try await reader.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM users WHERE name LIKE 'm%'") } == 20_000)
        }
    }

    @Test("a file store checkpoints after its writes, Replica's and a caller's own; close() waits for the checkpoint; read-only stores have none")
    func storeCheckpoints() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("blog.sqlite")
        let store = try Store(path: path, schema: LockingTests.blog())
        let checkpointer = try #require(store.checkpointer)
        let replica = try SQLiteReplica(store: store)
        let users = (1...40_000).map { #"{"user_id": \#($0), "name": "\#(String(repeating: "n", count: 150))"}"# }
        let result = try await replica.sync(.get, "/users", body: Data(("[" + users.joined(separator: ",") + "]").utf8))
        #expect(result.changes["User"]?.inserted.count == 40_000)
        await replica.close()
        #expect(await checkpointer.settle() == 1)
        #expect(try Self.size(path) > 6_000_000)
        // A write through the store's GRDB pool counts too.
        try await store.database.write { db in
            try db.execute(sql: "CREATE TABLE extra (id INTEGER PRIMARY KEY, text TEXT)")
        }
        try Self.writeRows(store.database, table: "extra", from: 0, count: 30_000)
        await replica.close()
        #expect(await checkpointer.settle() == 2)
        let readOnly = try Store(path: path, options: StoreOptions(readOnly: true))
        #expect(readOnly.checkpointer == nil)
        #expect(try readOnly.count("User") == 40_000)
    }
}
