import Foundation
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("schema infer on JSON:API compound documents: one entity per type, never merged by id")
struct TypedInferenceTests {
    /// jsonapi.org's compound document plus a second page whose person and comment share id 2.
    static let secondPage = #"""
        {"links": {"next": null},
         "data": [{"type": "articles", "id": "2", "attributes": {"title": "Rails is Omakase"},
                   "relationships": {"author": {"data": {"type": "people", "id": "2"}}, "comments": {"data": [{"type": "comments", "id": "2"}]}}}],
         "included": [{"type": "people", "id": "2", "attributes": {"firstName": "Ada", "lastName": "Lovelace", "twitter": null}},
                      {"type": "comments", "id": "2", "attributes": {"body": "Second"}, "relationships": {"author": {"data": {"type": "people", "id": "9"}}}}]}
        """#

    static func inferred() throws -> InferredSchema {
        var inference = SchemaInference(name: "blog")
        inference.add(try JSONValue(parsing: Data(JSONAPIDocuments.articles.utf8)), route: "/articles", source: "page1.json")
        inference.add(try JSONValue(parsing: Data(secondPage.utf8)), route: "/articles", source: "page2.json")
        return try inference.infer()
    }

    @Test("articles, people and comments become three entities with foreign keys and links; the route routes by type")
    func entities() throws {
        let inferred = try Self.inferred()
        let schema = inferred.schema
        #expect(schema.entities.map(\.name).sorted() == ["Article", "Comment", "Person"])
        let article = try schema.requireEntity("Article")
        #expect(article.attributes.map(\.name) == ["title", "id", "authorID"])
        #expect(article.relationship(named: "author")?.destination == "Person")
        #expect(article.relationship(named: "author")?.foreignKey == "authorID")
        #expect(article.relationship(named: "comments")?.destination == "Comment")
        #expect(article.relationship(named: "comments")?.through == "article_comments")
        #expect(try schema.requireEntity("Person").attributes.map(\.name) == ["firstName", "lastName", "twitter", "id"])
        #expect(try schema.requireEntity("Comment").relationship(named: "author")?.destination == "Person")
        let route = try #require(schema.routes.first)
        #expect(route.target == .entity("Article"))
        #expect(route.envelope == nil)
        #expect(route.discriminator == .jsonAPI(["articles": "Article", "people": "Person", "comments": "Comment"]))
        #expect(route.pagination == .nextURL(try #require(JSONPointer("/links/next"))))
    }

    @Test("the inferred schema syncs its own samples without an ignored key, keeping person 2 and comment 2 apart")
    func syncsItsSamples() async throws {
        let store = try Store.inMemory(schema: try Self.inferred().schema)
        let engine = try SQLiteReplica(store: store)
        let first = try await engine.sync(.get, "/articles", body: Data(JSONAPIDocuments.articles.utf8))
        #expect(first.ignoredKeys.isEmpty, "\(first.ignoredKeys)")
        let second = try await engine.sync(.get, "/articles", body: Data(Self.secondPage.utf8))
        #expect(second.ignoredKeys.isEmpty, "\(second.ignoredKeys)")
        #expect(try store.rows("Person").map { $0["firstName"] }.sorted { "\($0 ?? .null)" < "\($1 ?? .null)" }
                == [.string("Ada"), .string("Dan")])
        #expect(try store.rows("Comment").count == 3)
        #expect(try store.rows("Comment", where: "id = ?", arguments: [.string("2")]).first?["body"] == .string("Second"))
        #expect(try store.rows("Person", where: "id = ?", arguments: [.string("2")]).first?["lastName"] == .string("Lovelace"))
    }

    @Test("a file sample is read the same as a parsed one; a relationship to a type no sample held keeps its ids, with a note")
    func fileAndUnknownType() throws {
        let directory = try TemporaryDirectory("replica-infer-jsonapi")
        defer { directory.remove() }
        let document = #"""
            {"data": [{"type": "articles", "id": "1", "attributes": {"title": "T"},
                       "relationships": {"author": {"data": {"type": "people", "id": "9"}}, "tags": {"data": [{"type": "tags", "id": "t1"}]}}}]}
            """#
        try Data(document.utf8).write(to: directory.url("articles.json"))
        var inference = SchemaInference(name: "x")
        try inference.addFile(directory.path("articles.json"))
        let inferred = try inference.infer()
        let article = try inferred.schema.requireEntity("Article")
        #expect(article.attributes.map(\.name) == ["title", "id", "authorID", "tags"])
        #expect(article.attribute(named: "authorID")?.jsonKey == "author")
        #expect(article.relationships.isEmpty)
        // One object: nothing is known to be required.
        #expect(article.attribute(named: "title")?.isNullable == true, "\(inferred.text)")
        #expect(inferred.notes.map(\.description) == [
            "Article.authorID at articles.json /data/0/relationships/author/data: to-one relationship to type 'people', which no sample held: its id is kept, without a relationship",
            "Article.tags at articles.json /data/0/relationships/tags/data: to-many relationship to type 'tags', which no sample held: its ids are kept as json",
        ])
    }

    @Test("plain objects whose ids repeat across a type key are keyed by (type, id), with a note; unique ids stay the key alone")
    func repeatedIDsAcrossTypes() async throws {
        let mixed = #"[{"type": "person", "id": 1, "name": "Ann"}, {"type": "bot", "id": 1, "name": "Helper"}, {"type": "person", "id": 2, "name": "Bo"}]"#
        var inference = SchemaInference(name: "users")
        inference.add(try JSONValue(parsing: Data(mixed.utf8)), route: "/users", source: "users.json")
        let inferred = try inference.infer()
        let user = try inferred.schema.requireEntity("User")
        #expect(user.primaryKeyNames == ["type", "id"])
        #expect(inferred.notes.map(\.description) == [
            "User at users.json /0/id: ids repeat across the values of type (bot, person): the key is (type, id), so objects of two "
                + "types that share an id stay two rows; a route's \"discriminator\" can route each type to an entity of its own",
        ])
        let store = try Store.inMemory(schema: inferred.schema)
        _ = try await SQLiteReplica(store: store).sync(.get, "/users", body: Data(mixed.utf8))
        #expect(try store.rows("User").count == 3)

        // Notion's users: a type of two values, ids unique: the id alone is the key.
        var unique = SchemaInference(name: "users")
        unique.add(try JSONValue(parsing: Data(#"[{"type": "person", "id": "a", "name": "Ann"}, {"type": "bot", "id": "b", "name": "Helper"}]"#.utf8)),
                   route: "/users")
        #expect(try unique.infer().schema.requireEntity("User").primaryKeyNames == ["id"])
    }
}
