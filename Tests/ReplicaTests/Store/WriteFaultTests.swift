import CSQLiteFaults
import Foundation
import GRDB
import GRDBSQLite
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// A failed write leaves the store exactly as it was, whatever SQLite returns in the middle of
/// the transaction: a fault-injecting VFS (`CSQLiteFaults`) makes the disk full or fails one
/// write, read or sync, on every write path (an import, a staged session, a live session, stale
/// deletion, tombstones, the client's records), and the store's content is compared whole.
///
/// SQLite may roll a transaction back by itself after such an error and go on in autocommit
/// mode; before the fix a 150,000-row import on a full disk committed ~27 rows a statement after
/// its transaction was gone.
///
/// The VFS's fault is process-wide state: the suite runs one test at a time (other suites'
/// files are never under the armed folder, so they run on).
@Suite("Write faults: a failed write leaves the store as it was", .serialized)
struct WriteFaultTests {
    /// One injected fault.
    struct Fault: CustomTestStringConvertible, Sendable {
        var name: String
        /// Full disk: the files may grow by this many bytes in all; otherwise a one-shot fault.
        var growth: Int64?
        var operation: replica_fault_operation = replica_fault_write
        /// Operations of that kind let through before the one that fails.
        var skip: Int64 = 0
        var code: Int32 = SQLITE_IOERR
        /// Whether the operations after the failing one fail too (a lock SQLite retries stays taken).
        var stays = false

        var testDescription: String { name }

        func arm(_ prefix: String) {
            if let growth {
                replica_faults_arm_full_disk(prefix, growth)
            } else if stays {
                replica_faults_arm_from(prefix, operation, skip, code)
            } else {
                replica_faults_arm_once(prefix, operation, skip, code)
            }
        }

        static let all: [Fault] = [
            Fault(name: "full disk (SQLITE_FULL)", growth: 48 << 10),
            Fault(name: "write I/O error (SQLITE_IOERR_WRITE)", skip: 6, code: SQLITE_IOERR | (3 << 8)),
            Fault(name: "read I/O error (SQLITE_IOERR_READ)", operation: replica_fault_read, skip: 40, code: SQLITE_IOERR | (1 << 8)),
            Fault(name: "out of memory (SQLITE_NOMEM)", skip: 6, code: SQLITE_NOMEM),
            Fault(name: "corrupt page (SQLITE_CORRUPT)", operation: replica_fault_read, skip: 40, code: SQLITE_CORRUPT),
            Fault(name: "busy (SQLITE_BUSY) past the busy timeout", skip: 6, code: SQLITE_BUSY, stays: true),
        ]
    }

    /// A write path of the store.
    enum Path: String, CaseIterable, Sendable {
        case importBody = "an import of one body"
        case stagedSession = "a staged three-page session"
        case liveSession = "a live three-page session"
        case staleDeletion = "a session deleting stale rows"
        case tombstones = "tombstones"
        case clientRecords = "the client's records"
        case rebase = "a session applying 200 local writes again on top"
    }

    /// Local writes pending before a ``Path/rebase`` sync: changes of posts 1 to 200.
    static let localWrites = 200

    static let seeded = 3_000

    static func posts(_ ids: ClosedRange<Int>, title: String) -> Data {
        Data((#"{"posts": ["# + ids.map { #"{"id": \#($0), "title": "\#(title) \#($0) \#(String(repeating: "x", count: 40))"}"# }
            .joined(separator: ",") + "]}").utf8)
    }

    /// Every table's rows as text, sorted: the store's content whole.
    static func content(_ store: Store) async throws -> [String: [String]] {
        try await store.database.read { db in
            var content: [String: [String]] = [:]
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            for table in tables {
                content[table] = try Row.fetchAll(db, sql: "SELECT * FROM \(table.quotedIdentifier)").map(\.description).sorted()
            }
            return content
        }
    }

    func run(_ path: Path, on engine: SQLiteReplica) async throws {
        switch path {
        case .importBody:
            _ = try await engine.sync(.get, "/users/1/posts", body: Self.posts(1...4_000, title: "import"))
        case .stagedSession, .liveSession:
            var options = SyncOptions()
            if path == .stagedSession { options.streamingPatience = 0 }
            let session = try engine.session(.get, "/users/1/posts", options: options)
            for page in 0..<3 {
                _ = try await session.stage(body: Self.posts(page * 1_500 + 1...(page + 1) * 1_500, title: "page \(page)"),
                                            source: "GET /users/1/posts?page=\(page + 1)")
            }
            _ = try await session.commit()
        case .staleDeletion:
            let session = try engine.session(.get, "/users/1/posts")
            _ = try await session.stage(body: Self.posts(1...10, title: "seed"), source: "GET /users/1/posts")
            _ = try await session.commit()
        case .tombstones:
            var job = WriteJob(source: "tombstones")
            job.tombstones = [Tombstones(entity: try engine.entityIndex("Post"), scope: nil,
                                         keys: PrimaryKeys((1...2_500).map { .integer(Int64($0)) }))]
            _ = try await engine.transact(job)
        case .rebase:
            // The API changed every post and has 1,000 more (the file grows past its log); the pending
            // changes of 200 of them go on top again.
            _ = try await engine.sync(.get, "/users/1/posts", body: Self.posts(1...Self.seeded + 1_000, title: "server"))
        case .clientRecords:
            var job = WriteJob(source: "records")
            job.records = (1...400).map { page in
                ("https://api.example.com/posts?page=\(page)",
                 ClientCache.Entry(etag: "\"v2-\(page)\"", next: "https://api.example.com/posts?page=\(page + 1)",
                                   keys: PrimaryKeys((0..<500).map { .integer(Int64(page * 10_000 + $0 * 7)) })))
            }
            _ = try await engine.transact(job)
        }
    }

    @Test("the store afterwards holds exactly the rows it held before", arguments: Fault.all, Path.allCases)
    func faultLeavesStoreAsItWas(fault: Fault, path: Path) async throws {
        #expect(replica_faults_install() == SQLITE_OK)
        let directory = try TemporaryDirectory("replica-write-faults")
        defer { directory.remove() }
        // A busy lock is waited for up to the busy timeout, then fails the write.
        let store = try Store(path: directory.path("blog.sqlite"), schema: try Schema(contentsOf: TestSupport.schemaFile("blog.json")),
                              options: StoreOptions(busyTimeout: 1))
        let engine = try SQLiteReplica(store: store)
        _ = try await engine.sync(.get, "/users/1/posts", body: Self.posts(1...Self.seeded, title: "seed"))
        var records = WriteJob(source: "seed records")
        records.records = [("https://api.example.com/posts?page=1", ClientCache.Entry(etag: "\"v1\"", keys: PrimaryKeys([.integer(1)])))]
        _ = try await engine.transact(records)
        if path == .rebase {
            for id in 1...Self.localWrites { try await engine.saveLocally("Post", ["id": .integer(Int64(id)), "title": .string("local \(id)")]) }
            // Their 200 commits grew the log: emptied, so that the sync's writes grow the files again.
            // (After the checkpoints their commits scheduled: one running beside it would keep the log.)
            await engine.close()
            try await store.database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        }
        // A small page cache: the transaction writes and reads the file as it goes, not only at its commit.
        try await store.database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA cache_size = 8") }
        // No checkpoint of the seed's commits runs beside the fault.
        await engine.close()
        let before = try await Self.content(store)
        let published = ChangeLog()
        let token = engine.addObserver(queue: DispatchQueue(label: "write-faults")) { published.append($0) }
        defer { engine.removeObserver(token) }

        fault.arm(directory.path)
        var failure: (any Error)?
        do {
            try await run(path, on: engine)
        } catch {
            failure = error
        }
        let fired = replica_faults_disarm()

        #expect(fired > 0, "the fault was never reached: the test proves nothing")
        let error = try #require(failure as? SyncError, "the write must fail, got \(failure.map { "\($0)" } ?? "success")")
        #expect(error.code == .database, "\(error)")
        #expect(try await Self.content(store) == before)
        #expect(published.values.isEmpty, "a failed write published \(published.values)")
        // The store goes on: the same write succeeds once the fault is gone.
        try await run(path, on: engine)
        #expect(try await Self.content(store) != before)
        if path == .rebase {
            // The server's rows, with the pending changes on top.
            let titles = try await engine.rows(RowQuery("Post", sort: [.ascending("id")])).map { "\($0["title"] ?? .null)" }
            #expect(titles.prefix(Self.localWrites) == ArraySlice((1...Self.localWrites).map { "local \($0)" }))
            #expect(titles.count == Self.seeded + 1_000)
            #expect(titles.dropFirst(Self.localWrites).allSatisfy { $0.hasPrefix("server ") })
            #expect(try await engine.outbox(.pending).count == Self.localWrites)
        }
        await engine.close()
    }

    @Test("a full disk during a 40,000-row import commits nothing of it, and the error names the row")
    func fullDiskImport() async throws {
        #expect(replica_faults_install() == SQLITE_OK)
        let directory = try TemporaryDirectory("replica-full-disk")
        defer { directory.remove() }
        let store = try Store(path: directory.path("blog.sqlite"), schema: try Schema(contentsOf: TestSupport.schemaFile("blog.json")))
        let engine = try SQLiteReplica(store: store)
        _ = try await engine.sync(.get, "/users/1/posts", body: Self.posts(1...500, title: "seed"))
        let before = try await Self.content(store)
        await engine.close()
        replica_faults_arm_full_disk(directory.path, 1 << 20)
        let error = await #expect(throws: SyncError.self) {
            _ = try await engine.sync(.get, "/users/1/posts", body: Self.posts(1...40_000, title: "big"))
        }
        #expect(replica_faults_disarm() > 0)
        #expect(error?.message.contains("database or disk is full") == true, "\(error.map { "\($0)" } ?? "")")
        #expect(try await Self.content(store) == before)
        await engine.close()
    }
}
