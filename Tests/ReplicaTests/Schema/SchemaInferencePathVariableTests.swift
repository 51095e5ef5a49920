import Foundation
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// A route variable named like an object of its entity's (`:owner` beside `owner`) is typed from
/// what its value in the sample's path really is: the related object's `login` keys the related
/// entity and scopes the route, its `id` keeps the foreign key, and a value that is no key of the
/// objects (or no value at all) makes a plain variable of its own (`:ownerPath`), never the
/// foreign key, which `octocat` is no valid value of. Each schema then syncs its own sample path.
@Suite("Schema inference: path variables")
struct SchemaInferencePathVariableTests {
    static func inferred(_ text: String, route: String, requestPath: String?) throws -> InferredSchema {
        var inference = SchemaInference(name: "github")
        inference.add(try JSONValue(parsing: text), route: route, source: "repo.json", requestPath: requestPath)
        return try inference.infer()
    }

    /// Syncs `text` as the answer of `path` twice: no key left unplaced, nothing changed the second time.
    static func syncs(_ schema: Schema, path: String, _ text: String) async throws -> SQLiteReplica {
        let store = try SQLiteReplica(store: Store.inMemory(schema: schema))
        let first = try await store.sync(.get, path, body: Data(text.utf8))
        #expect(first.ignoredKeys.map(\.description) == [], "\(path)")
        let second = try await store.sync(.get, path, body: Data(text.utf8))
        #expect(second.changes.isEmpty, "\(path): \(second.changes)")
        return store
    }

    @Test("GitHub's repository at /repos/octocat/Hello-World: :owner is the owner's login, which keys Owner and scopes the route")
    func ownerLogin() async throws {
        let fixture = GitHubRepositoryFixture.self
        let inferred = try Self.inferred(fixture.repository, route: fixture.pattern, requestPath: fixture.path)
        let owner = try #require(inferred.fileJSON["entities"]?["Owner"])
        #expect(owner["primaryKey"] == "login")
        #expect(owner["jsonIdKey"] == "login")
        let repo = try #require(inferred.fileJSON["entities"]?["Repo"])
        #expect(repo["relationships"]?["owner"] == .parse(#"{"toOne": "Owner", "foreignKey": "ownerLogin"}"#))
        #expect(repo["attributes"]?["ownerLogin"] == "string")
        #expect(repo["attributes"]?["ownerID"] == nil)
        // The organization is no path variable: keyed by its id as before.
        #expect(repo["relationships"]?["organization"] == .parse(#"{"toOne": "Organization", "foreignKey": "organizationID"}"#))
        #expect(inferred.fileJSON["routes"] == .parse(#"[{"path": "/repos/:owner/:repo", "target": "Repo"}]"#))
        #expect(inferred.notes.map(\.description).contains(
            "Repo at repo.json /owner/login: :owner is the owner's login ('octocat'): Owner is keyed by login, "
                + "and the route scopes Repo by its foreign key ownerLogin"))

        let resolution = try RouteTable(schema: inferred.schema).resolve(.get, fixture.path)
        #expect(resolution.scope.value(of: "ownerLogin") == .string("octocat"))
        #expect(resolution.scope.value(of: "repo") == .string("Hello-World"))
        #expect(resolution.scope.conditions.count == 2)

        let store = try await Self.syncs(inferred.schema, path: fixture.path, fixture.repository)
        let rows = try store.store.rows("Repo")
        #expect(rows.map(\.primaryKey) == [.integer(1296269)])
        #expect(rows.first?["ownerLogin"] == .string("octocat"))
        #expect(rows.first?["repo"] == .string("Hello-World"))
        #expect(try store.store.rows("Owner").map(\.primaryKey) == [.string("octocat")])
    }

    @Test("without the path's values, or with a value that is no key of the owner, :owner becomes :ownerPath, never the integer foreign key")
    func plainVariable() async throws {
        let fixture = GitHubRepositoryFixture.self
        for requestPath in [nil, "/repos/OctoCat/Hello-World"] {
            let inferred = try Self.inferred(fixture.repository, route: fixture.pattern, requestPath: requestPath)
            let repo = try #require(inferred.fileJSON["entities"]?["Repo"])
            #expect(repo["relationships"]?["owner"] == .parse(#"{"toOne": "Owner", "foreignKey": "ownerID"}"#))
            #expect(repo["attributes"]?["ownerPath"] == .parse(#"{"type": "string", "description": "filled from the route's :owner"}"#))
            #expect(inferred.fileJSON["entities"]?["Owner"]?["primaryKey"] == nil)
            #expect(inferred.fileJSON["routes"] == .parse(#"[{"path": "/repos/:ownerPath/:repo", "target": "Repo"}]"#))
            let why = requestPath == nil ? "no sample's path gave its value" : "its value 'OctoCat' is no key of the owner objects"
            #expect(inferred.notes.map(\.description).contains(
                "Repo at repo.json /owner: :owner names the owner object, but \(why): it is :ownerPath, an attribute filled "
                    + "from the path, not the foreign key ownerID"), "\(inferred.notes)")

            let path = requestPath ?? fixture.path
            let resolution = try RouteTable(schema: inferred.schema).resolve(.get, path)
            #expect(resolution.scope.value(of: "ownerID") == nil)
            #expect(resolution.scope.value(of: "ownerPath") == .string(path == fixture.path ? "octocat" : "OctoCat"))
            let store = try await Self.syncs(inferred.schema, path: path, fixture.repository)
            #expect(try store.store.rows("Repo").first?["ownerID"] == .integer(1))
        }
        // --update: the renamed variable's route is the route the schema declares already.
        let declared = try Self.inferred(fixture.repository, route: fixture.pattern, requestPath: fixture.path)
        let plain = try Self.inferred(fixture.repository, route: fixture.pattern, requestPath: nil)
        #expect(try plain.updating(declared.schema).added.contains { $0.hasPrefix("route") } == false)
    }

    @Test("a value that is the related object's id keeps the foreign key; one that is a member of a keyless object becomes its dotted attribute")
    func idAndDotted() async throws {
        let profile = #"{"id": 5, "bio": "hi", "account": {"id": 7, "login": "ann"}}"#
        let byID = try Self.inferred(profile, route: "/accounts/:account/profile", requestPath: "/accounts/7/profile")
        #expect(byID.fileJSON["routes"] == .parse(#"[{"path": "/accounts/:account/profile", "target": "Profile"}]"#))
        #expect(byID.fileJSON["entities"]?["Profile"]?["relationships"]?["account"]
                    == .parse(#"{"toOne": "Account", "foreignKey": "accountID"}"#))
        #expect(try RouteTable(schema: byID.schema).resolve(.get, "/accounts/7/profile").scope.value(of: "accountID") == .integer(7))
        _ = try await Self.syncs(byID.schema, path: "/accounts/7/profile", profile)

        let site = #"{"id": 3, "title": "Notes", "owner": {"handle": "ann", "plan": "free"}}"#
        let dotted = try Self.inferred(site, route: "/sites/:owner/:site", requestPath: "/sites/ann/3")
        #expect(dotted.fileJSON["routes"] == .parse(#"[{"path": "/sites/:ownerHandle/:site", "target": "Site"}]"#))
        #expect(dotted.fileJSON["entities"]?["Site"]?["attributes"]?["ownerHandle"] == .parse(#"{"type": "string", "jsonKey": "owner.handle"}"#))
        #expect(try RouteTable(schema: dotted.schema).resolve(.get, "/sites/ann/3").scope.value(of: "ownerHandle") == .string("ann"))
        _ = try await Self.syncs(dotted.schema, path: "/sites/ann/3", site)
    }

    @Test("a list at /users/octocat/repos, streamed from a file: every repository's owner is octocat, so :owner keys Owner by login")
    func ownersList() async throws {
        let repos = """
            [{"id": 1296269, "name": "Hello-World", "owner": {"login": "octocat", "id": 1}},
             {"id": 1300192, "name": "Spoon-Knife", "owner": {"login": "octocat", "id": 1}}]
            """
        let directory = try TemporaryDirectory("replica-infer-owner")
        defer { directory.remove() }
        try Data(repos.utf8).write(to: URL(fileURLWithPath: directory.path("repos.json")))
        var inference = SchemaInference(name: "github")
        try inference.addFile(directory.path("repos.json"), route: "/users/:owner/repos", requestPath: "/users/octocat/repos?per_page=2")
        let inferred = try inference.infer()
        #expect(inferred.fileJSON["routes"] == .parse(#"[{"path": "/users/:owner/repos", "target": "Repo"}]"#))
        #expect(inferred.fileJSON["entities"]?["Owner"]?["primaryKey"] == "login")
        let resolution = try RouteTable(schema: inferred.schema).resolve(.get, "/users/octocat/repos")
        #expect(resolution.scope.value(of: "ownerLogin") == .string("octocat"))
        let store = try await Self.syncs(inferred.schema, path: "/users/octocat/repos", repos)
        #expect(try store.store.rows("Repo").map { $0["ownerLogin"] } == [.string("octocat"), .string("octocat")])
    }

    @Test("a request path that does not match its route is refused, naming both and the file")
    func mismatchedPath() throws {
        var inference = SchemaInference()
        let error = #expect(throws: SchemaError.self) {
            try inference.addFile("repo.json", route: "/repos/:owner/:repo", requestPath: "/users/octocat")
        }
        #expect(error?.message == "/users/octocat does not match the route /repos/:owner/:repo that repo.json is given for")
        #expect(RouteSamples.variableValues(in: "/repos/octo%20cat/Hello-World?page=2", pattern: "/repos/{owner}/:repo")
                    == ["owner": "octo cat", "repo": "Hello-World"])
    }
}

private extension JSONValue {
    /// Parses a literal in a test.
    static func parse(_ text: String) -> JSONValue {
        (try? JSONValue(parsing: text)) ?? .string("unparseable: \(text)")
    }
}
