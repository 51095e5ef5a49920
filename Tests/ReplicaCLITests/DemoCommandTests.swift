import Foundation
import ReplicaTestSupport
import Testing

@Suite("replica demo")
struct DemoCommandTests {
    /// A small, fast demo: 60 users, little latency, frequent changes and syncs.
    static let quickOptions = ["--users", "60", "--latency", "2", "--change-every", "0.2", "--every", "0.3"]

    @Test("off a terminal it syncs every kind of route, runs for --duration, prints its summary and exits 0")
    func summary() async throws {
        let directory = try TemporaryDirectory("replica-demo")
        defer { directory.remove() }
        let db = directory.path("blog.sqlite")
        let output = try await ReplicaTool.run(["demo", "--duration", "3", "--db", db] + Self.quickOptions)
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("replica demo: mock API at http://127.0.0.1:") == true, "\(lines)")
        // The generated data is the same on every run (seed 1).
        #expect(lines.contains { $0.hasPrefix("  generated 60 users, 227 posts, 347 comments in ") })
        #expect(lines.contains { $0.hasPrefix("  GET /bootstrap (MANY): 60 objects, 60 rows inserted, in ") })
        #expect(lines.contains { $0.hasPrefix("  GET /users/:userID/posts (scope): 60 requests, 227 objects, 227 rows inserted, in ") })
        #expect(lines.contains { $0.hasPrefix("  GET /posts/:postID/comments (scope): 18 requests, 23 objects, 23 rows inserted, in ") })
        #expect(lines.contains(#"  GET /stats (DATA, not stored): {"users":60,"posts":227,"comments":347}"#))
        #expect(lines.contains { $0.hasPrefix("  synced 310 objects with 79 requests in ") && $0.hasSuffix(" into \(db)") })
        #expect(lines.contains("  live: watching GET /users/1/posts (18 posts in 2 sections by published) while the server changes"))

        // The live part: the server changed, periodic syncs pulled the changes, diffs arrived.
        let live = try #require(lines.first { $0.hasPrefix("  live for ") })
        #expect(Self.number(in: live, before: " server changes") ?? 0 >= 5, "\(live)")
        let syncs = try #require(lines.first { $0.contains(" periodic syncs (") })
        #expect(Self.number(in: syncs, before: " periodic syncs") ?? 0 >= 4, "\(syncs)")
        #expect(syncs.contains(" 0 failed"), "\(syncs)")
        #expect(Self.number(in: syncs, before: " diffs received") ?? 0 >= 1, "\(syncs)")
        let final = try #require(lines.first { $0.hasPrefix("  GET /users/1/posts now: ") })
        #expect(final.hasSuffix(" (in sync)"), "\(final)")
        #expect(lines.last == "  try: replica query --db \(db) Post --where 'userID = ?' --arg 1 --sort -createdAt")

        // The file holds the replica: every user, and the featured user's posts as the server has them.
        let users = try await ReplicaTool.run(["query", "--db", db, "User", "--format", "json"])
        #expect(users.status == 0, "\(users.stderr)")
        #expect(users.stdout.components(separatedBy: "\"userID\":").count - 1 == 60)
        let posts = try await ReplicaTool.run(["query", "--db", db, "Post", "--where", "userID = ?", "--arg", "1", "--format", "json"])
        #expect(posts.stdout.components(separatedBy: "\"id\":").count - 1 == Self.number(in: final, before: " in the replica"))
    }

    @Test("invalid options are refused before anything starts", arguments: [
        (["--users", "0"], "Error: --users takes a whole number from 1 to 1000000, not 0"),
        (["--duration", "0"], "Error: --duration takes a number of seconds above 0 up to 31536000, not 0.0"),
        (["--every", "0"], "Error: --every takes a number of seconds above 0 up to 31536000, not 0.0"),
    ])
    func invalidOptions(arguments: [String], message: String) async throws {
        let output = try await ReplicaTool.run(["demo"] + arguments)
        #expect(output.status != 0)
        #expect(output.stderr.contains(message), "\(output.stderr)")
    }

    @Test("in a real terminal (tmux) it shows the live view of a user's posts in sections, updating, and quits on q",
          .tmuxInstalled)
    func terminal() async throws {
        let tmux = try #require(TmuxSession.executable)
        let directory = try TemporaryDirectory("replica-demo")
        defer { directory.remove() }
        let db = directory.path("blog.sqlite")
        let replica = ReplicaTool.productsDirectory.appendingPathComponent("replica").path
        let command = ([replica, "demo", "--db", db, "--duration", "60"] + Self.quickOptions).joined(separator: " ")
        let session = try TmuxSession(executable: tmux, directory: directory.url, command: command, columns: 120, rows: 40)
        defer { session.kill() }
        let first = await session.pane(showing: "replica demo · GET /users/1/posts · sections by published", within: 30)
        #expect(first.contains("── false"), "\(first)")
        #expect(first.contains("── true"), "\(first)")
        let header = first.split(separator: "\n").first { $0.hasPrefix("id ") }.map(String.init) ?? ""
        #expect(["title", "published", "tags", "createdAt"].allSatisfy(header.contains), "\(first)")
        #expect(first.contains("periodic syncs ("), "\(first)")
        // Changes on the server reach the view: the update count grows past zero.
        let changed = await session.pane(within: 20) { screen in
            guard let line = screen.split(separator: "\n").first(where: { $0.contains(" updates · ") }) else { return false }
            return !line.contains(" 0 updates")
        }
        #expect(!changed.contains(" 0 updates · "), "\(changed)")
        session.sendKeys("q")
        #expect(await session.waitForExit(within: 10), "the demo did not quit on q")
    }

    @Test("the built-in schema is Schemas/blog.json")
    func builtInSchema() throws {
        let root = packageRoot
        let source = try String(contentsOf: root.appendingPathComponent("Sources/replica/Demo/DemoSchema.swift"), encoding: .utf8)
        let file = try String(contentsOf: root.appendingPathComponent("Schemas/blog.json"), encoding: .utf8)
        let start = try #require(source.range(of: "#\"\"\"\n"))
        let end = try #require(source.range(of: "\n\"\"\"#", range: start.upperBound ..< source.endIndex))
        #expect(String(source[start.upperBound ..< end.lowerBound]) + "\n" == file)
    }

    /// The integer just before `marker` in `line` ("13 server changes" → 13).
    static func number(in line: String, before marker: String) -> Int? {
        guard let range = line.range(of: marker) else { return nil }
        let digits = line[..<range.lowerBound].reversed().prefix { $0.isNumber || $0 == "," }
        return Int(String(digits.reversed()).replacingOccurrences(of: ",", with: ""))
    }
}
