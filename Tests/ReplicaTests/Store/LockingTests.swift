import Foundation
import GRDB
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// Another process's write transaction, played by a connection of its own on a thread of its
/// own: `BEGIN IMMEDIATE` (SQLite's write lock), an uncommitted row, then a commit or a rollback.
final class WriteLockHolder: @unchecked Sendable {
    private let locked = DispatchSemaphore(value: 0)
    private let release = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// The error the holder met, read after ``finish()``.
    private(set) var failure: (any Error)?

    /// Takes the write lock of `path` and inserts `sql` without committing; returns once the lock is held.
    init(path: String, sql: String, commit: Bool, holdFor seconds: Double? = nil) throws {
        let queue = try DatabaseQueue(path: path)
        let thread = Thread { [locked, release, done] in
            do {
                try queue.writeWithoutTransaction { db in
                    try db.execute(sql: "BEGIN IMMEDIATE")
                    try db.execute(sql: sql)
                    locked.signal()
                    if let seconds { _ = release.wait(timeout: .now() + seconds) } else { release.wait() }
                    try db.execute(sql: commit ? "COMMIT" : "ROLLBACK")
                }
                try queue.close()
            } catch {
                self.failure = error
                locked.signal()
            }
            done.signal()
        }
        thread.start()
        locked.wait()
        if let failure { throw failure }
    }

    /// Releases the lock (at once, or after the time given at start) and waits until it is released.
    func finish() {
        release.signal()
        done.wait()
    }

    /// Waits, off Swift's cooperative threads, until the holder has committed or rolled back.
    func finished() async {
        await withCheckedContinuation { continuation in
            Thread { self.done.wait(); self.done.signal(); continuation.resume() }.start()
        }
    }
}

@Suite("Several connections on one file: readers never wait, writers wait up to the busy timeout")
struct LockingTests {
    static func blog() throws -> Schema { try Schema(contentsOf: TestSupport.schemaFile("blog.json")) }

    /// A blog file holding user 1 (Ann), committed, with nothing open on it.
    static func seeded(_ directory: TemporaryDirectory) async throws -> String {
        let path = directory.path("blog.sqlite")
        let replica = try SQLiteReplica(store: Store(path: path, schema: blog()))
        _ = try await replica.sync(.get, "/users/1", body: Data(#"{"user_id": 1, "name": "Ann"}"#.utf8))
        return path
    }

    static let holdBob = "INSERT INTO users (userID, name) VALUES (2, 'Bob')"

    @Test("a store opens and reads, read-only or for writing, while another connection holds the write lock")
    func readersDoNotWait() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.seeded(directory)
        // No connection has the file open: the holder is the first, and its WAL is still empty.
        let first = try WriteLockHolder(path: path, sql: Self.holdBob, commit: false)
        // A busy timeout of 0: any wait for the write lock would fail at once.
        let reader = try Store(path: path, options: StoreOptions(busyTimeout: 0, readOnly: true))
        #expect(try reader.rows("User").map { $0["name"] } == [.string("Ann")])
        let live = try await LiveResultSet(store: SQLiteReplica(store: reader), query: LiveQuery("User", sort: [.ascending("name")]))
        #expect(live.snapshot.count == 1)
        live.close()
        first.finish()
        // Beside a store that has the file open (as every Replica process does, with its WAL set
        // up), a store opened for writing with the recorded schema opens without the lock too.
        let service = try Store(path: path, schema: Self.blog())
        let holder = try WriteLockHolder(path: path, sql: Self.holdBob, commit: false)
        defer { holder.finish() }
        let writer = try Store(path: path, schema: Self.blog(), options: StoreOptions(busyTimeout: 0))
        #expect(try writer.rows("User").map { $0["name"] } == [.string("Ann")])
        #expect(try service.rows("User").count == 1)
    }

    @Test("a write waits for another connection's write lock, then commits")
    func writerWaits() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.seeded(directory)
        let replica = try SQLiteReplica(store: Store(path: path))
        let clock = ContinuousClock()
        let started = clock.now
        let holder = try WriteLockHolder(path: path, sql: Self.holdBob, commit: true, holdFor: 0.5)
        let result = try await replica.sync(.get, "/users/3", body: Data(#"{"user_id": 3, "name": "Cy"}"#.utf8))
        await holder.finished()
        #expect(started.duration(to: clock.now) >= .milliseconds(500))
        #expect(result.changes["User"]?.inserted.integers == [3])
        #expect(try replica.store.rows("User", sort: [.ascending("userID")]).map { $0["name"] }
                == [.string("Ann"), .string("Bob"), .string("Cy")])
    }

    /// `source: path: another process holds the write lock; gave up after waiting N s (busy timeout T s); nothing was written`.
    static func expectBusy(_ error: SyncError, source: String, path: String, timeout: String) throws {
        #expect(error.code == .busy)
        let pattern = "^" + NSRegularExpression.escapedPattern(for: "\(source): \(path): another process holds the write lock; "
                                                                + "gave up after waiting ")
            + #"\d+\.\d s"# + NSRegularExpression.escapedPattern(for: " (busy timeout \(timeout) s); nothing was written") + "$"
        #expect(error.description.range(of: pattern, options: .regularExpression) != nil, "\(error)")
    }

    @Test("a write that waits longer than its busy timeout fails, naming the file and the wait, and writes nothing")
    func writerGivesUp() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.seeded(directory)
        let replica = try SQLiteReplica(store: Store(path: path, options: StoreOptions(busyTimeout: 0.2)))
        let holder = try WriteLockHolder(path: path, sql: Self.holdBob, commit: false)
        let body = Data(#"[{"user_id": 3, "name": "Cy"}]"#.utf8)
        // The sync's own timeout.
        let clock = ContinuousClock()
        let started = clock.now
        let own = await #expect(throws: SyncError.self) {
            try await replica.sync(.get, "/users", body: body, options: SyncOptions(busyTimeout: 0.3))
        }
        #expect(started.duration(to: clock.now) >= .milliseconds(300))
        try Self.expectBusy(try #require(own), source: "GET /users", path: path, timeout: "0.3")
        // The store's.
        let stores = await #expect(throws: SyncError.self) { try await replica.sync(.get, "/users", body: body) }
        try Self.expectBusy(try #require(stores), source: "GET /users", path: path, timeout: "0.2")
        // A file import (parsed on its own thread) reports the wait too, never a cancellation.
        let file = directory.path("users.json")
        try body.write(to: URL(fileURLWithPath: file))
        let imported = await #expect(throws: SyncError.self) { try await replica.importFile(file, into: .entity("User")) }
        try Self.expectBusy(try #require(imported), source: file, path: path, timeout: "0.2")
        // A session's commit.
        let session = try replica.session(.get, "/users")
        _ = try await session.stage(body: body)
        let committed = await #expect(throws: SyncError.self) { try await session.commit() }
        #expect(committed?.code == .busy)
        holder.finish()
        #expect(try replica.store.rows("User").map { $0["name"] } == [.string("Ann")])
        // Once the lock is free, the same sync commits.
        let result = try await replica.sync(.get, "/users", body: body, options: SyncOptions(busyTimeout: 0.3))
        #expect(result.changes["User"]?.inserted.integers == [3])
    }

    @Test("opening with a schema to migrate waits for the write lock, then fails with StoreError.busy and changes nothing")
    func migrationGivesUp() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.seeded(directory)
        var text = try String(contentsOf: TestSupport.schemaFile("blog.json"), encoding: .utf8)
        text = text.replacingOccurrences(of: #""version": 1"#, with: #""version": 2"#)
            .replacingOccurrences(of: #""email": "string","#, with: #""email": "string", "nickname": "string","#)
        let version2 = try Schema(json: Data(text.utf8), file: "blog-2.json")
        let service = try Store(path: path)
        let holder = try WriteLockHolder(path: path, sql: Self.holdBob, commit: false)
        let error = #expect(throws: StoreError.self) {
            _ = try Store(path: path, schema: version2, options: StoreOptions(busyTimeout: 0.2))
        }
        #expect(error?.code == .busy)
        let message = try #require(error?.description)
        #expect(message.hasPrefix("\(path): another process holds the write lock; gave up after waiting "), "\(message)")
        #expect(message.hasSuffix(" s (busy timeout 0.2 s) to create or migrate tables; nothing was changed"), "\(message)")
        holder.finish()
        #expect(try Store(path: path).schema.version == 1)
        #expect(try service.rows("User").count == 1)
        // Read-only, the migration is refused without waiting.
        let readOnly = #expect(throws: StoreError.self) {
            _ = try Store(path: path, schema: version2, options: StoreOptions(readOnly: true))
        }
        #expect(readOnly?.code == .readOnly)
        #expect(readOnly?.description == "\(path): opened read-only: schema 'blog' version 2 would create or migrate tables; "
                + "open it for writing")
        #expect(try Store(path: path, schema: version2).schema.version == 2)
    }

    @Test("a read-only store needs an existing file and refuses writes")
    func readOnlyStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let missing = directory.path("missing.sqlite")
        let error = #expect(throws: StoreError.self) { _ = try Store(path: missing, options: StoreOptions(readOnly: true)) }
        #expect(error?.description == "\(missing): cannot open database: no such file (a read-only store opens an existing one)")
        #expect(!FileManager.default.fileExists(atPath: missing))
        let path = try await Self.seeded(directory)
        let replica = try SQLiteReplica(store: Store(path: path, options: StoreOptions(readOnly: true)))
        let write = await #expect(throws: SyncError.self) {
            try await replica.sync(.get, "/users", body: Data(#"[{"user_id": 3, "name": "Cy"}]"#.utf8))
        }
        #expect(write?.code == .database)
        #expect(write?.description == "GET /users: \(path): the store was opened read-only (StoreOptions.readOnly); nothing was written")
        #expect(try replica.store.rows("User").count == 1)
    }

    @Test("busy timeouts become SQLite's whole milliseconds")
    func milliseconds() {
        #expect(StoreOptions.milliseconds(30) == 30_000)
        #expect(StoreOptions.milliseconds(0.0004) == 0)
        #expect(StoreOptions.milliseconds(-1) == 0)
        #expect(StoreOptions.milliseconds(.nan) == 0)
        #expect(StoreOptions.milliseconds(.infinity) == Int32.max)
        #expect(StoreOptions.milliseconds(1e12) == Int32.max)
    }
}
