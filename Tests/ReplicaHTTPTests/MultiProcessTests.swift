import AsyncHTTPClient
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import Replica
import ReplicaTestSupport
import Testing

/// Several `replica` processes on one SQLite file, as users run them: imports and syncs write
/// while queries and watches read. Readers never fail; writers wait for each other.
@Suite("Several processes on one SQLite file", .serialized)
struct MultiProcessTests {
    static let schema = packageRoot.appendingPathComponent("Schemas/blog.json").path
    static let rounds = 6
    static let postCount = 8_000
    static let commentCount = 2_000

    /// Round `round`'s posts: ids and titles of their own, so that a reader can tell which
    /// import it sees and whether it sees one whole.
    static func posts(round: Int) -> Data {
        let objects = (1...postCount).map { index in
            #"{"id": \#(round * 1_000_000 + index), "user_id": \#(index % 3 + 1), "title": "round \#(round) post \#(index)"}"#
        }
        return Data(("[" + objects.joined(separator: ",\n") + "]").utf8)
    }

    static func comments(round: Int) -> Data {
        let objects = (1...commentCount).map { index in
            #"{"id": \#(round * 1_000_000 + index), "post_id": \#(index), "user_id": 1, "body": "round \#(round)"}"#
        }
        return Data(("[" + objects.joined(separator: ",\n") + "]").utf8)
    }

    /// `replica serve` for the blog schema, with users 1–3; stopped when the test ends.
    final class Server {
        let process = Process()
        let base: String

        init(directory: TemporaryDirectory) async throws {
            let data = directory.url("users.json")
            try Data(#"{"users": [{"user_id": 1, "name": "Ann"}, {"user_id": 2, "name": "Bob"}, {"user_id": 3, "name": "Cy"}]}"#.utf8)
                .write(to: data)
            process.executableURL = URL(fileURLWithPath: ChildProcess.replica)
            process.arguments = ["serve", "--schema", MultiProcessTests.schema, "--data", data.path, "--port", "0"]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            let line = await SyncCommandTests.firstLine(out.fileHandleForReading) ?? ""
            guard line.hasPrefix("Listening on http://127.0.0.1:") else {
                if process.isRunning { process.interrupt() }
                process.waitUntilExit()
                throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "replica serve printed '\(line)'"])
            }
            base = String(line.dropFirst("Listening on ".count))
        }

        func stop() {
            if process.isRunning { process.interrupt() }
            process.waitUntilExit()
        }
    }

    /// One child's outcome, named for the failure list.
    struct Run: Sendable {
        var name: String
        var output: ChildProcess.Output
    }

    @Test("imports, syncs, queries and watches run at once for several rounds: no process fails, the final rows are exact")
    func model() async throws {
        let directory = try TemporaryDirectory("replica-processes")
        defer { directory.remove() }
        let db = directory.path("blog.sqlite")
        let server = try await Server(directory: directory)
        defer { server.stop() }
        // Round 0 creates the file.
        for (entity, data) in [("Post", Self.posts(round: 0)), ("Comment", Self.comments(round: 0))] {
            let file = directory.path("\(entity)-0.json")
            try data.write(to: URL(fileURLWithPath: file))
            let created = try await ChildProcess.run(ChildProcess.replica, ["import", "--db", db, "--schema", Self.schema,
                                                                           "--entity", entity, file])
            #expect(created.status == 0, "\(created.stderr)")
        }
        var failures: [String] = []
        var runs = 0
        var roundsSeen: Set<Int> = []
        for round in 1...Self.rounds {
            let postsFile = directory.path("Post-\(round).json")
            let commentsFile = directory.path("Comment-\(round).json")
            try Self.posts(round: round).write(to: URL(fileURLWithPath: postsFile))
            try Self.comments(round: round).write(to: URL(fileURLWithPath: commentsFile))
            // The API gains a user every round, for the sync to write.
            var request = HTTPClientRequest(url: server.base + "/users")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: #"{"user_id": \#(100 + round), "name": "Round \#(round)"}"#))
            let created = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            #expect(created.status == .created)
            let commands: [(String, [String])] = [
                ("import posts", ["import", "--db", db, "--entity", "Post", "--stale", "delete", postsFile]),
                ("import comments", ["import", "--db", db, "--entity", "Comment", "--stale", "delete", commentsFile]),
                ("sync users", ["sync", "--db", db, "--base-url", server.base, "/users"]),
                ("query posts", ["query", "--db", db, "Post", "--format", "ndjson"]),
                ("query comments", ["query", "--db", db, "Comment", "--sort", "-id", "--limit", "3"]),
                ("watch posts", ["watch", "--db", db, "Post", "--where", "id % 1000 = 0", "--duration", "1"]),
            ]
            let results = try await withThrowingTaskGroup(of: Run.self) { group in
                for (name, arguments) in commands {
                    group.addTask { Run(name: name, output: try await ChildProcess.run(ChildProcess.replica, arguments)) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for run in results {
                runs += 1
                if run.output.status != 0 {
                    failures.append("round \(round), \(run.name): exit \(run.output.status): \(run.output.stderr)")
                }
                guard run.name == "query posts", run.output.status == 0 else { continue }
                // A reader sees one whole import: the previous round's posts or this round's, never a mix.
                let titles = run.output.stdout.split(separator: "\n").compactMap { line -> Int? in
                    guard let object = try? JSONValue(parsing: Array(line.utf8)), case .string(let title)? = object["title"]
                    else { return nil }
                    return Int(title.split(separator: " ")[1])
                }
                #expect(titles.count == Self.postCount, "round \(round): a reader saw \(titles.count) posts")
                #expect(Set(titles).count == 1 && [round - 1, round].contains(titles.first ?? -1),
                        "round \(round): a reader saw rounds \(Set(titles).sorted())")
                roundsSeen.formUnion(titles)
            }
        }
        #expect(failures == [], "\(failures.count) of \(runs) processes failed")
        print("multi-process model: \(Self.rounds) rounds, \(runs) processes, \(failures.count) failures; "
              + "readers saw rounds \(roundsSeen.sorted())")

        let store = try Store(path: db, options: StoreOptions(readOnly: true))
        let last = Self.rounds
        let posts = try store.rows("Post", sort: [.ascending("id")])
        #expect(posts.map { $0["id"] } == (1...Self.postCount).map { .integer(Int64(last * 1_000_000 + $0)) })
        #expect(posts.map { $0["title"] } == (1...Self.postCount).map { .string("round \(last) post \($0)") })
        let comments = try store.rows("Comment", sort: [.ascending("id")])
        #expect(comments.map { $0["id"] } == (1...Self.commentCount).map { .integer(Int64(last * 1_000_000 + $0)) })
        #expect(try store.rows("User", sort: [.ascending("userID")]).map { $0["name"] }
                == ["Ann", "Bob", "Cy"].map(AttributeValue.string) + (1...last).map { .string("Round \($0)") })
    }

    /// A python3 process holding SQLite's write lock (`BEGIN IMMEDIATE`) on `path` with one
    /// uncommitted row until a line (or end of file) reaches its standard input, then committing
    /// it; it prints `locked` once it holds the lock. Like any process that has written, it has
    /// the file's WAL set up (a row inserted and deleted). No timing decides what a test sees:
    /// the test releases the lock when it has checked what must happen while it is held.
    static func lockHolder(path: String) throws -> (Process, FileHandle, release: FileHandle) {
        let script = """
            import sqlite3, sys, time
            connection = sqlite3.connect(sys.argv[1], isolation_level=None)
            connection.execute("INSERT INTO posts (id, userID, title, published) VALUES (424243, 1, 'gone', 0)")
            connection.execute("DELETE FROM posts WHERE id = 424243")
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("INSERT INTO posts (id, userID, title, published) VALUES (424242, 1, 'uncommitted', 0)")
            print("locked", flush=True)
            sys.stdin.readline()
            connection.execute("COMMIT")
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, path]
        let out = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardInput = input
        try process.run()
        return (process, out.fileHandleForReading, input.fileHandleForWriting)
    }

    @Test("a query and an import that start while another process holds the write lock: the query reads the committed rows at once, the import waits and commits after it")
    func behindWriteLock() async throws {
        let directory = try TemporaryDirectory("replica-lock")
        defer { directory.remove() }
        let db = directory.path("blog.sqlite")
        let posts = directory.path("posts.json")
        try Data(#"[{"id": 1, "user_id": 1, "title": "first"}, {"id": 2, "user_id": 1, "title": "second"}]"#.utf8)
            .write(to: URL(fileURLWithPath: posts))
        let created = try await ChildProcess.run(ChildProcess.replica, ["import", "--db", db, "--schema", Self.schema,
                                                                       "--entity", "Post", posts])
        #expect(created.status == 0, "\(created.stderr)")
        let (holder, out, release) = try Self.lockHolder(path: db)
        defer { if holder.isRunning { holder.terminate() }; holder.waitUntilExit() }
        #expect(await SyncCommandTests.firstLine(out) == "locked")
        let clock = ContinuousClock()
        // The query runs to its end while the lock is held: a reader never waits for a writer.
        let (reader, readerTime) = try await Self.timed(clock) {
            try await ChildProcess.run(ChildProcess.replica, ["query", "--db", db, "Post"])
        }
        #expect(holder.isRunning, "the holder let go of the lock before the query ended")
        #expect(reader.status == 0, "\(reader.stderr)")
        // The reader sees the committed rows, not the holder's uncommitted one.
        #expect(reader.stdout.contains("first") && reader.stdout.contains("second") && !reader.stdout.contains("uncommitted"))
        #expect(reader.stdout.hasSuffix("(2 rows)\n"), "\(reader.stdout)")
        // The import starts under the lock and waits for it (up to its busy timeout of 30 s).
        let started = clock.now
        let importing = Task {
            try await ChildProcess.run(ChildProcess.replica, ["import", "--db", db, "--entity", "Post", "--stale", "delete",
                                                               "--busy-timeout", "30", posts])
        }
        try await Task.sleep(for: .milliseconds(500))
        let released = clock.now
        release.write(Data("commit\n".utf8))
        let writer = try await importing.value
        let writerTime = started.duration(to: clock.now)
        holder.waitUntilExit()
        #expect(holder.terminationStatus == 0)
        #expect(writer.status == 0, "\(writer.stderr)")
        #expect(started.duration(to: released) <= writerTime, "the import ended before the lock was released")
        // The import committed after the holder: its stale deletion removed the holder's row.
        #expect(writer.stdout.hasPrefix("inserted 0, updated 0, deleted 1, skipped 0 (2 objects"), "\(writer.stdout)")
        let store = try Store(path: db, options: StoreOptions(readOnly: true))
        #expect(try store.rows("Post", sort: [.ascending("id")]).map { $0["title"] } == [.string("first"), .string("second")])
        print("behind a write lock: the query took \(readerTime); the import, released after \(started.duration(to: released)), took \(writerTime)")
    }

    @Test("an import that waits longer than --busy-timeout fails, names the file and the wait, and writes nothing")
    func importGivesUp() async throws {
        let directory = try TemporaryDirectory("replica-lock")
        defer { directory.remove() }
        let db = directory.path("blog.sqlite")
        let posts = directory.path("posts.json")
        try Data(#"[{"id": 1, "user_id": 1, "title": "first"}]"#.utf8).write(to: URL(fileURLWithPath: posts))
        let created = try await ChildProcess.run(ChildProcess.replica, ["import", "--db", db, "--schema", Self.schema,
                                                                       "--entity", "Post", posts])
        #expect(created.status == 0, "\(created.stderr)")
        let (holder, out, _) = try Self.lockHolder(path: db)
        // Killed, the holder never commits its row.
        defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) }; holder.waitUntilExit() }
        #expect(await SyncCommandTests.firstLine(out) == "locked")
        let more = directory.path("more.json")
        try Data(#"[{"id": 2, "user_id": 1, "title": "second"}]"#.utf8).write(to: URL(fileURLWithPath: more))
        let output = try await ChildProcess.run(ChildProcess.replica, ["import", "--db", db, "--entity", "Post",
                                                                      "--busy-timeout", "0.2", more])
        kill(holder.processIdentifier, SIGKILL)
        #expect(output.status == 1)
        #expect(output.stdout == "")
        let prefix = "Error: \(more): \(db): another process holds the write lock; gave up after waiting "
        #expect(output.stderr.hasPrefix(prefix), "\(output.stderr)")
        #expect(output.stderr.hasSuffix(" s (busy timeout 0.2 s); nothing was written\n"), "\(output.stderr)")
        holder.waitUntilExit()
        let store = try Store(path: db, options: StoreOptions(readOnly: true))
        #expect(try store.rows("Post").map { $0["title"] } == [.string("first")])
        // A negative wait is refused before anything opens.
        let refused = try await ChildProcess.run(ChildProcess.replica, ["import", "--db", db, "--entity", "Post",
                                                                       "--busy-timeout=-1", more])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--busy-timeout takes a number of seconds from 0 up to 2073600, not -1.0"), "\(refused.stderr)")
    }

    static func timed<T: Sendable>(_ clock: ContinuousClock, _ body: @Sendable () async throws -> T) async rethrows -> (T, Duration) {
        let start = clock.now
        let value = try await body()
        return (value, start.duration(to: clock.now))
    }
}
