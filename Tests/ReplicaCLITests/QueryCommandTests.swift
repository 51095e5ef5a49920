import Foundation
import GRDB
import Replica
import ReplicaTestSupport
import Testing

@Suite("replica query")
struct QueryCommandTests {
    /// A blog store with three users, in a temporary directory.
    static func makeStore() throws -> (directory: TemporaryDirectory, path: String) {
        let directory = try TemporaryDirectory("replica-cli")
        let path = directory.path("blog.sqlite")
        do {
            let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/blog.json"))
            let store = try Store(path: path, schema: schema)
            try store.database.write { db in
                try db.execute(sql: """
                    INSERT INTO users (userID, name, email, friends, createdAt) VALUES
                      (1, 'Ann', 'ann@example.com', '[2,3]', 1714566896),
                      (2, 'Bob', NULL, NULL, NULL),
                      (3, 'Cleo', 'cleo@example.com', '[]', 1714566896.5)
                    """)
            }
        } catch {
            directory.remove()
            throw error
        }
        return (directory, path)
    }

    @Test("prints an aligned table")
    func table() async throws {
        let (directory, path) = try Self.makeStore()
        defer { directory.remove() }
        let output = try await ReplicaTool.run(["query", "--db", path, "User", "--where", "userID >= ?", "--arg", "2",
                                          "--sort", "-name"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout == """
            userID  name  email             avatarSm  friends  createdAt
            ------  ----  ----------------  --------  -------  ------------------------
            3       Cleo  cleo@example.com  null      []       2024-05-01T12:34:56.500Z
            2       Bob   null              null      null     null
            (2 rows)

            """)
    }

    @Test("text holding NUL and control characters is printed whole: visible in the table, escaped in JSON")
    func controlCharacters() async throws {
        let (directory, path) = try Self.makeStore()
        defer { directory.remove() }
        let store = try Store(path: path)
        try await store.database.write { db in
            try db.execute(sql: "UPDATE users SET name = 'a' || char(0) || 'b' || char(9) || 'c' WHERE userID = 2")
        }
        #expect(try store.rows("User", where: "userID = 2").first?["name"] == .string("a\u{0}b\tc"))
        let table = try await ReplicaTool.run(["query", "--db", path, "User", "--where", "userID = 2"])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("a␀b␉c"), "\(table.stdout)")
        let json = try await ReplicaTool.run(["query", "--db", path, "User", "--where", "userID = 2", "--format", "json"])
        #expect(json.stdout.contains(#""name":"a\u0000b\tc""#), "\(json.stdout)")
    }

    @Test("ndjson prints one object per line; json one array")
    func ndjson() async throws {
        let (directory, path) = try Self.makeStore()
        defer { directory.remove() }
        let output = try await ReplicaTool.run(["query", "--db", path, "User", "--sort", "name", "--limit", "2", "--format", "ndjson"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout == """
            {"userID":1,"name":"Ann","email":"ann@example.com","avatarSm":null,"friends":[2,3],"createdAt":"2024-05-01T12:34:56Z"}
            {"userID":2,"name":"Bob","email":null,"avatarSm":null,"friends":null,"createdAt":null}

            """)
        let empty = try await ReplicaTool.run(["query", "--db", path, "User", "--where", "0", "--format", "ndjson"])
        #expect(empty.stdout == "")
        let array = try await ReplicaTool.run(["query", "--db", path, "User", "--where", "0", "--format", "json"])
        #expect(array.stdout == "[]\n")
    }

    @Test("typed --arg values: s: keeps text as written, i: and d: are numbers, null is NULL")
    func typedArguments() async throws {
        let (directory, path) = try Self.makeStore()
        defer { directory.remove() }
        let store = try Store(path: path)
        try await store.database.write { db in try db.execute(sql: "UPDATE users SET email = '02134' WHERE userID = 3") }
        func ids(_ arguments: [String]) async throws -> String {
            let output = try await ReplicaTool.run(["query", "--db", path, "User", "--format", "ndjson"] + arguments)
            #expect(output.status == 0, "\(output.stderr)")
            return output.stdout.split(separator: "\n").map { line in
                String(line.split(separator: ",").first ?? "")
            }.joined(separator: " ")
        }
        #expect(try await ids(["--where", "email = ?", "--arg", "02134"]) == "")
        #expect(try await ids(["--where", "email = ?", "--arg", "s:02134"]) == #"{"userID":3"#)
        #expect(try await ids(["--where", "userID = ?", "--arg", "i:2"]) == #"{"userID":2"#)
        #expect(try await ids(["--where", "userID < ?", "--arg", "d:1.5"]) == #"{"userID":1"#)
        #expect(try await ids(["--where", "email IS ?", "--arg", "null"]) == #"{"userID":2"#)
        let bad = try await ReplicaTool.run(["query", "--db", path, "User", "--where", "userID = ?", "--arg", "i:two"])
        #expect(bad.status == 64)
        #expect(bad.stderr.hasPrefix("Error: --arg i:two: i: takes a whole number from"), "\(bad.stderr)")
    }

    @Test("prints JSON for scripts")
    func json() async throws {
        let (directory, path) = try Self.makeStore()
        defer { directory.remove() }
        let output = try await ReplicaTool.run(["query", "--db", path, "users", "--sort", "name", "--limit", "2", "--format", "json"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout == """
            [{"userID":1,"name":"Ann","email":"ann@example.com","avatarSm":null,"friends":[2,3],"createdAt":"2024-05-01T12:34:56Z"},
            {"userID":2,"name":"Bob","email":null,"avatarSm":null,"friends":null,"createdAt":null}]

            """)
    }

    @Test("user errors exit non-zero with one line on stderr",
          arguments: [
            (["User", "--sort", "nmae"], "cannot sort by 'nmae'"),
            (["Users"], "unknown entity 'Users'"),
            (["User", "--where", "name = = ?", "--arg", "x"], #"invalid SQL: near "=": syntax error"#),
            (["User", "--where", "1; DELETE FROM users"], "more than one SQL statement (a ';' separates them); give a single expression"),
            (["User", "--where", "userID = ? AND name = ?", "--arg", "1"], "the where-clause has 2 ? placeholders but 1 value was given"),
            (["User", "--where", "userID = ?"], "the where-clause has 1 ? placeholder but 0 values were given"),
          ])
    func userErrors(arguments: [String], fragment: String) async throws {
        let (directory, path) = try Self.makeStore()
        defer { directory.remove() }
        let output = try await ReplicaTool.run(["query", "--db", path] + arguments)
        #expect(output.status == 1)
        #expect(output.stdout == "")
        #expect(output.stderr.hasPrefix("Error: \(path): "), "\(output.stderr)")
        #expect(output.stderr.contains(fragment), "\(output.stderr)")
        #expect(output.stderr.split(separator: "\n").count == 1)
        #expect(!output.stderr.contains("SQLite error") && !output.stderr.contains("Database.execute"), "\(output.stderr)")
    }

    @Test("a missing database file is an error, not a new empty file")
    func missingDatabase() async throws {
        let output = try await ReplicaTool.run(["query", "--db", "/nonexistent/blog.sqlite", "User"])
        #expect(output.status == 1)
        #expect(output.stderr == "Error: /nonexistent/blog.sqlite: no such database file\n")
        #expect(!FileManager.default.fileExists(atPath: "/nonexistent/blog.sqlite"))
    }
}

@Suite("replica sync")
struct SyncCommandTests {
    @Test("a path no route matches is refused, named, before any request (the client would answer it ad hoc)")
    func unroutedPath() async throws {
        let (directory, path) = try QueryCommandTests.makeStore()
        defer { directory.remove() }
        // Port 9 (discard): a request would fail with a connection error, not this one.
        let output = try await ReplicaTool.run(["sync", "--db", path, "--base-url", "http://127.0.0.1:9", "/nowhere"])
        #expect(output.status == 1)
        #expect(output.stderr.hasPrefix("Error: /nowhere: no route for GET /nowhere"), "\(output.stderr)")
    }
}
