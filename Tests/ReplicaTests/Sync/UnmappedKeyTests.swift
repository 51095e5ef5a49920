import Foundation
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// A store of ``GitHubFixture``'s schema.
private struct GitHubStore {
    let store: Store
    let engine: SQLiteReplica

    init(_ schemaJSON: String) throws {
        store = try Store.inMemory(schema: try Schema(json: Data(schemaJSON.utf8)))
        engine = try SQLiteReplica(store: store)
    }

    func sync(_ path: String, _ json: String, options: SyncOptions = SyncOptions()) async throws -> SyncResult {
        try await engine.sync(.get, path, body: Data(json.utf8), options: options)
    }

    /// The text stored in the column of kept keys, by primary key.
    func kept(_ entity: String, column: String = "unmapped") throws -> [String?] {
        try store.rows(entity).sorted { ($0.primaryKey.int64Value ?? 0) < ($1.primaryKey.int64Value ?? 0) }.map { row in
            switch row[column] {
            case .json(let value)?: value.serialized()
            case .string(let text)?: text
            default: nil
            }
        }
    }
}

extension AttributeValue {
    fileprivate var int64Value: Int64? { if case .integer(let i) = self { i } else { nil } }
}


@Suite("Unmapped keys: warn, ignore, keep; ignoreKeys")
struct UnmappedKeyTests {
    @Test("globs: * any run, ? one character; dotted key paths match in full or by their last component")
    func globs() {
        #expect(KeyGlob("*_url").matches("html_url"))
        #expect(KeyGlob("*_url").matches("_url"))
        #expect(!KeyGlob("*_url").matches("url"))
        #expect(!KeyGlob("*_url").matches("html_urls"))
        #expect(KeyGlob("node_?d").matches("node_id"))
        #expect(!KeyGlob("node_?d").matches("node_iid"))
        #expect(KeyGlob("?").matches("é"))
        #expect(KeyGlob("*").matches(""))
        #expect(KeyGlob("a*b*c").matches("aXbYbZc"))
        #expect(!KeyGlob("a*b*c").matches("aXbY"))
        #expect(KeyGlob("*_url").matches("owner.avatar_url"))
        #expect(KeyGlob("owner.*").matches("owner.login"))
        #expect(!KeyGlob("owner").matches("owner.login"))
        #expect(KeyGlob("login").matches("owner.login"))
    }

    @Test("warn (the default) names every key of every entity; ignoreKeys drops keys on both paths without a word")
    func warnAndIgnoreKeys() async throws {
        let github = try GitHubStore(GitHubFixture.schema(ignoreKeys: ["node_id"]))
        let result = try await github.sync("/repos/octocat/Hello-World/issues", GitHubFixture.issues)
        #expect(result.ignoredKeys.map(\.description) == [
            "Issue.author_association × 2 (first at /0/author_association)", "User.avatar_url × 2 (first at /0/user/avatar_url)",
            "Issue.comments × 2 (first at /0/comments)", "Issue.comments_url × 2 (first at /0/comments_url)",
            "User.gravatar_id × 2 (first at /0/user/gravatar_id)", "Issue.html_url × 2 (first at /0/html_url)",
            "User.html_url × 2 (first at /0/user/html_url)", "Issue.labels × 2 (first at /0/labels)",
            "Issue.labels_url × 2 (first at /0/labels_url)", "Issue.locked × 2 (first at /0/locked)",
            "Issue.repository_url × 2 (first at /0/repository_url)", "User.site_admin × 2 (first at /0/user/site_admin)",
            "Issue.url × 2 (first at /0/url)", "User.url × 2 (first at /0/user/url)",
        ])
        #expect(result.ignoredKeyCount == 28)
        let users = try GitHubStore(GitHubFixture.schema(ignoreKeys: ["node_id", "*_url", "gravatar_?d"]))
        let flat = try await users.sync("/users", GitHubFixture.users)
        // `url` has no underscore: `*_url` leaves it.
        #expect(flat.ignoredKeys.map(\.description) == ["User.site_admin × 2 (first at /0/site_admin)", "User.url × 2 (first at /0/url)"])
        #expect(flat.ignoredKeyCount == 4)
        #expect(try users.store.count("User") == 2)
    }

    @Test("ignore drops an entity's unmapped keys; another entity still warns; an entity's policy overrides the schema's")
    func ignorePolicy() async throws {
        let github = try GitHubStore(GitHubFixture.schema(issueKeys: "ignore", ignoreKeys: ["node_id"]))
        let result = try await github.sync("/repos/octocat/Hello-World/issues", GitHubFixture.issues)
        #expect(result.ignoredKeys.allSatisfy { $0.entity == "User" })
        #expect(result.ignoredKeyCount == 10)
        let schema = try Schema(name: "s", unmappedKeys: .ignore) {
            Entity("A") { Attribute("id", .integer) }
            Entity("B", unmappedKeys: .warn) { Attribute("id", .integer) }
        }
        #expect(schema.unmappedKeyPolicy(of: try schema.requireEntity("A")) == .ignore)
        #expect(schema.unmappedKeyPolicy(of: try schema.requireEntity("B")) == .warn)
    }

    @Test("keep on the general path: the kept keys as compact JSON in document order, ignored ones left out")
    func keepGeneralPath() async throws {
        let github = try GitHubStore(GitHubFixture.schema(issueKeys: "keep", userKeys: "keep", ignoreKeys: ["node_id"]))
        let result = try await github.sync("/repos/octocat/Hello-World/issues", GitHubFixture.issues)
        #expect(result.ignoredKeys.isEmpty)
        #expect(result.ignoredKeyCount == 0)
        let kept = try github.kept("Issue")
        #expect(kept.first == GitHubFixture.Kept.issue1)
        #expect(kept.count == 2)
        #expect(try github.kept("User").first == GitHubFixture.Kept.user1)
        #expect(try github.store.count("Issue", where: "unmapped = ?", arguments: [.string(GitHubFixture.Kept.issue1)]) == 1)
        #expect(try github.store.count("Issue", where: "json_extract(unmapped, '$.author_association') = 'NONE'") == 1)
    }

    @Test("keep on the fast path: the same JSON as the general path; NULL for an object with no unmapped keys")
    func keepFastPath() async throws {
        let github = try GitHubStore(GitHubFixture.schema(userKeys: "keep", ignoreKeys: ["node_id"]))
        let result = try await github.sync("/users", GitHubFixture.users)
        #expect(result.ignoredKeys.isEmpty)
        let kept = try github.kept("User")
        #expect(kept.first == GitHubFixture.Kept.user1)
        #expect(kept.last == GitHubFixture.Kept.user1.replacingOccurrences(of: "octocat", with: "hubot")
            .replacingOccurrences(of: #""site_admin":false"#, with: #""site_admin":true"#))
        // The object now says it has nothing else: the column is emptied.
        _ = try await github.sync("/users", GitHubFixture.plainUser)
        #expect(try github.kept("User") == [nil, kept.last ?? nil])
        // Through the in-place reader too (flat objects whose every key is mapped).
        _ = try await github.sync("/users", GitHubFixture.users)
        #expect(try github.kept("User") == kept)
        let ndjson = GitHubFixture.plainUser.dropFirst().dropLast() + "\n"
        var options = SyncOptions()
        options.format = .ndjson
        _ = try await github.engine.sync(.get, "/users", body: Data(ndjson.utf8), options: options)
        #expect(try github.kept("User") == [nil, kept.last ?? nil])
    }

    @Test("keep of keys inside key-path objects: nested objects as in the JSON; a glob on the last component drops them")
    func keepNested() async throws {
        let schemaJSON = nestedPlacesSchema.replacingOccurrences(of: #""table": "places","#,
                                                                 with: #""table": "places", "unmappedKeys": "keep", "ignoreKeys": ["*_code"],"#)
        let store = try Store.inMemory(schema: try Schema(json: Data(schemaJSON.utf8)))
        let engine = try SQLiteReplica(store: store)
        _ = try await engine.sync(.get, "/places", body: Data("""
            [{"id": 1, "name": "Home", "address": {"city": "Oslo", "street": "Main", "country_code": "NO", "geo": {"lat": 1.5, "lng": 2}}, "rank": 3}]
            """.utf8), options: SyncOptions())
        let row = try #require(try store.rows("Place").first)
        #expect(row["unmapped"] == .json(try JSONValue(parsing: #"{"address": {"street": "Main", "geo": {"lng": 2}}, "rank": 3}"#)))
        #expect(try store.count("Place", where: "unmapped = ?",
                                arguments: [.string(#"{"address":{"street":"Main","geo":{"lng":2}},"rank":3}"#)]) == 1)
    }

    @Test("strict lists every key that would be dropped, grouped by entity with counts and pointers; nothing is written")
    func strictListsAll() async throws {
        let github = try GitHubStore(GitHubFixture.schema(ignoreKeys: ["node_id", "*_url"]))
        let error = await #expect(throws: SyncError.self) {
            try await github.sync("/repos/octocat/Hello-World/issues", GitHubFixture.issues, options: SyncOptions(strictKeys: true))
        }
        #expect(error?.message == "16 keys matched no attribute or entity: Issue: author_association × 2 (first at /0/author_association), "
                + "comments × 2 (first at /0/comments), labels × 2 (first at /0/labels), locked × 2 (first at /0/locked), "
                + "url × 2 (first at /0/url); User: gravatar_id × 2 (first at /0/user/gravatar_id), "
                + "site_admin × 2 (first at /0/user/site_admin), url × 2 (first at /0/user/url) (strict: nothing was written)")
        #expect(try github.store.count("Issue") == 0)
        #expect(try github.store.count("User") == 0)
        // Kept and ignored keys are not errors.
        let keeping = try GitHubStore(GitHubFixture.schema(issueKeys: "keep", userKeys: "ignore", ignoreKeys: ["node_id"]))
        _ = try await keeping.sync("/repos/octocat/Hello-World/issues", GitHubFixture.issues, options: SyncOptions(strictKeys: true))
        #expect(try keeping.store.count("Issue") == 2)
    }

    @Test("the tally names more than 64 distinct keys")
    func manyKeys() async throws {
        let github = try GitHubStore(GitHubFixture.schema())
        let keys = (0..<100).map { "\"k\($0)\": \($0)" }.joined(separator: ", ")
        let result = try await github.sync("/users", "[{\"id\": 1, \(keys)}]")
        #expect(result.ignoredKeys.count == 100)
        #expect(result.ignoredKeyCount == 100)
    }
}

@Suite("Unmapped keys in the schema")
struct UnmappedKeySchemaTests {
    @Test("the file format and the Swift builder give equal schemas, and the file round-trips")
    func roundTrip() throws {
        let file = try Schema(json: Data(GitHubFixture.schema(issueKeys: "keep", userKeys: "ignore", ignoreKeys: ["*_url", "node_id"]).utf8))
        let issue = try file.requireEntity("Issue")
        #expect(issue.attributes.map(\.name) == ["id", "number", "title", "state", "userID", "unmapped"])
        #expect(issue.unmappedAttribute?.type == .json)
        #expect(file.ignoreKeys == ["*_url", "node_id"])
        let again = try Schema(jsonValue: file.fileJSON)
        #expect(again == file)
        #expect(again.fileJSON == file.fileJSON)
        let built = try Schema(name: "github", ignoreKeys: ["*_url", "node_id"]) {
            Entity("Issue", tableName: "issues", unmappedKeys: .keep) {
                Attribute("id", .integer); Attribute("number", .integer); Attribute("title", .string)
                Attribute("state", .string); Attribute("userID", .integer)
                Relationship.toOne("user", "User", foreignKey: "userID")
            }
            Entity("User", tableName: "users", unmappedKeys: .ignore) {
                Attribute("id", .integer); Attribute("login", .string); Attribute("type", .string)
            }
        }
        #expect(built.entities == file.entities)
        // Validating again does not add a second column.
        let rebuilt = try Schema(name: "github", entities: built.entities)
        #expect(rebuilt.entities[0].attributes.count == 6)
    }

    @Test("invalid values are schema errors with their pointers", arguments: [
        (#"{"name": "s", "unmappedKeys": "drop", "entities": {}}"#,
         "/unmappedKeys: unknown unmappedKeys policy 'drop' (expected one of: warn, ignore, keep)"),
        (#"{"name": "s", "ignoreKeys": "*_url", "entities": {}}"#,
         #"/ignoreKeys: expected an array of key patterns ("*_url"), found string"#),
        (#"{"name": "s", "entities": {"A": {"ignoreKeys": ["x", 1], "attributes": {"id": "integer"}}}}"#,
         "/entities/A/ignoreKeys/1: expected a key pattern as a string, found number"),
        (#"{"name": "s", "entities": {"A": {"ignoreKeys": [""], "attributes": {"id": "integer"}}}}"#,
         "/entities/A/ignoreKeys/0: an empty ignoreKeys pattern matches no key"),
        (#"{"name": "s", "entities": {"A": {"unmappedKeys": "keep", "attributes": {"id": "integer", "unmapped": "string"}}}}"#,
         #"/entities/A/unmappedKeys: entity 'A' keeps its unmapped keys in column 'unmapped', which is also its attribute 'unmapped'; name another column with "unmappedColumn""#),
        (#"{"name": "s", "unmappedKeys": "keep", "entities": {"A": {"unmappedColumn": "ID", "attributes": {"id": "integer"}}}}"#,
         #"/entities/A/unmappedColumn: entity 'A' keeps its unmapped keys in column 'ID', which is also its attribute 'id'; name another column with "unmappedColumn""#),
    ])
    func errors(json: String, message: String) throws {
        let error = #expect(throws: SchemaError.self) { try Schema(json: Data(json.utf8)) }
        #expect(error.map { "\($0.pointer?.description ?? ""): \($0.message)" } == message)
    }

    @Test("adding keep to a stored schema adds the column and keeps the rows; warn/ignore/ignoreKeys changes need no version")
    func migration() async throws {
        let directory = try TemporaryDirectory("replica-unmapped")
        defer { directory.remove() }
        let path = directory.path("github.sqlite")
        do {
            let engine = try SQLiteReplica(store: Store(path: path, schema: try Schema(json: Data(GitHubFixture.schema().utf8))))
            _ = try await engine.sync(.get, "/users", body: Data(GitHubFixture.users.utf8), options: SyncOptions())
        }
        // Same version, another policy and patterns: opens, records them.
        do {
            let store = try Store(path: path, schema: try Schema(json: Data(GitHubFixture.schema(userKeys: "ignore", ignoreKeys: ["*_url"]).utf8)))
            #expect(store.schema.ignoreKeys == ["*_url"])
        }
        // keep at the same version is refused: it adds a column.
        #expect(throws: StoreError.self) {
            try Store(path: path, schema: try Schema(json: Data(GitHubFixture.schema(userKeys: "keep").utf8)))
        }
        let store = try Store(path: path, schema: try Schema(json: Data(GitHubFixture.schema(userKeys: "keep", version: 2).utf8)))
        let engine = try SQLiteReplica(store: store)
        #expect(try store.count("User") == 2)
        #expect(try store.count("User", where: "unmapped IS NULL") == 2)
        _ = try await engine.sync(.get, "/users", body: Data(GitHubFixture.users.utf8), options: SyncOptions())
        #expect(try store.count("User", where: "unmapped IS NOT NULL") == 2)
    }
}
