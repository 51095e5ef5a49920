import Foundation
#if canImport(Glibc)
import Glibc
#endif
import GRDB
import Replica
import ReplicaTestSupport
import Testing

@Suite("replica watch")
struct WatchCommandTests {
    static func scratch() throws -> (TemporaryDirectory, String) {
        let (directory, path) = try QueryCommandTests.makeStore()
        return (directory, path)
    }

    /// `replica watch ARGUMENTS` in a detached 100 × 20 tmux session.
    static func watch(_ tmux: String, _ directory: TemporaryDirectory, _ arguments: String) throws -> TmuxSession {
        let replica = ReplicaTool.productsDirectory.appendingPathComponent("replica").path
        return try TmuxSession(executable: tmux, directory: directory.url, command: "\(replica) watch \(arguments)", columns: 100, rows: 20)
    }

    static func importPosts(_ db: String, _ json: String) async throws {
        let output = try await ReplicaTool.run(["import", "--db", db, "--route", "/users/1/posts", "-"], stdin: Data(json.utf8))
        #expect(output.status == 0, "\(output.stderr)")
    }

    @Test("without a terminal it prints the initial result and each diff as JSON lines, for changes by other processes")
    func jsonLines() async throws {
        let (directory, db) = try Self.scratch()
        defer { directory.remove() }
        try await Self.importPosts(db, #"{"posts": [{"id": 10, "title": "Hello"}]}"#)
        let watch = try LineReader.watch(["--db", db, "Post", "--sort", "-id", "--poll", "20", "--duration", "60"])
        defer { watch.stop() }
        let lines = watch.lines
        #expect(await lines.next() == #"{"event":"snapshot","count":1,"keys":[10]}"#)
        try await Self.importPosts(db, #"{"posts": [{"id": 20, "title": "New"}, {"id": 10, "title": "Hello again"}]}"#)
        #expect(await lines.next() == #"{"event":"diff","count":2,"inserted":[20],"updated":[10],"moved":[],"deleted":[]}"#)
        try await Self.importPosts(db, #"{"posts": [{"id": 20, "title": "New"}]}"#)
        #expect(await lines.next() == #"{"event":"diff","count":1,"inserted":[],"updated":[],"moved":[],"deleted":[10]}"#)
    }

    @Test("in a real terminal (tmux) it draws the rows, shows rows written by another process, and quits on q",
          .tmuxInstalled)
    func terminal() async throws {
        let tmux = try #require(TmuxSession.executable)
        let (directory, db) = try Self.scratch()
        defer { directory.remove() }
        try await Self.importPosts(db, #"{"posts": [{"id": 10, "title": "Hello", "published": true}]}"#)
        // Highlights that last: a capture on a loaded machine may come seconds after the draw.
        let session = try Self.watch(tmux, directory, "--db \(db) Post --sort -id --section published --poll 20 --highlight 60")
        defer { session.kill() }
        let first = await session.pane(showing: "Hello")
        #expect(first.contains("replica watch Post sort -id by published"))
        #expect(first.contains("1 row · 0 updates"))
        #expect(first.contains("── true"))
        #expect(first.contains("10  1       Hello"))
        try await Self.importPosts(db, #"{"posts": [{"id": 10, "title": "Hello", "published": true}, {"id": 21, "title": "Fresh post"}]}"#)
        // Highlighted as inserted, black on green, for a moment: captured with its colours as it is drawn
        // (a second capture could come after the highlight faded on a loaded machine).
        let highlighted = { (screen: String) in
            screen.contains("\u{1B}[30m\u{1B}[42m21  1       Fresh post") || screen.contains("\u{1B}[30;42m21")
        }
        let colored = await session.pane(colors: true) { highlighted($0) }
        #expect(highlighted(colored), "\(colored)")
        let second = await session.pane(showing: "Fresh post")
        #expect(second.contains("2 rows · 1 updates"))
        #expect(second.contains("── false"))
        #expect(second.contains("21  1       Fresh post"))
        #expect(await session.quit(), "watch did not quit on q")
    }

    @Test("in a terminal it scrolls by line, page and to either end, shows the rows in view, and follows a resize",
          .tmuxInstalled)
    func scrolling() async throws {
        let tmux = try #require(TmuxSession.executable)
        let (directory, db) = try Self.scratch()
        defer { directory.remove() }
        let posts = (1 ... 3000).map { #"{"id": \#($0), "title": "Post \#($0)"}"# }.joined(separator: ", ")
        try await Self.importPosts(db, #"{"posts": ["# + posts + "]}")
        let session = try Self.watch(tmux, directory, "--db \(db) Post --sort id --poll 20")
        defer { session.kill() }
        // 20 lines: title, status, column names, 16 rows, the position line.
        let first = await session.pane(showing: "rows 1–16 of 3,000")
        #expect(first.contains("3,000 rows · 0 updates"))
        #expect(first.contains("Post 16") && !first.contains("Post 17"), "\(first)")
        #expect(first.split(separator: "\n").last?.hasPrefix("rows 1–16 of 3,000 · ↑↓ PgUp PgDn Home End (g G) · q quits") == true)
        session.sendKeys("End")
        let end = await session.pane(showing: "rows 2,985–3,000 of 3,000")
        #expect(end.contains("Post 3000") && end.contains("Post 2985") && !end.contains("Post 2984 "), "\(end)")
        session.sendKeys("Down")   // already at the end: stays
        session.sendKeys("Home")
        #expect(await session.pane(showing: "rows 1–16 of 3,000").contains("Post 1 "))
        session.sendKeys("PageDown")
        #expect(await session.pane(showing: "rows 16–31 of 3,000").contains("Post 31"))
        session.sendKeys("Up")
        _ = await session.pane(showing: "rows 15–30 of 3,000")
        session.sendKeys("G")
        _ = await session.pane(showing: "rows 2,985–3,000 of 3,000")
        session.sendKeys("PageUp")
        _ = await session.pane(showing: "rows 2,970–2,985 of 3,000")
        session.sendKeys("g")
        _ = await session.pane(showing: "rows 1–16 of 3,000")
        // A taller terminal shows more rows at once.
        session.run(["resize-window", "-t", session.name, "-y", "30"])
        let tall = await session.pane(showing: "rows 1–26 of 3,000")
        #expect(tall.contains("Post 26"), "\(tall)")
        // A row written by another process while the view is scrolled: the count follows.
        session.sendKeys("End")
        _ = await session.pane(showing: "rows 2,975–3,000 of 3,000")
        // The route deletes stale posts: send them all again, with one more.
        try await Self.importPosts(db, #"{"posts": ["# + posts + #", {"id": 3001, "title": "Post 3001"}]}"#)
        let grown = await session.pane(showing: "of 3,001")
        #expect(grown.contains("3,001 rows · 1 updates"), "\(grown)")
        session.sendKeys("End")
        #expect(await session.pane(showing: "rows 2,976–3,001 of 3,001").contains("Post 3001"))
        #expect(await session.quit(), "watch did not quit on q")
    }

    @Test("on a 1,000,000-row table: the first screen, End shows the last row, and another process's write arrives",
          .tmuxInstalled)
    func millionRows() async throws {
        let tmux = try #require(TmuxSession.executable)
        let (directory, db) = try Self.scratch()
        defer { directory.remove() }
        let store = try Store(path: db)
        try await store.database.write { db in
            try db.execute(sql: """
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000000)
                INSERT INTO posts (id, userID, title, published) SELECT x, 1 + x % 3, printf('Post %07d', x), 0 FROM n
                """)
        }
        let session = try Self.watch(tmux, directory, "--db \(db) Post --sort title --poll 50")
        defer { session.kill() }
        let first = await session.pane(showing: "rows 1–16 of 1,000,000", within: 120)
        #expect(first.contains("1,000,000 rows · 0 updates") && first.contains("Post 0000016") && !first.contains("Post 0000017"),
                "\(first)")
        session.sendKeys("End")
        let end = await session.pane(showing: "rows 999,985–1,000,000 of 1,000,000", within: 30)
        #expect(end.contains("Post 1000000") && end.contains("Post 0999985"), "\(end)")
        session.sendKeys("PageUp")
        #expect(await session.pane(showing: "rows 999,970–999,985 of 1,000,000", within: 30).contains("Post 0999970"))
        // Another process writes: the view learns of it through SQLite's data_version.
        let output = try await ReplicaTool.run(["import", "--db", db, "--entity", "Post", "-"],
                                               stdin: Data(#"{"id": 1000001, "title": "Post 1000001"}"#.utf8))
        #expect(output.status == 0, "\(output.stderr)")
        let grown = await session.pane(showing: "of 1,000,001", within: 60)
        // One update, or two: the importing process commits, then, closing the database as its last
        // user, checkpoints the WAL, which other connections also see through `data_version` (and
        // past 10,000 rows every change by another process reaches the view as a reset).
        #expect(grown.contains("1,000,001 rows · 1 updates") || grown.contains("1,000,001 rows · 2 updates"), "\(grown)")
        session.sendKeys("End")
        #expect(await session.pane(showing: "rows 999,986–1,000,001 of 1,000,001", within: 30).contains("Post 1000001"))
        #expect(await session.quit(), "watch did not quit on q")
    }
}

/// Reads lines from a pipe, each wait on a thread of its own, so that a child that is slow to print
/// on a loaded machine holds none of Swift's cooperative threads.
/// `@unchecked Sendable`: one test calls `next()` at a time, awaiting each call before the next.
/// `replica watch` running as a child process, its standard output read line by line.
struct RunningWatch {
    let process: Process
    let lines: LineReader

    /// Ends the watch (when its `--duration` has not) and waits for it.
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

extension LineReader {
    /// Starts `replica watch` with `arguments` (after `watch`); its standard error is dropped.
    static func watch(_ arguments: [String]) throws -> RunningWatch {
        let process = Process()
        process.executableURL = ReplicaTool.productsDirectory.appendingPathComponent("replica")
        process.arguments = ["watch"] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        return RunningWatch(process: process, lines: LineReader(out.fileHandleForReading))
    }
}

final class LineReader: @unchecked Sendable {
    let handle: FileHandle
    var buffer: [UInt8] = []

    init(_ handle: FileHandle) { self.handle = handle }

    /// The next line, without its newline; nil once the pipe is closed.
    func next() async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { [self] in continuation.resume(returning: nextBlocking()) }
        }
    }

    private func nextBlocking() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            // `availableData` returns what the pipe holds now; `read(upToCount:)` would wait for a full count.
            let chunk = handle.availableData
            guard !chunk.isEmpty else { return nil }
            buffer += chunk
        }
    }
}
