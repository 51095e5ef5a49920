import Foundation
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// Scopes that stale deletion stays inside, and the checks a store makes before it creates or
/// records anything, with fixtures shaped like GitHub's REST API (issues per repository).
@Suite("Route scopes and the checks of opening a store")
struct OpeningCheckTests {
    /// GitHub-like issues, listed per repository (`GET /repos/{owner}/{repo}/issues`) and by search.
    static func issues(attributes: String = "", stale: String = "delete") -> String {
        """
        {
          "name": "github", "version": 1, "keyConvention": "snake_case",
          "entities": {
            "Issue": {
              "table": "issues",
              "attributes": { "id": "integer", "number": "integer", "title": "string"\(attributes) }
            }
          },
          "routes": [
            { "path": "/repos/:owner/:repo/issues", "target": "Issue", "stale": "\(stale)" },
            { "path": "/search/issues", "target": "Issue", "envelope": "items" }
          ]
        }
        """
    }

    static func load(_ text: String, file: String = "github.json") throws -> Schema {
        try Schema(json: Data(text.utf8), file: file)
    }

    @Test("a route that deletes stale rows but whose variables name nothing of its entity is refused, naming them and the fixes")
    func unscopedStaleRoute() throws {
        let error = #expect(throws: SchemaError.self) { try Self.load(Self.issues()) }
        #expect(error?.code == .invalidRoute)
        #expect(error?.description == "github.json: /routes/0/stale: route GET /repos/:owner/:repo/issues deletes stale Issue "
                + "rows, but :owner and :repo name no attribute of Issue: it would delete the Issue rows of every owner and "
                + #"repo. Add attributes owner and repo to Issue (filled from the path); or give the route "stale": "keep""#)
        // One variable of two scoped: still wider than the route.
        let half = #expect(throws: SchemaError.self) { try Self.load(Self.issues(attributes: #", "owner": "string""#)) }
        #expect(half?.message.hasPrefix("route GET /repos/:owner/:repo/issues deletes stale Issue rows, but :repo names no "
                                        + "attribute of Issue: it would delete the Issue rows of every repo. Add an attribute repo") == true,
                "\(String(describing: half))")
        // Keeping stale rows, the route may leave its variables unscoped.
        _ = try Self.load(Self.issues(stale: "keep"))
    }

    @Test("scope attributes filled from the path keep each repository's stale deletion to its own issues")
    func scopedStaleDeletion() async throws {
        let schema = try Self.load(Self.issues(attributes: #", "owner": "string", "repo": "string""#))
        let replica = try SQLiteReplica(store: Store.inMemory(schema: schema))
        _ = try await replica.sync(.get, "/repos/apple/swift/issues", body: Data(#"[{"id": 1, "number": 10, "title": "a"}, {"id": 2, "number": 11, "title": "b"}]"#.utf8))
        _ = try await replica.sync(.get, "/repos/vapor/vapor/issues", body: Data(#"[{"id": 3, "number": 1, "title": "c"}]"#.utf8))
        _ = try await replica.sync(.get, "/search/issues", body: Data(#"{"total_count": 1, "items": [{"id": 4, "number": 7, "title": "d"}]}"#.utf8))
        let result = try await replica.sync(.get, "/repos/apple/swift/issues", body: Data(#"[{"id": 2, "number": 11, "title": "b"}]"#.utf8))
        #expect(result.changes["Issue"]?.deleted.integers == [1])
        let rows = try replica.store.rows("Issue", sort: [.ascending("id")])
        #expect(rows.map { $0["id"] } == [.integer(2), .integer(3), .integer(4)])
        #expect(rows.map { $0["owner"] } == [.string("apple"), .string("vapor"), .null])
        #expect(rows.map { $0["repo"] } == [.string("swift"), .string("vapor"), .null])
    }

    @Test("a stale policy given for one sync is checked against the route's scope too")
    func unscopedStaleOption() async throws {
        let replica = try SQLiteReplica(store: Store.inMemory(schema: Self.load(Self.issues(stale: "keep"))))
        let error = await #expect(throws: SyncError.self) {
            try await replica.sync(.get, "/repos/apple/swift/issues", body: Data("[]".utf8),
                                   options: SyncOptions(stalePolicy: .delete))
        }
        #expect(error?.code == .noRoute)
        #expect(error?.description == "GET /repos/apple/swift/issues: route GET /repos/:owner/:repo/issues deletes stale Issue "
                + "rows, but :owner and :repo name no attribute of Issue: it would delete the Issue rows of every owner and "
                + "repo. Add attributes owner and repo to Issue (filled from the path); or keep stale rows for this sync")
    }

    /// An organization (GitHub's `GET /orgs/{org}`) with a nested plan, mapped by key paths.
    static func organization(_ attributes: String) -> String {
        """
        { "name": "orgs", "version": 1,
          "entities": { "Organization": { "table": "orgs", "attributes": { "id": "integer"\(attributes) } } } }
        """
    }

    @Test("what would fail at the first sync fails the check: a key path beside its parent key, two attributes on one key, an unknown transform")
    func mappingChecks() throws {
        let beside = try Self.load(Self.organization(#", "plan": "json", "planName": {"type": "string", "jsonKey": "plan.name"}"#))
        let collision = #expect(throws: SchemaError.self) { try beside.checkOpening(in: .sqlite) }
        #expect(collision?.code == .invalidMapping)
        #expect(collision?.pointer?.description.hasPrefix("/entities/Organization") == true)
        #expect(collision?.message.contains("plan") == true, "\(String(describing: collision))")
        let twice = try Self.load(Self.organization(#", "login": "string", "name": {"type": "string", "jsonKey": "login"}"#))
        #expect(throws: SchemaError.self) { try twice.checkOpening(in: .sqlite) }
        let transform = try Self.load(Self.organization(#", "created": {"type": "date", "transform": "unixSecnds"}"#))
        let unknown = #expect(throws: SchemaError.self) { try transform.checkOpening(in: .postgres) }
        #expect(unknown?.description == "/entities/Organization/attributes/created: unknown transform 'unixSecnds' (known: "
                + "percentage, base64, iso8601, unixSeconds, unixMilliseconds, date:FORMAT)")
        // A store cannot know the replica's transforms: it accepts the name; the replica checks it.
        try transform.checkOpening(in: .sqlite, transforms: nil)
        var registry = TransformRegistry()
        registry.register("unixSecnds") { _ in .null }
        try transform.checkOpening(in: .sqlite, transforms: registry)
    }

    @Test("each database's limits: PostgreSQL's system column names, 63-byte names and 1,600 columns; SQLite's 2,000 columns")
    func databaseLimits() throws {
        let xmin = try Self.load(Self.organization(#", "xmin": "integer""#))
        try xmin.checkOpening(in: .sqlite)
        let reserved = #expect(throws: SchemaError.self) { try xmin.checkOpening(in: .postgres) }
        #expect(reserved?.description == "/entities/Organization/attributes/xmin: attribute 'xmin' of entity 'Organization' has "
                + #"the name of a PostgreSQL system column; rename it (its JSON key can stay: "jsonKey")"#)
        let long = String(repeating: "a", count: 64)
        let longName = try Self.load(Self.organization(#", "\#(long)": "string""#))
        let length = #expect(throws: SchemaError.self) { try longName.checkOpening(in: .postgres) }
        #expect(length?.message == "attribute name '\(long)' is 64 bytes long; PostgreSQL names hold at most 63 bytes")
        let columns = (1...1700).map { #", "c\#($0)": "integer""# }.joined()
        let wide = try Self.load(Self.organization(columns))
        try wide.checkOpening(in: .sqlite)
        let tooWide = #expect(throws: SchemaError.self) { try wide.checkOpening(in: .postgres) }
        #expect(tooWide?.message == "entity 'Organization' has 1701 attributes; a PostgreSQL table holds at most 1600 columns")
        let widest = try Self.load(Self.organization((1...2000).map { #", "c\#($0)": "integer""# }.joined()))
        #expect(throws: SchemaError.self) { try widest.checkOpening(in: .sqlite) }
    }

    @Test("a join table's name, index name and columns meet PostgreSQL's limits too")
    func joinTableLimits() throws {
        func schema(through table: String, keys: String = "") throws -> Schema {
            try Self.load(#"""
                {"name": "t", "entities": {"Issue": {"attributes": {"id": "integer"},
                  "relationships": {"labels": {"toMany": "Label", "through": "\#(table)"\#(keys)}}},
                 "Label": {"attributes": {"id": "integer"}}}}
                """#)
        }
        // The join table's index name is the library's: fitted to 63 bytes, the same every time.
        let long = String(repeating: "j", count: 50)
        let index = try schema(through: long)
        try index.checkOpening(in: .sqlite)
        try index.checkOpening(in: .postgres)
        let issue = try #require(index.entity(named: "Issue"))
        let labels = try #require(issue.relationship(named: "labels"))
        let join = try #require(index.joinTable(for: labels, of: issue))
        let fitted = SchemaDDL.joinIndexName(join)
        #expect(fitted.utf8.count == 63)
        #expect(fitted.hasPrefix(String(repeating: "j", count: 50) + "_lab_"), "\(fitted)")
        #expect(fitted == Identifier.fitted("\(long)_labelID_index"))
        #expect(Identifier.fitted("\(long)_labelID_indey") != fitted)
        #expect(Identifier.fitted("short_index") == "short_index")
        // Cut at a character boundary: 2-byte characters never split.
        let accented = Identifier.fitted(String(repeating: "é", count: 40))
        #expect(accented.utf8.count <= 63 && accented.hasPrefix(String(repeating: "é", count: 27) + "_"), "\(accented)")
        // A table name the schema gives is the user's: too long is still refused, naming it.
        let table = String(repeating: "t", count: 64)
        let named = #expect(throws: SchemaError.self) { try schema(through: table).checkOpening(in: .postgres) }
        #expect(named?.description == "/entities/Issue/relationships/labels/through: join table name "
                + "'\(table)' is 64 bytes long; PostgreSQL names hold at most 63 bytes")
        let xmin = try schema(through: "issue_labels", keys: #", "throughKeys": ["issueID", "xmin"]"#)
        let reserved = #expect(throws: SchemaError.self) { try xmin.checkOpening(in: .postgres) }
        #expect(reserved?.description == "/entities/Issue/relationships/labels/throughKeys/1: column 'xmin' of join table "
                + #"'issue_labels' has the name of a PostgreSQL system column; name the columns with "throughKeys""#)
    }

    @Test("a store refuses a schema that could not sync before it creates the file or records the schema")
    func storeRefusesBeforeWriting() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("orgs.sqlite")
        let bad = try Self.load(Self.organization(#", "plan": "json", "planName": {"type": "string", "jsonKey": "plan.name"}"#))
        let error = #expect(throws: StoreError.self) { _ = try Store(path: path, schema: bad) }
        #expect(error?.code == .invalidSchema)
        #expect(error?.description.hasPrefix("\(path): the schema cannot open a store: /entities/Organization") == true)
        #expect(!FileManager.default.fileExists(atPath: path))
        // An existing file is left as it was: the good schema stays recorded, and usable.
        let good = try Self.load(Self.organization(#", "plan": "json""#))
        _ = try Store(path: path, schema: good)
        var text = Self.organization(#", "plan": "json", "planName": {"type": "string", "jsonKey": "plan.name"}"#)
        text = text.replacingOccurrences(of: #""version": 1"#, with: #""version": 2"#)
        #expect(throws: StoreError.self) { _ = try Store(path: path, schema: try Self.load(text)) }
        #expect(try Store(path: path).schema == good)
        // The replica's own open checks its transforms before the store is created.
        let other = directory.path("other.sqlite")
        let transform = try Self.load(Self.organization(#", "created": {"type": "date", "transform": "unixSecnds"}"#))
        let unknown = #expect(throws: StoreError.self) { _ = try SQLiteReplica(path: other, schema: transform) }
        #expect(unknown?.code == .invalidSchema)
        #expect(!FileManager.default.fileExists(atPath: other))
    }
}
