import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Schema files")
struct SchemaFileTests {
    @Test("blog.json loads with RSAPI's User example")
    func blogLoads() throws {
        let schema = try Schema(contentsOf: TestSupport.schemaFile("blog.json"))
        #expect(schema.name == "blog")
        #expect(schema.keyConvention == .snakeCase)
        #expect(schema.entities.map(\.name) == ["User", "Post", "Comment"])
        let user = try schema.requireEntity("User")
        #expect(user.tableName == "users")
        #expect(user.primaryKey == "userID")
        #expect(user.jsonIDKey == "user_id")
        #expect(user.attributes.map(\.name) == ["userID", "name", "email", "avatarSm", "friends", "createdAt"])
        #expect(user.attribute(named: "friends")?.type == .json)
        #expect(user.attribute(named: "userID")?.isNullable == false)
        #expect(user.attribute(named: "email")?.isNullable == true)
        let post = try schema.requireEntity("posts")
        #expect(post.name == "Post")
        #expect(post.namespace == "post")
        #expect(post.collectionNamespace == "posts")
        #expect(post.attribute(named: "published")?.defaultValue == .bool(false))
        #expect(post.relationship(named: "author") == .toOne("author", "User", foreignKey: "userID"))
        #expect(schema.routes.map(\.target) == [.entity("User"), .entity("User"), .entity("Post"), .entity("Post"),
                                                .entity("Post"), .entity("Comment"), .many, .data])
        #expect(schema.routes[4].method == .post)
        #expect(schema.routes[0].stalePolicy == .delete)
    }

    @Test("the builder and people.json produce equal schemas")
    func builderEqualsFile() throws {
        let built = try Schema(name: "people", version: 1, keyConvention: .camelCase, routes: [
            Route(.get, "/people", target: .entity("Person"), stale: .delete),
            Route(.get, "/people/:id", target: .entity("Person")),
            Route(.get, "/people/:personID/cars", target: .entity("Car"), stale: .delete),
            Route(.get, "/cars", target: .entity("Car"), stale: .delete),
            Route(.get, "/cars/:id", target: .entity("Car")),
        ]) {
            Entity("Person") {
                Attribute("id", .integer)
                Attribute("name", .string)
                Attribute("numberOfKids", .integer)
                Attribute("kilometersWalked", .double)
                Attribute("avatar", .data)
            }
            Entity("Car") {
                Attribute("id", .integer)
                Attribute("name", .string)
                Attribute("color", .string)
                Attribute("personID", .integer, jsonKey: "person_id")
                Relationship.toOne("person", "Person", foreignKey: "personID")
            }
        }
        let loaded = try Schema(contentsOf: TestSupport.schemaFile("people.json"))
        #expect(built == loaded)
        #expect(built.entity(named: "Person")?.tableName == "people")
        #expect(built.entity(named: "Car")?.tableName == "cars")
    }

    @Test("the file form reads back to an equal schema", arguments: ["blog.json", "people.json", "people-live.json", "issues.json"])
    func fileFormRoundTrip(file: String) throws {
        let schema = try Schema(contentsOf: TestSupport.schemaFile(file))
        let again = try Schema(jsonValue: schema.fileJSON)
        #expect(again == schema)
        #expect(again.fileJSON == schema.fileJSON)
    }

    struct BadCase: Sendable, CustomTestStringConvertible {
        let name: String
        let json: String
        let code: SchemaError.Code
        let pointer: String
        let fragment: String
        var testDescription: String { name }
    }

    static let badCases: [BadCase] = [
        BadCase(name: "unknown type", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer", "name": {"type": "strng"}}}}}
            """, code: .unknownType, pointer: "/entities/User/attributes/name/type", fragment: "unknown type 'strng'"),
        BadCase(name: "unknown shorthand type", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "int"}}}}
            """, code: .unknownType, pointer: "/entities/User/attributes/id", fragment: "unknown type 'int'"),
        BadCase(name: "relationship to a missing entity", json: """
            {"name": "t", "entities": {"Post": {"attributes": {"id": "integer", "userID": "integer"},
             "relationships": {"author": {"toOne": "User", "foreignKey": "userID"}}}}}
            """, code: .unknownEntity, pointer: "/entities/Post/relationships/author/toOne", fragment: "missing entity 'User'"),
        BadCase(name: "duplicate table names", json: """
            {"name": "t", "entities": {"A": {"table": "things", "attributes": {"id": "integer"}},
             "B": {"table": "Things", "attributes": {"id": "integer"}}}}
            """, code: .duplicateTable, pointer: "/entities/B/table", fragment: "'A' and 'B' both use table"),
        BadCase(name: "primary key missing", json: """
            {"name": "t", "entities": {"User": {"attributes": {"name": "string"}}}}
            """, code: .invalidPrimaryKey, pointer: "/entities/User/primaryKey", fragment: "primary key 'id'"),
        BadCase(name: "primary key nullable", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": {"type": "integer", "nullable": true}}}}}
            """, code: .invalidPrimaryKey, pointer: "/entities/User/attributes/id/nullable", fragment: "cannot be nullable"),
        BadCase(name: "primary key of a type that cannot be a key", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "double"}}}}
            """, code: .invalidPrimaryKey, pointer: "/entities/User/attributes/id/type", fragment: "integer or string"),
        BadCase(name: "misspelled key", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": {"type": "integer", "nulable": false}}}}}
            """, code: .unknownKey, pointer: "/entities/User/attributes/id/nulable", fragment: "unknown key 'nulable'"),
        BadCase(name: "missing entities", json: #"{"name": "t"}"#,
                code: .missingKey, pointer: "/", fragment: "'entities'"),
        BadCase(name: "entities as an array", json: #"{"name": "t", "entities": []}"#,
                code: .invalidValue, pointer: "/entities", fragment: "found array"),
        BadCase(name: "foreign key of the wrong type", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "string"}},
             "Post": {"attributes": {"id": "integer", "userID": "integer"},
                      "relationships": {"author": {"toOne": "User", "foreignKey": "userID"}}}}}
            """, code: .invalidRelationship, pointer: "/entities/Post/relationships/author/foreignKey", fragment: "has type integer but"),
        BadCase(name: "to-many without a matching inverse", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer"},
                      "relationships": {"posts": {"toMany": "Post", "inverse": "writer"}}},
             "Post": {"attributes": {"id": "integer", "userID": "integer"},
                      "relationships": {"author": {"toOne": "User", "foreignKey": "userID"}}}}}
            """, code: .invalidRelationship, pointer: "/entities/User/relationships/posts/inverse", fragment: "'writer'"),
        BadCase(name: "to-many with both inverse and through", json: """
            {"name": "t", "entities": {"Issue": {"attributes": {"id": "integer"},
                      "relationships": {"labels": {"toMany": "Label", "inverse": "issue", "through": "issue_labels"}}},
             "Label": {"attributes": {"id": "integer"}}}}
            """, code: .invalidRelationship, pointer: "/entities/Issue/relationships/labels/through", fragment: "not both"),
        BadCase(name: "to-many with neither inverse nor through", json: """
            {"name": "t", "entities": {"Issue": {"attributes": {"id": "integer"},
                      "relationships": {"labels": {"toMany": "Label"}}}, "Label": {"attributes": {"id": "integer"}}}}
            """, code: .missingKey, pointer: "/entities/Issue/relationships/labels", fragment: "'through' (a join table"),
        BadCase(name: "throughKeys without through", json: """
            {"name": "t", "entities": {"Issue": {"attributes": {"id": "integer"},
                      "relationships": {"labels": {"toMany": "Label", "inverse": "x", "throughKeys": ["a", "b"]}}},
             "Label": {"attributes": {"id": "integer"}}}}
            """, code: .invalidRelationship, pointer: "/entities/Issue/relationships/labels/throughKeys", fragment: "give 'through' too"),
        BadCase(name: "throughKeys of three columns", json: """
            {"name": "t", "entities": {"Issue": {"attributes": {"id": "integer"},
                      "relationships": {"labels": {"toMany": "Label", "through": "il", "throughKeys": ["a", "b", "c"]}}},
             "Label": {"attributes": {"id": "integer"}}}}
            """, code: .invalidValue, pointer: "/entities/Issue/relationships/labels/throughKeys", fragment: "expected two column names"),
        BadCase(name: "a to-one with a join table", json: """
            {"name": "t", "entities": {"Issue": {"attributes": {"id": "integer", "labelID": "integer"},
                      "relationships": {"label": {"toOne": "Label", "foreignKey": "labelID", "through": "il"}}},
             "Label": {"attributes": {"id": "integer"}}}}
            """, code: .invalidRelationship, pointer: "/entities/Issue/relationships/label/through", fragment: "many-to-many links are a to-many"),
        BadCase(name: "a join table named like an entity's table", json: """
            {"name": "t", "entities": {"Issue": {"attributes": {"id": "integer"},
                      "relationships": {"labels": {"toMany": "Label", "through": "labels"}}},
             "Label": {"attributes": {"id": "integer"}}}}
            """, code: .duplicateTable, pointer: "/entities/Issue/relationships/labels/through", fragment: "is the table of entity 'Label'"),
        BadCase(name: "a self-join without column names", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer"},
                      "relationships": {"followers": {"toMany": "User", "through": "follows"}}}}}
            """, code: .duplicateName, pointer: "/entities/User/relationships/followers/through",
            fragment: #"two columns named 'userID' (User links User); name them with "throughKeys": ["followersID", "userID"]"#),
        BadCase(name: "one join table declared with other columns from the other side", json: """
            {"name": "t", "entities": {"Issue": {"attributes": {"id": "integer"},
                      "relationships": {"labels": {"toMany": "Label", "through": "issue_labels"}}},
             "Label": {"attributes": {"id": "integer"},
                      "relationships": {"issues": {"toMany": "Issue", "through": "issue_labels", "throughKeys": ["label", "issue"]}}}}}
            """, code: .invalidRelationship, pointer: "/entities/Label/relationships/issues/through",
            fragment: "declared by /entities/Issue/relationships/labels as Issue.issueID ↔ Label.labelID but here as Label.label ↔ Issue.issue"),
        BadCase(name: "default of the wrong type", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer", "age": {"type": "integer", "default": "ten"}}}}}
            """, code: .invalidValue, pointer: "/entities/User/attributes/age/default", fragment: "an integer"),
        BadCase(name: "index on an unknown attribute", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer", "name": "string"},
             "indexes": [{"attributes": ["name", "nmae"]}]}}}
            """, code: .unknownAttribute, pointer: "/entities/User/indexes/0/attributes/1", fragment: "'nmae'"),
        BadCase(name: "route to an unknown entity", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer"}}},
             "routes": [{"path": "/users", "target": "Users"}]}
            """, code: .unknownEntity, pointer: "/routes/0/target", fragment: "unknown entity 'Users'"),
        BadCase(name: "an incremental cursor that is neither a header nor a pointer", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer"}}},
             "routes": [{"path": "/users", "target": "User", "incremental": {"cursor": "X-Cursor"}}]}
            """, code: .invalidValue, pointer: "/routes/0/incremental/cursor", fragment: "'header:NAME' or a JSON pointer ('/cursor'), found 'X-Cursor'"),
        BadCase(name: "an incremental items key that is no pointer", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer"}}},
             "routes": [{"path": "/users", "target": "User", "incremental": {"cursor": "/cursor", "items": "items"}}]}
            """, code: .invalidValue, pointer: "/routes/0/incremental/items", fragment: "a JSON pointer into the response ('/items'), found 'items'"),
        BadCase(name: "an expired status that is no error status", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer"}}},
             "routes": [{"path": "/users", "target": "User", "incremental": {"cursor": "/cursor", "expiredStatus": [410, 200]}}]}
            """, code: .invalidValue, pointer: "/routes/0/incremental/expiredStatus/1", fragment: "an HTTP error status (400-599), found 200"),
        BadCase(name: "an unknown key in incremental", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer"}}},
             "routes": [{"path": "/users", "target": "User", "incremental": {"cursor": "/cursor", "tombstones": "/deleted"}}]}
            """, code: .unknownKey, pointer: "/routes/0/incremental/tombstones", fragment: "tombstones"),
        BadCase(name: "incremental sync of a DATA route", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer"}}},
             "routes": [{"path": "/stats", "target": "DATA", "incremental": {"cursor": "/cursor"}}]}
            """, code: .invalidRoute, pointer: "/routes/0/incremental", fragment: "needs a GET route of an entity's collection (not GET DATA)"),
        BadCase(name: "push on a POST route", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer"}}},
             "routes": [{"method": "POST", "path": "/users", "target": "User", "push": {"events": "/events"}}]}
            """, code: .invalidRoute, pointer: "/routes/0/push", fragment: "only GET routes are synced"),
        BadCase(name: "push events that are no path", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer"}}},
             "routes": [{"path": "/users", "target": "User", "push": {"events": "events"}}]}
            """, code: .invalidValue, pointer: "/routes/0/push/events", fragment: "the event stream's path ('/events') or URL, found 'events'"),
        BadCase(name: "duplicate attribute names differing in case", json: """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer", "name": "string", "Name": "string"}}}}
            """, code: .duplicateName, pointer: "/entities/User/attributes/Name", fragment: "defined twice"),
        BadCase(name: "reserved table name", json: """
            {"name": "t", "entities": {"User": {"table": "sqlite_users", "attributes": {"id": "integer"}}}}
            """, code: .invalidValue, pointer: "/entities/User/table", fragment: "reserved"),
        BadCase(name: "NUL in an entity name", json: #"{"name": "t", "entities": {"U\u0000ser": {"attributes": {"id": "integer"}}}}"#,
                code: .invalidValue, pointer: "/entities/U\u{0}ser", fragment: "control character U+0000"),
        BadCase(name: "a tab in an attribute name", json: #"{"name": "t", "entities": {"User": {"attributes": {"id": "integer", "na\tme": "string"}}}}"#,
                code: .invalidValue, pointer: "/entities/User/attributes/na\tme", fragment: "control character U+0009"),
        BadCase(name: "a control character in a table name",
                json: #"{"name": "t", "entities": {"User": {"table": "us\u001bers", "attributes": {"id": "integer"}}}}"#,
                code: .invalidValue, pointer: "/entities/User/table", fragment: "control character U+001B"),
        BadCase(name: "a version attribute that is not there", json: """
            {"name": "t", "entities": {"Issue": {"versionAttribute": "lockVersion", "attributes": {"id": "integer"}}}}
            """, code: .invalidValue, pointer: "/entities/Issue/versionAttribute", fragment: "versionAttribute 'lockVersion' names no attribute of entity 'Issue'"),
        BadCase(name: "a version attribute that is the key", json: """
            {"name": "t", "entities": {"Issue": {"versionAttribute": "id", "attributes": {"id": "integer"}}}}
            """, code: .invalidValue, pointer: "/entities/Issue/versionAttribute", fragment: "must be an integer or string attribute outside the primary key, not a key"),
        BadCase(name: "a version attribute of doubles", json: """
            {"name": "t", "entities": {"Issue": {"versionAttribute": "v", "attributes": {"id": "integer", "v": "double"}}}}
            """, code: .invalidValue, pointer: "/entities/Issue/versionAttribute", fragment: "not double"),
    ]

    @Test("an entity's versionAttribute reads, writes back, and is the entity's")
    func versionAttribute() throws {
        let schema = try Schema(json: Data("""
            {"name": "t", "entities": {"Issue": {"versionAttribute": "lockVersion",
             "attributes": {"id": "integer", "title": "string", "lockVersion": "integer"}}}}
            """.utf8))
        #expect(schema.entity(named: "Issue")?.versionAttribute == "lockVersion")
        #expect(schema.fileJSON["entities"]?["Issue"]?["versionAttribute"] == .string("lockVersion"))
        #expect(try Schema(jsonValue: schema.fileJSON) == schema)
    }

    @Test("a route's incremental and push declarations read as written, and defaults fill the rest")
    func incrementalRoute() throws {
        let schema = try Schema(contentsOf: TestSupport.schemaFile("people-live.json"))
        let people = try #require(schema.routes.first { $0.path == "/people" })
        #expect(people.incremental == IncrementalSync(parameter: "since", cursor: .header("X-Cursor"), items: JSONPointer("/items"),
                                                      deleted: JSONPointer("/deleted"), expiredStatuses: [410]))
        #expect(people.push == PushSource(events: "/events"))
        #expect(schema.routes.first { $0.path == "/people/:id" }?.incremental == nil)
        let minimal = try Schema(json: Data("""
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer"}}},
             "routes": [{"path": "/users", "target": "User", "incremental": {"cursor": "/meta/next", "expiredStatus": 409}}]}
            """.utf8), file: "t.json")
        #expect(minimal.routes[0].incremental == IncrementalSync(parameter: "since", cursor: .pointer(JSONPointer("/meta/next")!),
                                                                 expiredStatuses: [409]))
    }

    @Test("a bad schema file names the file, the JSON pointer and the problem", arguments: badCases)
    func badSchemaFile(_ bad: BadCase) throws {
        let error = #expect(throws: SchemaError.self) {
            try Schema(json: Data(bad.json.utf8), file: "bad.json")
        }
        #expect(error?.code == bad.code)
        #expect(error?.pointer?.description ?? "" == (bad.pointer == "/" ? "" : bad.pointer))
        #expect(error?.file == "bad.json")
        let text = error.map { String(describing: $0) } ?? ""
        #expect(text.hasPrefix("bad.json: \(bad.pointer): "), "\(text)")
        #expect(text.contains(bad.fragment), "\(text)")
    }

    @Test("malformed JSON in a schema file is an error, not a crash")
    func malformedJSON() throws {
        let error = #expect(throws: SchemaError.self) {
            try Schema(json: Data(#"{"name": "t", "entities": {,}}"#.utf8), file: "broken.json")
        }
        #expect(error?.code == .invalidJSON)
        #expect(String(describing: error.map { $0 } as Any).contains("broken.json"))
    }

    @Test("a missing file is an error naming it")
    func missingFile() throws {
        let error = #expect(throws: SchemaError.self) {
            try Schema(contentsOf: URL(fileURLWithPath: "/nonexistent/schema.json"))
        }
        #expect(error?.code == .unreadableFile)
        #expect(error?.file == "/nonexistent/schema.json")
    }

    @Test("table names are derived from entity names")
    func derivedTableNames() {
        #expect(Entity("User").tableName == "users")
        #expect(Entity("Person").tableName == "people")
        #expect(Entity("BlogPost").tableName == "blog_posts")
        #expect(Entity("Category").tableName == "categories")
        #expect(Entity("Address").tableName == "addresses")
        #expect(Entity("Day").tableName == "days")
        #expect(Entity("URLRequest").tableName == "url_requests")
    }
}
