import Foundation
import Replica
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// Composite primary keys (`"primaryKey": ["owner", "repo", "ref"]`), asserted on SQLite and on
/// PostgreSQL, over responses in the shape of a public git hosting API's documented "list
/// matching references": `refs/heads/main` exists in every repository, and the objects do not
/// say which repository they belong to (the route's `:owner` and `:repo` do).
@Suite("Composite primary keys on SQLite and PostgreSQL")
struct CompositeKeyTests {
    static let schema = { () -> Schema in
        do { return try TestStore.schema("git-refs.json") } catch { fatalError("git-refs.json: \(error)") }
    }()

    /// One reference object as the API documents it.
    static func ref(_ owner: String, _ repo: String, _ name: String, sha: String, type: String = "commit") -> String {
        #"{"ref": "\#(name)", "node_id": "MDM6UmVmcmVmcy9oZWFkcy9tYWlu", "#
            + #""url": "https://api.example.com/repos/\#(owner)/\#(repo)/git/\#(name)", "#
            + #""object": {"sha": "\#(sha)", "type": "\#(type)", "#
            + #""url": "https://api.example.com/repos/\#(owner)/\#(repo)/git/commits/\#(sha)"}}"#
    }

    static func page(_ refs: [String]) -> Data { Data(("[" + refs.joined(separator: ",\n") + "]").utf8) }

    static let mainSHA = "aa218f56b14c9653891f9e74264a383fa43fefbd"
    static let featureSHA = "7638417db6d59f3c431d3e1f261cc637155684cd"
    static let spoonSHA = "d0dd1f61b33d64e29d8bc1372a94ef6a2fee76a9"
    static let movedSHA = "762941318ee16e59dabbacb1b4049eec22f0d303"

    static func key(_ repo: String, _ ref: String) -> AttributeValue {
        .compositeKey([.string("octocat"), .string(repo), .string(ref)])
    }

    /// Every stored ref as `repo ref sha`, in key order.
    static func stored(_ store: any ReplicaStore) async throws -> [String] {
        try await store.rows(RowQuery("Ref", sort: [.ascending("owner"), .ascending("repo"), .ascending("ref")])).map {
            "\($0["owner"] ?? .null)/\($0["repo"] ?? .null) \($0["ref"] ?? .null) \($0["sha"] ?? .null)"
        }
    }

    @Test("two repositories' refs/heads/main are two rows; the change sets carry the key tuples", arguments: StoreKind.allCases)
    func twoRepositories(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind, schema: Self.schema)
        try await withTeardown {
            let hello = try await test.store.sync(.get, "/repos/octocat/Hello-World/git/refs", body: Self.page([
                Self.ref("octocat", "Hello-World", "refs/heads/feature", sha: Self.featureSHA),
                Self.ref("octocat", "Hello-World", "refs/heads/main", sha: Self.mainSHA),
            ]))
            #expect(hello.changes["Ref"]?.inserted.tuples == [
                [.string("octocat"), .string("Hello-World"), .string("refs/heads/feature")],
                [.string("octocat"), .string("Hello-World"), .string("refs/heads/main")],
            ])
            #expect(hello.changes["Ref"]?.inserted.contains(Self.key("Hello-World", "refs/heads/main")) == true)
            #expect(hello.changes.description == #"#\#(hello.changes.sequence) Ref: 2 inserted, 0 updated, 0 deleted"#)

            let spoon = try await test.store.sync(.get, "/repos/octocat/Spoon-Knife/git/refs", body: Self.page([
                Self.ref("octocat", "Spoon-Knife", "refs/heads/main", sha: Self.spoonSHA),
            ]))
            #expect(spoon.changes["Ref"]?.inserted.values == [Self.key("Spoon-Knife", "refs/heads/main")])
            #expect(spoon.changes["Ref"]?.updated.isEmpty == true)
            #expect(spoon.changes["Ref"]?.deleted.isEmpty == true)
            #expect(try await Self.stored(test.store) == [
                "octocat/Hello-World refs/heads/feature \(Self.featureSHA)",
                "octocat/Hello-World refs/heads/main \(Self.mainSHA)",
                "octocat/Spoon-Knife refs/heads/main \(Self.spoonSHA)",
            ])
            let row = try #require(try await test.store.rows(RowQuery("Ref", where: "repo = ?", arguments: [.string("Spoon-Knife")])).first)
            #expect(row.primaryKey == Self.key("Spoon-Knife", "refs/heads/main"))
            #expect(row["type"] == .string("commit"))

            // The same page again changes nothing.
            let again = try await test.store.sync(.get, "/repos/octocat/Spoon-Knife/git/refs", body: Self.page([
                Self.ref("octocat", "Spoon-Knife", "refs/heads/main", sha: Self.spoonSHA),
            ]))
            #expect(again.changes.isEmpty)
        } teardown: {
            await test.close()
        }
    }

    @Test("stale deletion compares whole keys inside the route's repository; updates report the tuple",
          arguments: StoreKind.allCases)
    func staleDeletionStaysInItsRepository(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind, schema: Self.schema)
        try await withTeardown {
            _ = try await test.store.sync(.get, "/repos/octocat/Hello-World/git/refs", body: Self.page([
                Self.ref("octocat", "Hello-World", "refs/heads/feature", sha: Self.featureSHA),
                Self.ref("octocat", "Hello-World", "refs/heads/main", sha: Self.mainSHA),
            ]))
            _ = try await test.store.sync(.get, "/repos/octocat/Spoon-Knife/git/refs", body: Self.page([
                Self.ref("octocat", "Spoon-Knife", "refs/heads/feature", sha: Self.spoonSHA),
                Self.ref("octocat", "Spoon-Knife", "refs/heads/main", sha: Self.spoonSHA),
            ]))
            // Hello-World loses its feature branch and moves main; Spoon-Knife's refs of the same names stay.
            let moved = try await test.store.sync(.get, "/repos/octocat/Hello-World/git/refs", body: Self.page([
                Self.ref("octocat", "Hello-World", "refs/heads/main", sha: Self.movedSHA),
            ]))
            #expect(moved.changes["Ref"]?.deleted.values == [Self.key("Hello-World", "refs/heads/feature")])
            #expect(moved.changes["Ref"]?.updated.values == [Self.key("Hello-World", "refs/heads/main")])
            #expect(moved.changes["Ref"]?.inserted.isEmpty == true)
            #expect(try await Self.stored(test.store) == [
                "octocat/Hello-World refs/heads/main \(Self.movedSHA)",
                "octocat/Spoon-Knife refs/heads/feature \(Self.spoonSHA)",
                "octocat/Spoon-Knife refs/heads/main \(Self.spoonSHA)",
            ])
            // An empty page empties its repository only.
            let emptied = try await test.store.sync(.get, "/repos/octocat/Spoon-Knife/git/refs", body: Self.page([]))
            #expect(emptied.changes["Ref"]?.deleted.values == [Self.key("Spoon-Knife", "refs/heads/feature"),
                                                               Self.key("Spoon-Knife", "refs/heads/main")])
            #expect(try await Self.stored(test.store) == ["octocat/Hello-World refs/heads/main \(Self.movedSHA)"])
        } teardown: {
            await test.close()
        }
    }

    @Test("a route naming every part of the key holds one object (no stale deletion); delete takes the tuple",
          arguments: StoreKind.allCases)
    func singleObjectAndDelete(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind, schema: Self.schema)
        try await withTeardown {
            _ = try await test.store.sync(.get, "/repos/octocat/Hello-World/git/refs", body: Self.page([
                Self.ref("octocat", "Hello-World", "refs/heads/feature", sha: Self.featureSHA),
                Self.ref("octocat", "Hello-World", "refs/heads/main", sha: Self.mainSHA),
            ]))
            // The ref's slashes are percent-encoded in its path segment.
            let one = try await test.store.sync(.get, "/repos/octocat/Hello-World/git/refs/refs%2Fheads%2Fmain",
                                                body: Data(Self.ref("octocat", "Hello-World", "refs/heads/main", sha: Self.movedSHA).utf8))
            #expect(one.changes["Ref"]?.updated.values == [Self.key("Hello-World", "refs/heads/main")])
            #expect(one.changes["Ref"]?.deleted.isEmpty == true)
            #expect(try await test.store.count("Ref", where: nil, arguments: []) == 2)

            let deleted = try await test.store.delete("Ref", key: Self.key("Hello-World", "refs/heads/feature"))
            #expect(deleted["Ref"]?.deleted.values == [Self.key("Hello-World", "refs/heads/feature")])
            let missing = try await test.store.delete("Ref", key: Self.key("Spoon-Knife", "refs/heads/feature"))
            #expect(missing.isEmpty)
            #expect(try await Self.stored(test.store) == ["octocat/Hello-World refs/heads/main \(Self.movedSHA)"])

            let error = await #expect(throws: SyncError.self) {
                try await test.store.delete("Ref", key: .string("refs/heads/main"))
            }
            #expect(error?.code == .invalidKey)
            #expect(error?.message == "Ref has a composite primary key (owner, repo, ref): give all its parts, "
                    + ".compositeKey([...]) of 3 values, not refs/heads/main")
        } teardown: {
            await test.close()
        }
    }

    /// On both stores: PostgreSQL checks NOT NULL on the row `INSERT … ON CONFLICT` proposes before
    /// it sees the conflict, so such objects merge there as an UPDATE, then an INSERT of new ones.
    @Test("an object lacking a required attribute updates the row of its whole key and keeps the rest",
          arguments: StoreKind.allCases)
    func partialObjectUpdatesByTuple(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind, schema: Self.schema)
        try await withTeardown {
            _ = try await test.store.sync(.get, "/repos/octocat/Hello-World/git/refs", body: Self.page([
                Self.ref("octocat", "Hello-World", "refs/heads/main", sha: Self.mainSHA)]))
            _ = try await test.store.sync(.get, "/repos/octocat/Spoon-Knife/git/refs", body: Self.page([
                Self.ref("octocat", "Spoon-Knife", "refs/heads/main", sha: Self.spoonSHA)]))
            // No "object": sha (not null, no default) is absent, so the row is updated, never inserted.
            let partial = try await test.store.sync(.get, "/repos/octocat/Spoon-Knife/git/refs/refs%2Fheads%2Fmain",
                                                    body: Data(#"{"ref": "refs/heads/main", "node_id": "changed"}"#.utf8))
            #expect(partial.changes["Ref"]?.updated.values == [Self.key("Spoon-Knife", "refs/heads/main")])
            let rows = try await test.store.rows(RowQuery("Ref", sort: [.ascending("repo")]))
            #expect(rows.map { $0["nodeID"] } == [.string("MDM6UmVmcmVmcy9oZWFkcy9tYWlu"), .string("changed")])
            #expect(rows.map { $0["sha"] } == [.string(Self.mainSHA), .string(Self.spoonSHA)])
            // The same again changes nothing.
            let again = try await test.store.sync(.get, "/repos/octocat/Spoon-Knife/git/refs/refs%2Fheads%2Fmain",
                                                  body: Data(#"{"ref": "refs/heads/main", "node_id": "changed"}"#.utf8))
            #expect(again.changes.isEmpty)
            // A new ref lacking the required sha cannot be inserted: the sync fails whole, on both stores.
            let error = await #expect(throws: SyncError.self) {
                _ = try await test.store.sync(.get, "/repos/octocat/Spoon-Knife/git/refs", body: Data(
                    #"[{"ref": "refs/heads/main", "node_id": "again"}, {"ref": "refs/heads/new", "node_id": "n"}]"#.utf8))
            }
            #expect(error?.message.contains("sha") == true, "\(String(describing: error))")
            #expect(try await test.store.rows(RowQuery("Ref", sort: [.ascending("repo")])).map { $0["nodeID"] }
                        == [.string("MDM6UmVmcmVmcy9oZWFkcy9tYWlu"), .string("changed")])
        } teardown: {
            await test.close()
        }
    }

    @Test("an object lacking a key part the route does not give is refused, naming the part", arguments: StoreKind.allCases)
    func missingKeyPart(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind, schema: Self.schema)
        try await withTeardown {
            let session = try test.store.session(.entity("Ref"))
            defer { session.discard() }
            let error = await #expect(throws: SyncError.self) {
                _ = try await session.stage(body: Self.page([Self.ref("octocat", "Hello-World", "refs/heads/main", sha: Self.mainSHA)]),
                                            source: "refs.json")
                _ = try await session.commit(complete: true)
            }
            #expect(error?.code == .invalidObject)
            #expect(error?.message.contains("object has no owner, a part of its key (owner, repo, ref): key 'owner' is missing "
                                            + "and no route variable gave it") == true, "\(String(describing: error))")
            #expect(try await test.store.count("Ref", where: nil, arguments: []) == 0)
        } teardown: {
            await test.close()
        }
    }

    @Test("a live result set keyed by tuples: inserts, updates and deletes report composite keys",
          arguments: StoreKind.allCases, [10_000, 0])
    func liveResults(kind: StoreKind, residentRowLimit: Int) async throws {
        let test = try await TestStore.make(kind, schema: Self.schema)
        var query = LiveQuery("Ref", sort: [.ascending("ref"), .descending("repo")])
        query.residentRowLimit = residentRowLimit
        let writer: any ReplicaStore
        let results: LiveResultSet
        switch test.store {
        case let engine as SQLiteReplica:
            writer = engine
            results = try LiveResultSet(engine: engine, query: query)
        case let replica as PostgresReplica:
            writer = try await PostgresReplica.open(url: try #require(test.url))
            results = try await LiveResultSet(replica: replica, query: query)
        default:
            throw CancellationError()
        }
        try await withTeardown {
            let updates = results.updates()
            var iterator = updates.makeAsyncIterator()
            _ = try await writer.sync(.get, "/repos/octocat/Hello-World/git/refs", body: Self.page([
                Self.ref("octocat", "Hello-World", "refs/heads/feature", sha: Self.featureSHA),
                Self.ref("octocat", "Hello-World", "refs/heads/main", sha: Self.mainSHA),
            ]))
            let first = try #require(await iterator.next())
            #expect(first.snapshot.rows.keys == [Self.key("Hello-World", "refs/heads/feature"), Self.key("Hello-World", "refs/heads/main")])
            #expect(Set(first.diff.rowInserts.map(\.key)) == [Self.key("Hello-World", "refs/heads/feature"),
                                                              Self.key("Hello-World", "refs/heads/main")])

            _ = try await writer.sync(.get, "/repos/octocat/Spoon-Knife/git/refs", body: Self.page([
                Self.ref("octocat", "Spoon-Knife", "refs/heads/main", sha: Self.spoonSHA),
            ]))
            let second = try #require(await iterator.next())
            // Same ref name: the repository (descending) orders them.
            #expect(second.snapshot.rows.keys == [Self.key("Hello-World", "refs/heads/feature"), Self.key("Spoon-Knife", "refs/heads/main"),
                                                  Self.key("Hello-World", "refs/heads/main")])
            #expect(second.diff.rowInserts.map(\.key) == [Self.key("Spoon-Knife", "refs/heads/main")])
            #expect(second.diff.rowInserts.map(\.to) == [ResultIndexPath(section: 0, row: 1)])
            #expect(second.diff.rowUpdates.isEmpty && second.diff.rowDeletes.isEmpty)

            _ = try await writer.sync(.get, "/repos/octocat/Hello-World/git/refs", body: Self.page([
                Self.ref("octocat", "Hello-World", "refs/heads/main", sha: Self.movedSHA),
            ]))
            let third = try #require(await iterator.next())
            #expect(third.snapshot.rows.keys == [Self.key("Spoon-Knife", "refs/heads/main"), Self.key("Hello-World", "refs/heads/main")])
            #expect(third.diff.rowDeletes.map(\.key) == [Self.key("Hello-World", "refs/heads/feature")])
            #expect((third.diff.rowUpdates + third.diff.rowMoves).map(\.key) == [Self.key("Hello-World", "refs/heads/main")])
            #expect(third.snapshot.rows.map { $0["sha"] } == [.string(Self.spoonSHA), .string(Self.movedSHA)])
        } teardown: {
            results.close()
            if kind == .postgres { await writer.close() }
            await test.close()
        }
    }
}
