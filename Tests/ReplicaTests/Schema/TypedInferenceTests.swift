import Foundation
import ReplicaTestSupport
import Testing
@testable import Replica

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
}
