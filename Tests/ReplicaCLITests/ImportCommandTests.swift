import Foundation
import Replica
import ReplicaTestSupport
import Testing

@Suite("replica import")
struct ImportCommandTests {
    static let schema = packageRoot.appendingPathComponent("Schemas/blog.json").path

    /// Two posts, the second with a key no attribute matches.
    static let posts = #"[{"id": 1, "title": "a"}, {"id": 2, "title": "b", "extra": 1}]"#

    /// A scratch folder holding the file `name` with `json`, and the path of a database beside it.
    static func scratch(file name: String, _ json: String) throws -> (directory: TemporaryDirectory, db: String, file: URL) {
        let directory = try TemporaryDirectory("replica-cli")
        let file = directory.url(name)
        do {
            try Data(json.utf8).write(to: file)
        } catch {
            directory.remove()
            throw error
        }
        return (directory, directory.path("blog.sqlite"), file)
    }

    @Test("imports a file by entity with a scope and prints the summary")
    func importByEntity() async throws {
        let (directory, db, file) = try Self.scratch(file: "posts.json", Self.posts)
        defer { directory.remove() }
        let output = try await ReplicaTool.run(["import", "--db", db, "--schema", Self.schema, "--entity", "Post",
                                          "--var", "userID=3", file.path])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr == """
            warning: \(file.path): Post: 1 key matched no attribute and was not stored: extra × 1 (first at /1/extra)
            warning: --strict makes these errors (nothing is written)

            """)
        let summary = output.stdout.trimmingCharacters(in: .newlines)
        #expect(summary.hasPrefix("inserted 2, updated 0, deleted 0, skipped 0 (2 objects, 62 bytes) in "), "\(summary)")
        let strictDB = directory.path("strict.sqlite")
        let strict = try await ReplicaTool.run(["import", "--db", strictDB, "--schema", Self.schema, "--entity", "Post",
                                          "--var", "userID=3", "--strict", file.path])
        #expect(strict.status == 1)
        #expect(strict.stderr == "Error: \(file.path): key 'extra' matches no attribute or relationship of Post at /1/extra "
                + "(strict: nothing was written)\n")
        // The file the failed import would have created is not left behind.
        #expect(!FileManager.default.fileExists(atPath: strictDB))
        #expect(summary.hasSuffix(" objects/s"))
        let store = try Store(path: db)
        #expect(try store.count("Post", where: "userID = 3") == 2)
    }

    @Test("--dry-run reads and maps as an import would, reports the errors an import would fail with, and writes nothing")
    func dryRun() async throws {
        let (directory, db, file) = try Self.scratch(file: "posts.json", Self.posts)
        defer { directory.remove() }
        let output = try await ReplicaTool.run(["import", "--db", db, "--schema", Self.schema, "--entity", "Post",
                                                "--dry-run", file.path])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.hasPrefix("dry run: 2 objects (62 bytes) read, 0 would be skipped; nothing written (in "),
                "\(output.stdout)")
        #expect(output.stderr.hasPrefix("warning: \(file.path): Post: 1 key matched no attribute"), "\(output.stderr)")
        #expect(!FileManager.default.fileExists(atPath: db), "a dry run with --schema creates no database file")

        // Against an existing database: its recorded schema, and its rows stay as they were.
        _ = try await ReplicaTool.run(["import", "--db", db, "--schema", Self.schema, "--entity", "Post", file.path])
        try Data(#"[{"id": 3, "title": "c"}, {"id": "x"}]"#.utf8).write(to: file)
        let failed = try await ReplicaTool.run(["import", "--db", db, "--entity", "Post", "--dry-run", file.path])
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("Post.id at /1/id: cannot convert \"x\" to integer"), "\(failed.stderr)")
        let skipped = try await ReplicaTool.run(["import", "--db", db, "--entity", "Post", "--dry-run",
                                                 "--on-invalid", "skip", file.path])
        #expect(skipped.stdout.hasPrefix("dry run: 2 objects (38 bytes) read, 1 would be skipped; nothing written"),
                "\(skipped.stdout)")
        #expect(try Store(path: db).count("Post") == 2)
    }

    @Test("imports standard input through a route, deleting stale rows of its scope")
    func importRouteFromStandardInput() async throws {
        let directory = try TemporaryDirectory("replica-cli")
        defer { directory.remove() }
        let db = directory.path("blog.sqlite")
        let first = try await ReplicaTool.run(["import", "--db", db, "--schema", Self.schema, "--route", "/users/:userID/posts",
                                         "--var", "userID=3", "-"],
                                        stdin: Data(#"{"posts": [{"id": 1, "title": "a"}, {"id": 2, "title": "b"}]}"#.utf8))
        #expect(first.status == 0, "\(first.stderr)")
        let second = try await ReplicaTool.run(["import", "--db", db, "--route", "/users/3/posts", "-"],
                                         stdin: Data(#"{"posts": [{"id": 2, "title": "b"}]}"#.utf8))
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.hasPrefix("inserted 0, updated 0, deleted 1, skipped 0 (1 objects, "), "\(second.stdout)")
    }

    @Test("a --var the route does not have fails naming the route's variables, and writes nothing")
    func unknownRouteVariable() async throws {
        let directory = try TemporaryDirectory("replica-cli")
        defer { directory.remove() }
        let db = directory.path("blog.sqlite")
        let output = try await ReplicaTool.run(["import", "--db", db, "--schema", Self.schema, "--route", "/users/:userID/posts",
                                                "--var", "userId=3", "-"],
                                               stdin: Data(#"{"posts": [{"id": 1, "title": "a"}]}"#.utf8))
        #expect(output.status == 1)
        #expect(output.stderr == "Error: --var userId: route /users/:userID/posts has no variable 'userId' (its variables: userID)\n",
                "\(output.stderr)")
        #expect(!FileManager.default.fileExists(atPath: db))
    }

    @Test("malformed JSON exits non-zero with one line naming file and byte, and changes nothing")
    func malformed() async throws {
        let (directory, db, file) = try Self.scratch(file: "users.json", #"[{"user_id": 1, "name": "a"} {"user_id": 2, "name": "b"}]"#)
        defer { directory.remove() }
        let output = try await ReplicaTool.run(["import", "--db", db, "--schema", Self.schema, "--entity", "User", file.path])
        #expect(output.status == 1)
        #expect(output.stdout == "")
        #expect(output.stderr == "Error: \(file.path): byte 29 (line 1, column 30): unexpected '{': expected ',' or ']' after array element\n")
        #expect(!FileManager.default.fileExists(atPath: db))
        // Into an existing file: it keeps what it held.
        _ = try Store(path: db, schema: Schema(contentsOf: URL(fileURLWithPath: Self.schema)))
        let again = try await ReplicaTool.run(["import", "--db", db, "--entity", "User", file.path])
        #expect(again.status == 1)
        #expect(try Store(path: db).count("User") == 0)
    }

    @Test("invalid objects are skipped and reported with --on-invalid skip")
    func skipInvalid() async throws {
        let (directory, db, file) = try Self.scratch(file: "users.json", #"[{"user_id": 1, "name": "a"}, {"user_id": "x", "name": "b"}]"#)
        defer { directory.remove() }
        let failing = try await ReplicaTool.run(["import", "--db", db, "--schema", Self.schema, "--entity", "User", file.path])
        #expect(failing.status == 1)
        #expect(failing.stderr.contains("User.userID at /1/user_id: cannot convert \"x\" to integer"), "\(failing.stderr)")
        let skipping = try await ReplicaTool.run(["import", "--db", db, "--schema", Self.schema, "--entity", "User",
                                                  "--on-invalid", "skip", file.path])
        #expect(skipping.status == 0)
        #expect(skipping.stdout.hasPrefix("inserted 1, updated 0, deleted 0, skipped 1 "))
        #expect(skipping.stderr.hasPrefix("warning: skipped User at /1: "), "\(skipping.stderr)")
    }

    /// Two users on two lines, Ann with a post: two entities change.
    static let usersNDJSON = #"{"user_id": 1, "name": "Ann", "posts": [{"id": 10, "title": "Hello"}]}"# + "\n"
        + #"{"user_id": 2, "name": "Bob"}"# + "\n"

    /// The summary of `output` up to its timing (`… bytes) in`), which varies from run to run.
    static func counts(_ output: String) -> String {
        guard let range = output.range(of: " in ") else { return output }
        return String(output[..<range.lowerBound])
    }

    @Test("an .ndjson file imports line by line; when several entities change the summary counts each")
    func ndjsonFileAndPerEntitySummary() async throws {
        let (directory, db, file) = try Self.scratch(file: "users.ndjson", Self.usersNDJSON)
        defer { directory.remove() }
        let output = try await ReplicaTool.run(["import", "--db", db, "--schema", Self.schema, "--entity", "User", file.path])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr == "")
        #expect(Self.counts(output.stdout) == "User: inserted 2 · Post: inserted 1; skipped 0 (3 objects, 101 bytes)", "\(output.stdout)")
        #expect(output.stdout.hasSuffix(" objects/s\n"))
        let again = try await ReplicaTool.run(["import", "--db", db, "--entity", "User", file.path])
        #expect(Self.counts(again.stdout) == "inserted 0, updated 0, deleted 0, skipped 0 (3 objects, 101 bytes)", "\(again.stdout)")
        let store = try Store(path: db)
        #expect(try store.count("User") == 2)
        #expect(try store.count("Post", where: "userID = 1") == 1)
    }

    @Test("--format ndjson reads standard input (or any file name) as NDJSON; --format json forces JSON")
    func formatOption() async throws {
        let directory = try TemporaryDirectory("replica-cli")
        defer { directory.remove() }
        let db = directory.path("blog.sqlite")
        let lines = #"{"id": 1, "title": "a"}"# + "\r\n\r\n" + #"{"id": 2, "title": "b"}"#
        let piped = try await ReplicaTool.run(["import", "--db", db, "--schema", Self.schema, "--route", "/users/3/posts",
                                               "--format", "ndjson", "-"], stdin: Data(lines.utf8))
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(Self.counts(piped.stdout) == "inserted 2, updated 0, deleted 0, skipped 0 (2 objects, 50 bytes)", "\(piped.stdout)")
        #expect(try Store(path: db).count("Post", where: "userID = 3") == 2)

        // JSON that goes on after its value on the next line: the error says NDJSON is likely.
        let asJSON = try await ReplicaTool.run(["import", "--db", db, "--entity", "Post", "-"], stdin: Data(lines.utf8))
        #expect(asJSON.status == 1)
        #expect(asJSON.stderr == "Error: -: byte 27 (line 3, column 1): unexpected '{' after the top-level value: expected end of input "
                + "(one JSON value per line is NDJSON: give --format ndjson)\n")
        let file = directory.url("posts.jsonl")
        try Data(#"[{"id": 5, "title": "e"}]"#.utf8).write(to: file)
        let forced = try await ReplicaTool.run(["import", "--db", db, "--entity", "Post", "--format", "json", file.path])
        #expect(forced.status == 0, "\(forced.stderr)")
        let refused = try await ReplicaTool.run(["import", "--db", db, "--route", "/bootstrap", file.path])
        #expect(refused.status == 1)
        #expect(refused.stderr == "Error: NDJSON holds one object per line, but the route GET /bootstrap targets MANY: "
                + "import NDJSON into an entity, or through a route that targets one\n")
    }

    @Test("a malformed NDJSON line exits non-zero naming the line and byte, and nothing is written")
    func malformedNDJSONLine() async throws {
        let text = Self.usersNDJSON + #"{"user_id": 3, "name": "Cleo"]"# + "\n"
        let (directory, db, file) = try Self.scratch(file: "users.ndjson", text)
        defer { directory.remove() }
        let output = try await ReplicaTool.run(["import", "--db", db, "--schema", Self.schema, "--entity", "User", file.path])
        #expect(output.status == 1)
        #expect(output.stdout == "")
        #expect(output.stderr == "Error: \(file.path): byte 130 (line 3, column 30): unexpected ']': expected ',' or '}' after object member\n")
        // The file the failed first import created is not left behind.
        #expect(!FileManager.default.fileExists(atPath: db))
    }
}

@Suite("replica import and schema check: what would fail at the first sync fails before a file is made")
struct FirstImportTests {
    /// An organization as GitHub's `GET /orgs/{org}` returns it, with its plan nested: a key path
    /// `plan.name` beside an attribute `plan` would fail at the first sync.
    static let collidingSchema = """
        { "name": "orgs", "version": 1,
          "entities": { "Organization": { "table": "orgs", "attributes": {
            "id": "integer", "login": "string", "plan": "json", "planName": {"type": "string", "jsonKey": "plan.name"} } } } }
        """

    @Test("a failed first import leaves no database file behind, whatever failed")
    func failedFirstImport() async throws {
        let (directory, db, file) = try ImportCommandTests.scratch(file: "orgs.json", #"[{"id": 1, "login": "github", "plan": {"name": "free"}"#)
        defer { directory.remove() }
        let schema = directory.url("orgs-schema.json")
        try Data(Self.collidingSchema.utf8).write(to: schema)
        let refused = try await ReplicaTool.run(["import", "--db", db, "--schema", schema.path, "--entity", "Organization", file.path])
        #expect(refused.status == 1)
        #expect(refused.stderr.hasPrefix("Error: \(schema.path): /entities/Organization"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: db))
        // A good schema, and input cut short: the file the import created goes again.
        let fixed = Self.collidingSchema.replacingOccurrences(of: #", "planName": {"type": "string", "jsonKey": "plan.name"}"#, with: "")
        try Data(fixed.utf8).write(to: schema)
        let malformed = try await ReplicaTool.run(["import", "--db", db, "--schema", schema.path, "--entity", "Organization", file.path])
        #expect(malformed.status == 1)
        #expect(malformed.stderr.contains("unexpected end of input"), "\(malformed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: db))
        #expect(!FileManager.default.fileExists(atPath: db + "-wal"))
        // A file that existed stays, with what it held.
        try Data(#"[{"id": 1, "login": "github", "plan": {"name": "free"}}]"#.utf8).write(to: file)
        let imported = try await ReplicaTool.run(["import", "--db", db, "--schema", schema.path, "--entity", "Organization", file.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        try Data("[{".utf8).write(to: file)
        let again = try await ReplicaTool.run(["import", "--db", db, "--entity", "Organization", file.path])
        #expect(again.status == 1)
        #expect(try Store(path: db).count("Organization") == 1)
    }

    @Test("schema check makes the checks of opening a store, for each database unless --store names one")
    func schemaCheckOpening() async throws {
        let directory = try TemporaryDirectory("replica-cli")
        defer { directory.remove() }
        let colliding = directory.url("colliding.json")
        try Data(Self.collidingSchema.utf8).write(to: colliding)
        let output = try await ReplicaTool.run(["schema", "check", colliding.path])
        #expect(output.status == 1)
        #expect(output.stdout == "")
        #expect(output.stderr.hasPrefix("Error: \(colliding.path): /entities/Organization"), "\(output.stderr)")
        let system = directory.url("system.json")
        try Data(#"{"name": "jobs", "version": 1, "entities": {"Job": {"attributes": {"id": "integer", "xmin": "integer"}}}}"#.utf8)
            .write(to: system)
        let both = try await ReplicaTool.run(["schema", "check", "-q", system.path])
        #expect(both.status == 1)
        #expect(both.stderr == "Error: \(system.path): /entities/Job/attributes/xmin: attribute 'xmin' of entity 'Job' has the "
                + #"name of a PostgreSQL system column; rename it (its JSON key can stay: "jsonKey")"# + "\n")
        let sqlite = try await ReplicaTool.run(["schema", "check", "-q", "--store", "sqlite", system.path])
        #expect(sqlite.status == 0, "\(sqlite.stderr)")
    }

    @Test("a label nested under two issues of a one-to-many relationship fails naming both; --shared-children last-parent-wins warns")
    func sharedChildren() async throws {
        let schema = #"""
            {"name": "tracker", "entities": {
              "Issue": {"attributes": {"id": "integer", "title": "string"},
                        "relationships": {"labels": {"toMany": "Label", "inverse": "issue"}}},
              "Label": {"attributes": {"id": "integer", "name": "string", "issueID": "integer"},
                        "relationships": {"issue": {"toOne": "Issue", "foreignKey": "issueID"}}}}}
            """#
        let issues = #"[{"id": 1, "title": "a", "labels": [{"id": 7, "name": "bug"}]}, "#
            + #"{"id": 2, "title": "b", "labels": [{"id": 7, "name": "bug"}]}]"#
        let (directory, db, file) = try ImportCommandTests.scratch(file: "issues.json", issues)
        defer { directory.remove() }
        let schemaFile = directory.path("tracker.json")
        try Data(schema.utf8).write(to: URL(fileURLWithPath: schemaFile))
        let failed = try await ReplicaTool.run(["import", "--db", db, "--schema", schemaFile, "--entity", "Issue", file.path])
        #expect(failed.status == 1)
        let claimed: String = "Label 7 at /1/labels/0 is claimed by two Issue objects, 1 (first at /0/labels/0) and 2: "
            + "a Label has one Issue through 'issue', so the second would take it from the first. "
        let fix: String = #"A Label shared by many parents is a many-to-many relationship: give it "through": "<join table>" "#
            + #"instead of "inverse" (or sync with sharedChildren: .lastParentWins to let the last parent keep it)"#
        #expect(failed.stderr == "Error: \(file.path): " + claimed + fix + "\n")
        let kept = try await ReplicaTool.run(["import", "--db", db, "--schema", schemaFile, "--entity", "Issue",
                                              "--shared-children", "last-parent-wins", file.path])
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.stderr == """
            warning: \(file.path): children were nested under two parents of a one-to-many relationship; the last parent \
            kept them: shared child Label.issue × 1 (first at /1/labels/0) (a child shared by many parents is a many-to-many: "through")
            warning: --strict makes these errors (nothing is written)

            """)
        let store = try Store(path: db)
        #expect(try store.rows("Label").map { $0["issueID"] } == [.integer(2)])
    }
}
