import Foundation
import Replica
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// Many-to-many links (`"through"` join tables), asserted on SQLite and on PostgreSQL, over
/// responses in the shape of a public issue tracker's documented "list repository issues":
/// labels shared by many issues, each issue with its user.
@Suite("Many-to-many links on SQLite and PostgreSQL")
struct ManyToManyTests {
    /// One label object as the API documents it (keys the schema does not map included).
    static func label(_ id: Int, _ name: String, _ color: String) -> String {
        #"{"id": \#(id), "node_id": "MDU6TGFiZWw\#(id)", "url": "https://api.example.com/repos/octocat/Hello-World/labels/\#(name)", "#
            + #""name": "\#(name)", "description": "Something about \#(name)", "color": "\#(color)", "default": \#(id == 208045946)}"#
    }

    static let bug = label(208045946, "bug", "f29513")
    static let enhancement = label(208045947, "enhancement", "a2eeef")
    static let question = label(208045948, "question", "d876e3")

    /// One issue object: number, title, its user and its labels.
    static func issue(_ id: Int, number: Int, title: String, labels: [String], user: Int = 1) -> String {
        #"{"id": \#(id), "node_id": "MDU6SXNzdWUx", "url": "https://api.example.com/repos/octocat/Hello-World/issues/\#(number)", "#
            + #""number": \#(number), "state": "open", "title": "\#(title)", "#
            + #""user": {"login": "octocat", "id": \#(user), "type": "User", "site_admin": false}, "#
            + #""labels": [\#(labels.joined(separator: ", "))], "created_at": "2011-04-22T13:33:48Z"}"#
    }

    static func page(_ issues: [String]) -> Data { Data(("[" + issues.joined(separator: ",\n") + "]").utf8) }

    static let schema = { () -> Schema in
        do { return try TestStore.schema("issues.json") } catch { fatalError("issues.json: \(error)") }
    }()

    /// Runs `body` on a fresh store of `kind` with the issues schema, closed afterwards.
    static func withStore(_ kind: StoreKind, _ body: (any ReplicaStore) async throws -> Void) async throws {
        let test = try await TestStore.make(kind, schema: schema)
        try await withTeardown { try await body(test.store) } teardown: { await test.close() }
    }

    /// Syncs one page of Hello-World's issues.
    @discardableResult
    static func syncIssues(_ store: any ReplicaStore, _ issues: [String], repository: String = "Hello-World") async throws -> SyncResult {
        try await store.sync(.get, "/repos/octocat/\(repository)/issues", body: page(issues))
    }

    /// The links of every issue, as `issueID: [labelID]`, read through ``RowPredicate/linked(to:_:through:in:)``.
    static func links(_ store: any ReplicaStore, issues: [Int]) async throws -> [Int: [Int64]] {
        var result: [Int: [Int64]] = [:]
        for issue in issues {
            let linked = try RowPredicate.linked(to: "Issue", .integer(Int64(issue)), through: "labels", in: store.schema)
            let rows = try await store.rows(RowQuery("Label", where: linked.sql, arguments: linked.arguments,
                                                     sort: [.ascending("id")]))
            result[issue] = rows.compactMap { if case .integer(let id)? = $0["id"] { id } else { nil } }
        }
        return result
    }

    @Test("a shared label is stored once and linked to every issue; a second sync with the same page changes nothing",
          arguments: StoreKind.allCases)
    func sharedChildrenAreLinked(kind: StoreKind) async throws {
        try await Self.withStore(kind) { store in
            let body = Self.page([
                Self.issue(1, number: 1347, title: "Found a bug", labels: [Self.bug, Self.question]),
                Self.issue(2, number: 1348, title: "Add dark mode", labels: [Self.enhancement, Self.bug]),
                Self.issue(3, number: 1349, title: "No labels yet", labels: []),
            ])
            let first = try await store.sync(.get, "/repos/octocat/Hello-World/issues", body: body)
            #expect(first.changes["Issue"]?.inserted.integers == [1, 2, 3])
            #expect(first.changes["Label"]?.inserted.integers.sorted() == [208045946, 208045947, 208045948])
            #expect(first.changes["Label"]?.updated.isEmpty == true)
            #expect(first.changes["User"]?.inserted.integers == [1])
            #expect(try await Self.links(store, issues: [1, 2, 3]) == [1: [208045946, 208045948],
                                                                            2: [208045946, 208045947], 3: []])
            // The other side of the same join table.
            let bugged = try RowPredicate.linked(to: "Label", .integer(208045946), through: "issues", in: store.schema)
            let issues = try await store.rows(RowQuery("Issue", where: bugged.sql, arguments: bugged.arguments,
                                                            sort: [.ascending("id")]))
            #expect(issues.map { $0["number"] } == [.integer(1347), .integer(1348)])
            #expect(issues.map { $0["owner"] } == [.string("octocat"), .string("octocat")])

            let again = try await store.sync(.get, "/repos/octocat/Hello-World/issues", body: body)
            #expect(again.changes.isEmpty)
        }
    }

    @Test("a sync replaces exactly the links of the issues it holds; other issues keep theirs; labels stay",
          arguments: StoreKind.allCases)
    func linksReplacedPerParent(kind: StoreKind) async throws {
        try await Self.withStore(kind) { store in
            _ = try await Self.syncIssues(store, [
                Self.issue(1, number: 1347, title: "Found a bug", labels: [Self.bug, Self.question]),
                Self.issue(2, number: 1348, title: "Add dark mode", labels: [Self.enhancement, Self.bug]),
            ])
            // One issue fetched alone: bug unlinked, enhancement linked. Issue 2 is not in the body.
            let one = try await store.sync(.get, "/repos/octocat/Hello-World/issues/1347", body: Data(
                Self.issue(1, number: 1347, title: "Found a bug", labels: [Self.question, Self.enhancement]).utf8))
            #expect(one.changes["Issue"]?.updated.integers == [1])
            #expect(one.changes["Label"]?.updated.integers.sorted() == [208045946, 208045947])
            #expect(one.changes["Label"]?.inserted.isEmpty == true)
            #expect(try await Self.links(store, issues: [1, 2]) == [1: [208045947, 208045948], 2: [208045946, 208045947]])

            // Bare keys link without describing the label; null unlinks every label.
            let bare = Self.issue(2, number: 1348, title: "Add dark mode", labels: ["208045948"])
            let nulled = Self.issue(1, number: 1347, title: "Found a bug", labels: []).replacingOccurrences(
                of: #""labels": []"#, with: #""labels": null"#)
            let third = try await store.sync(.get, "/repos/octocat/Hello-World/issues/1348", body: Data(bare.utf8))
            #expect(third.changes["Issue"]?.updated.integers == [2])
            _ = try await store.sync(.get, "/repos/octocat/Hello-World/issues/1347", body: Data(nulled.utf8))
            #expect(try await Self.links(store, issues: [1, 2]) == [1: [], 2: [208045948]])
            #expect(try await store.count("Label", where: nil, arguments: []) == 3)
        }
    }

    @Test("stale deletion of issues removes their links and keeps labels, and stays inside its repository",
          arguments: StoreKind.allCases)
    func staleDeletionRemovesLinks(kind: StoreKind) async throws {
        try await Self.withStore(kind) { store in
            _ = try await Self.syncIssues(store, [
                Self.issue(1, number: 1347, title: "Found a bug", labels: [Self.bug]),
                Self.issue(2, number: 1348, title: "Add dark mode", labels: [Self.enhancement, Self.bug]),
            ])
            _ = try await Self.syncIssues(store, [
                Self.issue(9, number: 1, title: "Fork me", labels: [Self.bug]),
            ], repository: "Spoon-Knife")
            let stale = try await Self.syncIssues(store, [
                Self.issue(1, number: 1347, title: "Found a bug", labels: [Self.bug]),
            ])
            #expect(stale.changes["Issue"]?.deleted.integers == [2])
            // The labels issue 2 held lost a link: updated, as when a sync unlinks them (none is deleted).
            #expect(stale.changes["Label"]?.updated.integers == [208045946, 208045947])
            #expect(stale.changes["Label"]?.deleted.isEmpty == true)
            #expect(try await Self.links(store, issues: [1, 2, 9]) == [1: [208045946], 2: [], 9: [208045946]])
            #expect(try await store.count("Label", where: nil, arguments: []) == 2)
            // Deleting an issue by key unlinks it too; its labels stay linked to the others.
            let removed = try await store.delete("Issue", key: .integer(1))
            #expect(removed.entities["Issue"]?.deleted.integers == [1])
            #expect(removed.entities["Label"]?.updated.integers == [208045946])
            #expect(try await Self.links(store, issues: [1, 9]) == [1: [], 9: [208045946]])
            let bugged = try RowPredicate.linked(to: "Label", .integer(208045946), through: "issues", in: store.schema)
            #expect(try await store.count("Issue", where: bugged.sql, arguments: bugged.arguments) == 1)
        }
    }

    @Test("a label repeated under many issues is stored as the last one that nests it says, however often it repeats",
          arguments: StoreKind.allCases)
    func repeatedChildLastValueWins(kind: StoreKind) async throws {
        try await Self.withStore(kind) { store in
            let black = Self.bug.replacingOccurrences(of: "f29513", with: "000000")
            let first = try await Self.syncIssues(store, [
                Self.issue(1, number: 1347, title: "Found a bug", labels: [Self.bug]),
                Self.issue(2, number: 1348, title: "Add dark mode", labels: [Self.bug]),
                Self.issue(3, number: 1349, title: "Crash", labels: [black]),
                Self.issue(4, number: 1350, title: "Docs", labels: [Self.bug]),
                Self.issue(5, number: 1351, title: "Typo", labels: [black]),
            ])
            #expect(first.changes["Label"]?.inserted.integers == [208045946])
            let color = { try await store.rows(RowQuery("Label")).map { $0["color"] } }
            #expect(try await color() == [.string("000000")])
            let second = try await Self.syncIssues(store, (1...5).map {
                Self.issue($0, number: 1346 + $0, title: "Issue \($0)", labels: [$0 == 5 ? Self.bug : black])
            })
            #expect(second.changes["Label"]?.updated.integers == [208045946])
            #expect(try await color() == [.string("f29513")])
        }
    }

    @Test("a failed sync writes no link", arguments: StoreKind.allCases)
    func failedSyncWritesNoLink(kind: StoreKind) async throws {
        try await Self.withStore(kind) { (store: any ReplicaStore) async throws in
            let body = Self.page([
                Self.issue(1, number: 1347, title: "Found a bug", labels: [Self.bug]),
                #"{"id": 2, "number": "not a number", "title": "Broken", "labels": [\#(Self.question)]}"#,
            ])
            let error = await #expect(throws: SyncError.self) {
                try await store.sync(.get, "/repos/octocat/Hello-World/issues", body: body)
            }
            #expect(error?.code == .invalidObject)
            #expect(try await store.count("Label", where: nil, arguments: []) == 0)
            #expect(try await Self.links(store, issues: [1]) == [1: []])
        }
    }

    @Test("a label nested under two issues of a one-to-many relationship is an error naming both, or the last issue keeps it",
          arguments: StoreKind.allCases)
    func childClaimedTwice(kind: StoreKind) async throws {
        // The shape the issue tracker's labels are mistaken for: each label with one issue.
        var schema = Self.schema
        schema.entities[1].attributes.append(Attribute("issueID", .integer))
        schema.entities[1].relationships = [.toOne("issue", "Issue", foreignKey: "issueID")]
        schema.entities[0].relationships[1] = .toMany("labels", "Label", inverse: "issue")
        let test = try await TestStore.make(kind, schema: try Schema(name: schema.name, entities: schema.entities,
                                                                     routes: schema.routes))
        try await withTeardown {
            let body = Self.page([
                Self.issue(1, number: 1347, title: "Found a bug", labels: [Self.bug]),
                Self.issue(2, number: 1348, title: "Add dark mode", labels: [Self.enhancement, Self.bug]),
            ])
            let error = await #expect(throws: SyncError.self) {
                try await test.store.sync(.get, "/repos/octocat/Hello-World/issues", body: body)
            }
            #expect(error?.description == "GET /repos/octocat/Hello-World/issues: Label 208045946 at /1/labels/1 is claimed by "
                    + "two Issue objects, 1 (first at /0/labels/0) and 2: a Label has one Issue through 'issue', so the second "
                    + "would take it from the first. A Label shared by many parents is a many-to-many relationship: give it "
                    + "\"through\": \"<join table>\" instead of \"inverse\" (or sync with sharedChildren: .lastParentWins "
                    + "to let the last parent keep it)")
            #expect(try await test.store.count("Issue", where: nil, arguments: []) == 0)

            var options = SyncOptions()
            options.sharedChildren = .lastParentWins
            let result = try await test.store.sync(.get, "/repos/octocat/Hello-World/issues", body: body, options: options)
            #expect(result.ignoredKeys.filter { $0.kind == .sharedChild }.map(\.description)
                    == ["shared child Label.issue × 1 (first at /1/labels/1)"])
            let bug = try await test.store.rows(RowQuery("Label", where: "id = ?", arguments: [.integer(208045946)]))
            #expect(bug.first?["issueID"] == .integer(2))

            // Across the pages of one sync alike: the second page's claim names the first page's.
            let session = try test.store.session(.get, "/repos/octocat/Hello-World/issues")
            defer { session.discard() }
            _ = try await session.stage(body: Self.page([Self.issue(3, number: 1349, title: "Crash", labels: [Self.question])]),
                                        source: "GET /repos/octocat/Hello-World/issues?page=1")
            let paged = await #expect(throws: SyncError.self) {
                _ = try await session.stage(body: Self.page([Self.issue(4, number: 1350, title: "Docs", labels: [Self.question])]),
                                            source: "GET /repos/octocat/Hello-World/issues?page=2")
            }
            #expect(paged?.description.hasPrefix("GET /repos/octocat/Hello-World/issues?page=2: Label 208045948 at /0/labels/0 "
                    + "is claimed by two Issue objects, 3 (first at /0/labels/0 of GET /repos/octocat/Hello-World/issues?page=1) "
                    + "and 4: a Label has one Issue through 'issue'") == true, "\(String(describing: paged))")
            #expect(try await test.store.count("Issue", where: "id >= 3", arguments: []) == 0)
        } teardown: {
            await test.close()
        }
    }

    @Test("a live result set of one issue's labels follows its links as syncs change them", arguments: StoreKind.allCases)
    func liveLinkedRows(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind, schema: Self.schema)
        let linked = try RowPredicate.linked(to: "Issue", .integer(1), through: "labels", in: Self.schema)
        let query = LiveQuery("Label", where: linked, sort: [.ascending("name")])
        let results: LiveResultSet
        var writer: any ReplicaStore = test.store
        switch test.store {
        case let engine as SQLiteReplica: results = try LiveResultSet(engine: engine, query: query)
        case let replica as PostgresReplica:
            // Another replica writes: its commits reach the set through LISTEN only.
            writer = try await PostgresReplica.open(url: try #require(test.url))
            results = try await LiveResultSet(replica: replica, query: query)
        default: throw CancellationError()
        }
        let other = writer
        try await withTeardown {
            let updates = results.updates()
            #expect(updates.initial.isEmpty)
            var iterator = updates.makeAsyncIterator()
            func names(_ snapshot: ResultSnapshot) -> [AttributeValue?] { snapshot.rows.map { $0["name"] } }

            _ = try await other.sync(.get, "/repos/octocat/Hello-World/issues", body: Self.page([
                Self.issue(1, number: 1347, title: "Found a bug", labels: [Self.question, Self.bug]),
                Self.issue(2, number: 1348, title: "Add dark mode", labels: [Self.enhancement]),
            ]))
            let first = try #require(await iterator.next())
            #expect(names(first.snapshot) == [.string("bug"), .string("question")])

            // Issue 1 loses bug and gains enhancement; nothing else about either label changed.
            _ = try await other.sync(.get, "/repos/octocat/Hello-World/issues/1347", body: Data(
                Self.issue(1, number: 1347, title: "Found a bug", labels: [Self.question, Self.enhancement]).utf8))
            let second = try #require(await iterator.next())
            #expect(names(second.snapshot) == [.string("enhancement"), .string("question")])
            #expect(second.diff.rowDeletes.count == 1)
            #expect(second.diff.rowInserts.map(\.key) == [.integer(208045947)])

            // Issue 1 deleted: its labels stay stored, but none is linked to it any more.
            _ = try await other.delete("Issue", key: .integer(1))
            let third = try #require(await iterator.next())
            #expect(names(third.snapshot) == [])
            #expect(third.diff.rowDeletes.count == 2)
        } teardown: {
            results.close()
            if kind == .postgres { await other.close() }
            await test.close()
        }
    }
}
