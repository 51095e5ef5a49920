import Foundation
import GRDB
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// JSON:API's compound document from jsonapi.org ("Compound Documents"), as documented: one
/// article with its author and two comments in `included`, `links` beside them.
enum JSONAPIDocuments {
    static let articles = #"""
        {
          "links": {
            "self": "http://example.com/articles",
            "next": null
          },
          "data": [{
            "type": "articles",
            "id": "1",
            "attributes": {
              "title": "JSON:API paints my bikeshed!"
            },
            "links": {
              "self": "http://example.com/articles/1"
            },
            "relationships": {
              "author": {
                "links": {
                  "self": "http://example.com/articles/1/relationships/author",
                  "related": "http://example.com/articles/1/author"
                },
                "data": { "type": "people", "id": "9" }
              },
              "comments": {
                "links": {
                  "self": "http://example.com/articles/1/relationships/comments",
                  "related": "http://example.com/articles/1/comments"
                },
                "data": [
                  { "type": "comments", "id": "5" },
                  { "type": "comments", "id": "12" }
                ]
              }
            }
          }],
          "included": [{
            "type": "people",
            "id": "9",
            "attributes": {
              "firstName": "Dan",
              "lastName": "Gebhardt",
              "twitter": "dgeb"
            },
            "links": {
              "self": "http://example.com/people/9"
            }
          }, {
            "type": "comments",
            "id": "5",
            "attributes": {
              "body": "First!"
            },
            "relationships": {
              "author": {
                "data": { "type": "people", "id": "2" }
              }
            },
            "links": {
              "self": "http://example.com/comments/5"
            }
          }, {
            "type": "comments",
            "id": "12",
            "attributes": {
              "body": "I like XML better"
            },
            "relationships": {
              "author": {
                "data": { "type": "people", "id": "9" }
              }
            },
            "links": {
              "self": "http://example.com/comments/12"
            }
          }]
        }
        """#
}

@Suite("Discriminators: objects routed to entities by a key, JSON:API compound documents")
struct DiscriminatorTests {
    static func store() throws -> (Store, SQLiteReplica) {
        let store = try Store.inMemory(schema: try Schema(contentsOf: TestSupport.schemaFile("jsonapi.json")))
        return (store, try SQLiteReplica(store: store))
    }

    static func rows(_ store: Store, _ entity: String, _ columns: [String]) throws -> [String] {
        try store.rows(entity).map { row in
            columns.map { column in
                switch row[column] {
                case .string(let text)?: return text
                case .integer(let number)?: return String(number)
                case nil, .null?: return "nil"
                default: return "?"
                }
            }.joined(separator: " ")
        }.sorted()
    }

    @Test("jsonapi.org's compound document: the article, its author and comments are stored, with foreign keys and links")
    func compoundDocument() async throws {
        let (store, engine) = try Self.store()
        let result = try await engine.sync(.get, "/articles", body: Data(JSONAPIDocuments.articles.utf8))
        #expect(result.ignoredKeys.isEmpty, "\(result.ignoredKeys)")
        #expect(try Self.rows(store, "Article", ["id", "title", "authorID"]) == ["1 JSON:API paints my bikeshed! 9"])
        #expect(try Self.rows(store, "Person", ["id", "firstName", "lastName", "twitter"]) == ["9 Dan Gebhardt dgeb"])
        // Comment 5's author (person 2) is not included: its foreign key is kept as the document gives it.
        #expect(try Self.rows(store, "Comment", ["id", "body", "authorID"]) == ["12 I like XML better 9", "5 First! 2"])
        let links = try await store.database.read { db in
            try Row.fetchAll(db, sql: "SELECT articleID, commentID FROM article_comments ORDER BY commentID")
                .map { "\($0["articleID"] as String? ?? "") \($0["commentID"] as String? ?? "")" }
        }
        #expect(links == ["1 12", "1 5"])
        #expect(result.changes["Article"]?.inserted.count == 1)
        #expect(result.changes["Person"]?.inserted.count == 1)
        #expect(result.changes["Comment"]?.inserted.count == 2)
    }

    @Test("objects of two types sharing an id are two rows; the collection alone makes rows stale")
    func sharedIDs() async throws {
        let (store, engine) = try Self.store()
        _ = try await engine.sync(.get, "/articles", body: Data(JSONAPIDocuments.articles.utf8))
        // A second document: article 2 only, whose included person and comment are both id 5.
        let second = #"""
            {"data": [{"type": "articles", "id": "2", "attributes": {"title": "Rails is Omakase"},
                       "relationships": {"author": {"data": {"type": "people", "id": "5"}}, "comments": {"data": []}}}],
             "included": [{"type": "people", "id": "5", "attributes": {"firstName": "Ada", "lastName": "Lovelace", "twitter": null}},
                          {"type": "comments", "id": "5", "attributes": {"body": "Edited"}, "relationships": {"author": {"data": null}}}]}
            """#
        let result = try await engine.sync(.get, "/articles", body: Data(second.utf8))
        #expect(try Self.rows(store, "Article", ["id", "title", "authorID"]) == ["2 Rails is Omakase 5"])
        #expect(result.changes["Article"]?.deleted.map(\.description) == ["1"])
        // Included objects are never stale: person 9 and comment 12 stay; comment 5 is updated in place.
        #expect(try Self.rows(store, "Person", ["id", "firstName"]) == ["5 Ada", "9 Dan"])
        #expect(try Self.rows(store, "Comment", ["id", "body", "authorID"]) == ["12 I like XML better 9", "5 Edited nil"])
        #expect(result.changes["Person"]?.deleted.isEmpty != false)
        #expect(result.changes["Comment"]?.deleted.isEmpty != false)
    }

    @Test("a type that names no entity is not stored and is reported with its pointer; strict keys fail the sync")
    func unknownType() async throws {
        let (store, engine) = try Self.store()
        let document = #"""
            {"data": [{"type": "articles", "id": "1", "attributes": {"title": "T"}}],
             "included": [{"type": "tags", "id": "1", "attributes": {"label": "x"}}, {"type": "tags", "id": "2"}, {"id": "3"}]}
            """#
        let result = try await engine.sync(.get, "/articles", body: Data(document.utf8))
        #expect(result.ignoredKeys.map(\.description) == ["type tags × 2 (first at /included/0/type)",
                                                          "type (none) × 1 (first at /included/2/type)"])
        #expect(try Self.rows(store, "Article", ["id"]) == ["1"])
        var strict = SyncOptions()
        strict.strictKeys = true
        let error = await #expect(throws: SyncError.self) {
            try await engine.sync(.get, "/articles", body: Data(document.replacingOccurrences(of: "\"1\"", with: "\"7\"").utf8), options: strict)
        }
        #expect(error?.message.contains("type tags × 2 (first at /included/0/type)") == true, "\(error.map { "\($0)" } ?? "")")
        #expect(try Self.rows(store, "Article", ["id"]) == ["1"])
    }

    @Test("an invalid attribute is named at its place in the resource, not in the flattened object")
    func errorPointers() async throws {
        let (store, engine) = try Self.store()
        let document = #"""
            {"data": [{"type": "articles", "id": "1", "attributes": {"title": "T"}},
                      {"type": "articles", "id": "2", "attributes": {"title": null}}]}
            """#
        let error = await #expect(throws: SyncError.self) { try await engine.sync(.get, "/articles", body: Data(document.utf8)) }
        #expect(error?.message.contains("/data/1/attributes/title") == true, "\(error.map { "\($0)" } ?? "")")
        #expect(try store.rows("Article").isEmpty)
        let unknown = #"{"data": [{"type": "articles", "id": "1", "attributes": {"title": "T", "subtitle": "S"}, "relationships": {"editor": {"data": {"type": "people", "id": "9"}}}}]}"#
        let result = try await engine.sync(.get, "/articles", body: Data(unknown.utf8))
        #expect(result.ignoredKeys.map(\.description).sorted() == ["Article.editor × 1 (first at /data/0/relationships/editor/data/id)",
                                                                   "Article.subtitle × 1 (first at /data/0/attributes/subtitle)"])
    }

    @Test("a single resource (GET /articles/1) fills the route's key; a relationship without data leaves the stored value")
    func singleResource() async throws {
        let (store, engine) = try Self.store()
        _ = try await engine.sync(.get, "/articles", body: Data(JSONAPIDocuments.articles.utf8))
        let one = #"""
            {"data": {"type": "articles", "id": "1", "attributes": {"title": "Renamed"},
                      "relationships": {"author": {"links": {"related": "/articles/1/author"}}}},
             "links": {"self": "/articles/1"}}
            """#
        let result = try await engine.sync(.get, "/articles/1", body: Data(one.utf8))
        #expect(result.changes["Article"]?.updated.count == 1)
        #expect(try Self.rows(store, "Article", ["id", "title", "authorID"]) == ["1 Renamed 9"])
        #expect(try Self.rows(store, "Comment", ["id"]) == ["12", "5"])
    }

    @Test("an incremental JSON:API route: the delta's objects (at the route's items) and included are upserted, its deleted keys deleted")
    func incremental() async throws {
        var schema = try Schema(contentsOf: TestSupport.schemaFile("jsonapi.json"))
        schema.routes[0].pagination = nil
        schema.routes[0].incremental = IncrementalSync(parameter: "filter[since]", cursor: .pointer(try #require(JSONPointer("/meta/cursor"))),
                                                       items: JSONPointer("/changes"), deleted: JSONPointer("/meta/deleted"))
        let transport = ScriptedTransport { request, index in
            if index == 1 {
                return json(200, #"{"meta": {"cursor": "c1"}, "data": [{"type": "articles", "id": "1", "attributes": {"title": "One"}}, "#
                            + #"{"type": "articles", "id": "2", "attributes": {"title": "Two"}}]}"#)
            }
            #expect(request.url.query == "filter%5Bsince%5D=c1" || request.url.query == "filter[since]=c1", "\(request.url)")
            return json(200, #"{"meta": {"cursor": "c2", "deleted": ["1"]}, "#
                        + #""changes": [{"type": "articles", "id": "3", "attributes": {"title": "Three"}, "relationships": {"author": {"data": {"type": "people", "id": "3"}}}}], "#
                        + #""included": [{"type": "people", "id": "3", "attributes": {"firstName": "Cy", "lastName": "T", "twitter": null}}]}"#)
        }
        let store = try Store.inMemory(schema: schema)
        let engine = try SQLiteReplica(store: store)
        let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(transport: transport,
                                                                                     baseURLs: [.production: try #require(URL(string: "http://127.0.0.1:9"))]))
        try await client.call("/articles")
        let delta = try await client.call("/articles")
        #expect(delta.changes["Article"]?.deleted.map(\.description) == ["1"])
        #expect(try Self.rows(store, "Article", ["id", "title", "authorID"]) == ["2 Two nil", "3 Three 3"])
        #expect(try Self.rows(store, "Person", ["id", "firstName"]) == ["3 Cy"])
    }

    @Test("a plain discriminator routes a mixed feed; the key is dropped unless an attribute maps it")
    func plainFeed() async throws {
        let schema = try Schema(json: Data(#"""
            {"name": "feed", "version": 1,
             "entities": {"Photo": {"attributes": {"id": "integer", "url": "string"}},
                          "Video": {"attributes": {"id": "integer", "seconds": "integer", "kind": "string"}}},
             "routes": [{"path": "/feed", "target": "Photo", "stale": "delete", "envelope": "items",
                         "discriminator": {"key": "kind", "entities": {"photo": "Photo", "video": "Video", "clip": "Video"}}}]}
            """#.utf8))
        let store = try Store.inMemory(schema: schema)
        let engine = try SQLiteReplica(store: store)
        let feed = #"""
            {"items": [{"kind": "photo", "id": 1, "url": "a.jpg"}, {"kind": "video", "id": 1, "seconds": 30},
                       {"kind": "clip", "id": 2, "seconds": 5}, {"kind": "photo", "id": 2, "url": "b.jpg"}]}
            """#
        let result = try await engine.sync(.get, "/feed", body: Data(feed.utf8))
        #expect(result.ignoredKeys.isEmpty, "\(result.ignoredKeys)")
        #expect(try store.rows("Photo").map { $0["url"] } == [.string("a.jpg"), .string("b.jpg")])
        #expect(try store.rows("Video").map { $0["kind"] } == [.string("video"), .string("clip")])
        // The next feed lacks photo 2: the target's complete collection deletes it; videos are not the route's to delete.
        let next = try await engine.sync(.get, "/feed", body: Data(#"{"items": [{"kind": "photo", "id": 1, "url": "a.jpg"}]}"#.utf8))
        #expect(next.changes["Photo"]?.deleted.map(\.description) == ["2"])
        #expect(try store.rows("Video").count == 2)
    }

    @Test("the schema file's discriminator round-trips, and bad ones are refused naming the place", arguments: [
        (#"{"entities": {"articles": "Article", "people": "Nobody"}}"#, "/routes/0/discriminator/entities/people",
         "route GET /articles routes type 'people' to unknown entity 'Nobody'"),
        (#"{"entities": {"people": "Person"}}"#, "/routes/0/discriminator/entities",
         "route GET /articles targets Article, but its discriminator routes no type to Article (by type (people → Person))"),
        (#"{"format": "xml", "entities": {"articles": "Article"}}"#, "/routes/0/discriminator/format",
         "unknown discriminator format 'xml' (expected plain or jsonapi)"),
        (#"{"key": "type"}"#, "/routes/0/discriminator", "missing key 'entities'"),
        (#"{"entities": {"articles": "Article"}, "included": "included"}"#, "/routes/0/discriminator/included",
         "expected a JSON pointer to the included objects ('/included') or null"),
    ])
    func schemaFile(discriminator: String, pointer: String, message: String) throws {
        let text = #"""
            {"name": "x", "version": 1,
             "entities": {"Article": {"attributes": {"id": "string"}}, "Person": {"attributes": {"id": "string"}}},
             "routes": [{"path": "/articles", "target": "Article", "discriminator": \#(discriminator)}]}
            """#
        let error = #expect(throws: SchemaError.self) { try Schema(json: Data(text.utf8)) }
        #expect(error?.pointer?.description == pointer, "\(error.map { "\($0)" } ?? "")")
        #expect(error?.message.contains(message) == true, "\(error.map { "\($0)" } ?? "")")
    }

    @Test("a discriminator written by the schema reads back the same")
    func roundTrip() throws {
        let schema = try Schema(contentsOf: TestSupport.schemaFile("jsonapi.json"))
        let again = try Schema(json: Data(schema.fileJSON.serialized().utf8))
        #expect(again.routes.map(\.discriminator) == schema.routes.map(\.discriminator))
        #expect(schema.routes.first?.discriminator == .jsonAPI(["articles": "Article", "people": "Person", "comments": "Comment"]))
        let plain = Discriminator(key: "kind", entities: ["photo": "Photo"], included: JSONPointer("/related"))
        #expect(plain.fileJSON.serialized() == #"{"key":"kind","entities":{"photo":"Photo"},"included":"/related"}"#)
    }

    @Test("odd documents: each is stored or refused with a message naming the place", arguments: [
        (#"{"data": null}"#, "ok"),
        (#"{"data": []}"#, "ok"),
        (#"{"data": [], "included": null}"#, "ok"),
        (#"{"data": [], "included": {"type": "people", "id": "1", "attributes": {}}}"#, "ok"),
        (#"{"data": [{"type": "articles", "attributes": {"title": "no id"}}]}"#, "GET /articles: Article.id at /data/0: object has no id: key 'id' is missing"),
        (#"{"data": [{"type": 7, "id": "1"}]}"#, "ok"),
        (#"{"data": [{"type": "articles", "id": "1", "attributes": "title"}]}"#,
         "GET /articles: Article at /data/0/attributes: a JSON:API resource's attributes must be an object, found string \"title\""),
        (#"{"data": [{"type": "articles", "id": "1", "attributes": {"title": "T"}, "relationships": {"author": "9"}}]}"#,
         "GET /articles: Article at /data/0/relationships/author: a JSON:API relationship must be an object (with data, links or meta), found string \"9\""),
        (#"{"data": [{"type": "articles", "id": "1", "attributes": {"title": "T"}, "relationships": {"author": {"data": [{"type": "people", "id": "1"}]}}}]}"#,
         "GET /articles: Article.author at /data/0/relationships/author/data: expected an object or an id for to-one relationship to Person, found array [\"1\"]"),
        (#"{"errors": [{"status": "404", "title": "Not Found"}]}"#,
         #"GET /articles: expected objects typed by 'type' at /data, found object {"errors":[{"status":"404","title":"Not Found"}]}"#),
        (#"[1, 2]"#, "GET /articles: expected objects typed by 'type' at /data, found array [1,2]"),
    ])
    func oddDocuments(document: String, outcome: String) async throws {
        let (_, engine) = try Self.store()
        do {
            let result = try await engine.sync(.get, "/articles", body: Data(document.utf8))
            #expect(outcome == "ok", "stored: \(result.changes) \(result.ignoredKeys)")
        } catch let error as SyncError {
            #expect("\(error)" == outcome)
        }
    }

    @Test("an invalid resource under the skip policy is skipped by its id, which still counts as seen")
    func skippedResource() async throws {
        let (store, engine) = try Self.store()
        _ = try await engine.sync(.get, "/articles", body: Data(JSONAPIDocuments.articles.utf8))
        var skip = SyncOptions()
        skip.onInvalid = .skip
        let result = try await engine.sync(.get, "/articles", body: Data(#"{"data": [{"type": "articles", "id": "1", "attributes": ["x"]}]}"#.utf8),
                                           options: skip)
        #expect(result.skipped.map(\.pointer.description) == ["/data/0"])
        #expect(result.skipped.first?.key == .string("1"))
        #expect(result.changes["Article"]?.deleted.isEmpty != false)
        #expect(try Self.rows(store, "Article", ["id"]) == ["1"])
    }
}
