import Foundation
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// Schemas inferred from samples in the shape of public APIs' documented responses, each then
/// used to import its own samples: no key left unplaced, and a second import changes nothing.
@Suite("Schema inference from samples")
struct SchemaInferenceTests {
    /// A page of a public issue tracker's "list repository issues": a nested user with an id,
    /// labels shared by issues, a pull request link object without an id, a milestone that is
    /// null or an object, a closed_at that is always null here.
    static let issues = """
        [
          {"id": 1, "node_id": "MDU6SXNzdWUx", "number": 1347, "title": "Found a bug", "state": "open", "locked": false,
           "user": {"login": "octocat", "id": 1, "site_admin": false},
           "labels": [{"id": 208045946, "name": "bug", "color": "f29513", "default": true}],
           "comments": 0, "closed_at": null, "created_at": "2011-04-22T13:33:48Z", "score": 1,
           "reactions": {"total_count": 2, "+1": 1, "heart": 1}, "milestone": null},
          {"id": 2, "node_id": "MDU6SXNzdWUy", "number": 1348, "title": "Add dark mode", "state": "closed", "locked": true,
           "user": {"login": "hubot", "id": 2, "site_admin": true},
           "labels": [{"id": 208045947, "name": "enhancement", "color": "a2eeef", "default": false},
                      {"id": 208045946, "name": "bug", "color": "f29513", "default": true}],
           "comments": 3, "closed_at": null, "created_at": "2011-04-23T08:01:02Z", "score": 0.5,
           "reactions": {"total_count": 0, "+1": 0, "heart": 0},
           "milestone": {"id": 1002604, "number": 1, "title": "v1.0", "due_on": "2012-10-09T23:39:01Z"},
           "pull_request": {"url": "https://api.example.com/repos/octocat/Hello-World/pulls/1348", "merged_at": null}}
        ]
        """

    /// A search API's envelope: a count and a flag beside the items.
    static let search = """
        {"total_count": 2, "incomplete_results": false,
         "items": [{"login": "octocat", "id": 1, "type": "User", "score": 1.0},
                   {"login": "mojombo", "id": 3, "type": "User", "score": 0.75}]}
        """

    /// Git references: no id; owner and repository are in the path only.
    static let refs = """
        [{"ref": "refs/heads/main", "node_id": "MDM6UmVm1", "url": "https://api.example.com/repos/o/r/git/refs/heads/main",
          "object": {"sha": "aa218f56b14c9653891f9e74264a383fa43fefbd", "type": "commit"}},
         {"ref": "refs/tags/v1.0", "node_id": "MDM6UmVm2", "url": "https://api.example.com/repos/o/r/git/refs/tags/v1.0",
          "object": {"sha": "7fd1a60b01f91b314f59955a4e4d4e80d8edf11d", "type": "tag"}}]
        """

    static func inferred(_ samples: [(String, String)], name: String = "api") throws -> InferredSchema {
        var inference = SchemaInference(name: name)
        for (route, text) in samples { inference.add(try JSONValue(parsing: text), route: route, source: "sample") }
        return try inference.infer()
    }

    /// Imports `text` through `path` twice: the first warns of no key, the second changes nothing.
    static func importsCleanly(_ schema: Schema, path: String, _ text: String) async throws -> SyncResult {
        let store = try SQLiteReplica(store: Store.inMemory(schema: schema))
        let first = try await store.sync(.get, path, body: Data(text.utf8))
        #expect(first.ignoredKeys.map(\.description) == [], "\(path)")
        let second = try await store.sync(.get, path, body: Data(text.utf8))
        #expect(second.changes.isEmpty, "\(path): \(second.changes)")
        return first
    }

    @Test("issues: nested user and labels become entities, a link object dotted attributes, types over every value")
    func issuesPage() async throws {
        let inferred = try Self.inferred([("/repos/:owner/:repo/issues", Self.issues)])
        let issue = try #require(inferred.fileJSON["entities"]?["Issue"])
        #expect(issue["attributes"] == .parse("""
            {"id": "integer", "nodeID": {"type": "string", "nullable": false}, "number": {"type": "integer", "nullable": false},
             "title": {"type": "string", "nullable": false}, "state": {"type": "string", "nullable": false},
             "locked": {"type": "bool", "nullable": false}, "userID": "integer",
             "comments": {"type": "integer", "nullable": false}, "closedAt": "string",
             "createdAt": {"type": "date", "nullable": false}, "score": {"type": "double", "nullable": false},
             "reactionsTotalCount": {"type": "integer", "jsonKey": "reactions.total_count"},
             "reactionsPlus1": {"type": "integer", "jsonKey": "reactions.+1"},
             "reactionsHeart": {"type": "integer", "jsonKey": "reactions.heart"},
             "milestoneID": "integer",
             "pullRequestUrl": {"type": "string", "jsonKey": "pull_request.url"},
             "pullRequestMergedAt": {"type": "string", "jsonKey": "pull_request.merged_at"},
             "owner": {"type": "string", "description": "filled from the route's :owner"},
             "repo": {"type": "string", "description": "filled from the route's :repo"}}
            """))
        // A label seen under two issues, always whole: its members are required; a milestone seen once is not.
        #expect(inferred.fileJSON["entities"]?["Label"]?["attributes"] == .parse("""
            {"id": "integer", "name": {"type": "string", "nullable": false}, "color": {"type": "string", "nullable": false},
             "default": {"type": "bool", "nullable": false}}
            """))
        #expect(inferred.fileJSON["entities"]?["Milestone"]?["attributes"] == .parse(
            #"{"id": "integer", "number": "integer", "title": "string", "dueOn": "date"}"#))
        #expect(issue["relationships"] == .parse("""
            {"user": {"toOne": "User", "foreignKey": "userID"}, "labels": {"toMany": "Label", "through": "issue_labels"},
             "milestone": {"toOne": "Milestone", "foreignKey": "milestoneID"}}
            """))
        #expect(inferred.schema.entities.map(\.name) == ["Issue", "User", "Label", "Milestone"])
        #expect(inferred.fileJSON["keyConvention"] == "snake_case")
        #expect(inferred.fileJSON["routes"] == .parse(#"[{"path": "/repos/:owner/:repo/issues", "target": "Issue"}]"#))
        #expect(inferred.notes.map(\.description) == [
            "Issue.closedAt at sample /0/closed_at: always null in 2 samples, typed string",
            "Issue.score at sample /0/score: integers and decimals: double",
            "Issue.pullRequestMergedAt at sample /1/pull_request/merged_at: always null in 1 sample, typed string",
        ])
        let result = try await Self.importsCleanly(inferred.schema, path: "/repos/octocat/Hello-World/issues", Self.issues)
        #expect(result.changes["Label"]?.inserted.ints == [208045946, 208045947])
        #expect(result.changes["User"]?.inserted.ints == [1, 2])
    }

    @Test("a search envelope: the items are the collection, the count and flag are left to the response")
    func envelope() async throws {
        let inferred = try Self.inferred([("/search/users", Self.search)])
        #expect(inferred.fileJSON["routes"] == .parse(#"[{"path": "/search/users", "target": "User", "envelope": "items"}]"#))
        #expect(inferred.fileJSON["entities"]?["User"]?["attributes"]?.objectValue?.keys.sorted() == ["id", "login", "score", "type"])
        _ = try await Self.importsCleanly(inferred.schema, path: "/search/users", Self.search)
    }

    @Test("refs without an id: the route's owner and repo and the unique ref make a composite key")
    func compositeKey() async throws {
        let inferred = try Self.inferred([("/repos/:owner/:repo/git/refs", Self.refs)])
        let ref = try #require(inferred.fileJSON["entities"]?["Ref"])
        #expect(ref["primaryKey"] == .parse(#"["owner", "repo", "ref"]"#))
        #expect(inferred.notes.map(\.description).contains(
            "Ref at sample /0/ref: no id: the key is the route's :owner, :repo with ref (unique in 2 objects)"))
        let result = try await Self.importsCleanly(inferred.schema, path: "/repos/octocat/Hello-World/git/refs", Self.refs)
        #expect(result.changes["Ref"]?.inserted.count == 2)
    }

    @Test("nested objects of an entity keyed by a composite key stay dotted attributes of their parent")
    func nestedUnderCompositeEntity() async throws {
        let tags = #"[{"name": "v1.0", "ref": {"id": 5, "sha": "aa"}}, {"name": "v1.1", "ref": {"id": 6, "sha": "bb"}}]"#
        let inferred = try Self.inferred([("/repos/:owner/:repo/git/refs", Self.refs), ("/repos/:owner/:repo/tags", tags)])
        #expect(inferred.fileJSON["entities"]?["Tag"]?["relationships"] == nil)
        #expect(inferred.fileJSON["entities"]?["Tag"]?["attributes"]?["refID"] == .parse(#"{"type": "integer", "jsonKey": "ref.id"}"#))
        _ = try await Self.importsCleanly(inferred.schema, path: "/repos/octocat/Hello-World/tags", tags)
    }

    @Test("several collections keyed by name are a MANY route; a scalar-only sample is DATA")
    func manyAndData() async throws {
        let bootstrap = #"{"users": [{"id": 1, "name": "ann"}], "blog_posts": [{"id": 7, "title": "hi", "user_id": 1}]}"#
        let inferred = try Self.inferred([("/bootstrap", bootstrap), ("/stats", "42")])
        #expect(inferred.fileJSON["routes"] == .parse(#"[{"path": "/bootstrap", "target": "MANY"}, {"path": "/stats", "target": "DATA"}]"#))
        #expect(inferred.schema.entities.map(\.name) == ["User", "BlogPost"])
        _ = try await Self.importsCleanly(inferred.schema, path: "/bootstrap", bootstrap)
    }

    @Test("objects with no key at all are refused, naming the route")
    func noKey() throws {
        let error = #expect(throws: SchemaError.self) {
            _ = try Self.inferred([("/events", #"[{"kind": "push", "at": 1}, {"kind": "push", "at": 1}]"#)])
        }
        #expect(error?.code == .cannotInfer)
        #expect(error?.message.hasPrefix("/events: the objects of Event have no id and no key") == true)
    }

    @Test("a file streams: a top-level array, an envelope, NDJSON; routes default to the file's name")
    func files() async throws {
        let directory = try TemporaryDirectory("replica-infer")
        defer { directory.remove() }
        try Data(Self.search.utf8).write(to: URL(fileURLWithPath: directory.path("users.json")))
        try Data(#"{"id": 1, "name": "Zoë", "numberOfKids": 2}\#n{"id": 2, "name": "Ann", "numberOfKids": 0, "kilometersWalked": 2.5}\#n"#.utf8)
            .write(to: URL(fileURLWithPath: directory.path("people.ndjson")))
        try Data(Self.issues.utf8).write(to: URL(fileURLWithPath: directory.path("issues.json")))
        var inference = SchemaInference(name: "files")
        try inference.addFile(directory.path("users.json"))
        try inference.addFile(directory.path("people.ndjson"))
        try inference.addFile(directory.path("issues.json"), route: "/repos/:owner/:repo/issues")
        let inferred = try inference.infer()
        #expect(inferred.fileJSON["routes"] == .parse("""
            [{"path": "/users", "target": "User", "envelope": "items"}, {"path": "/people", "target": "Person"},
             {"path": "/repos/:owner/:repo/issues", "target": "Issue"}]
            """))
        #expect(inferred.fileJSON["keyConvention"] == "snake_case")
        let person = try #require(inferred.fileJSON["entities"]?["Person"]?["attributes"])
        #expect(person["numberOfKids"] == .parse(#"{"type": "integer", "jsonKey": "numberOfKids", "nullable": false}"#))
        #expect(person["kilometersWalked"] == .parse(#"{"type": "double", "jsonKey": "kilometersWalked"}"#))
        // The issue page's user and the search's users are one entity.
        #expect(inferred.fileJSON["entities"]?["User"]?["attributes"]?.objectValue?.keys.sorted()
                    == ["id", "login", "score", "siteAdmin", "type"])
        #expect(inferred.notes.contains { $0.place.hasPrefix("issues.json /0/closed_at") })
    }
}

private extension JSONValue {
    /// Parses a literal in a test.
    static func parse(_ text: String) -> JSONValue {
        (try? JSONValue(parsing: text)) ?? .string("unparseable: \(text)")
    }
}
