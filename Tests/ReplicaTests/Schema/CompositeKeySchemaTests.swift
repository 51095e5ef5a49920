import Foundation
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// The schema side of composite primary keys: reading, checking, writing back, DDL.
@Suite("Composite primary keys in schemas")
struct CompositeKeySchemaTests {
    static func refs() throws -> Schema {
        try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/git-refs.json"))
    }

    static func error(_ entity: String) -> SchemaError? {
        let text = #"{"name": "t", "entities": {"# + entity + "}}"
        do {
            _ = try Schema(json: Data(text.utf8), file: "t.json")
            return nil
        } catch {
            return error as? SchemaError
        }
    }

    @Test("a composite key is read, written back and built in Swift alike; parts are never null")
    func readsAndRoundTrips() throws {
        let schema = try Self.refs()
        let ref = try schema.requireEntity("Ref")
        #expect(ref.primaryKeyNames == ["owner", "repo", "ref"])
        #expect(ref.hasCompositeKey && ref.primaryKey == "owner,repo,ref")
        #expect(ref.primaryKeyAttributes.map(\.isNullable) == [false, false, false])
        #expect(ref.attribute(named: "type")?.isNullable == true)
        let again = try Schema(json: Data(schema.fileJSON.serialized().utf8))
        #expect(again == schema)
        #expect(ref.fileJSON["primaryKey"] == ["owner", "repo", "ref"])
        #expect(ref.fileJSON["jsonIdKey"] == nil)

        let built = try Schema(name: "git-refs") {
            Entity("Ref", primaryKey: ["owner", "repo", "ref"]) {
                Attribute("owner", .string)
                Attribute("repo", .string)
                Attribute("ref", .string)
                Attribute("sha", .string, jsonKey: "object.sha")
            }
        }
        #expect(built.entities[0].primaryKeyNames == ["owner", "repo", "ref"])
        #expect(built.entities[0].attributes.map(\.isNullable) == [false, false, false, true])
        #expect(Entity("User") { Attribute("id", .integer) }.primaryKeyNames == ["id"])
    }

    @Test("the table's primary key is the tuple; upserts conflict on it; the map reads each part as its attribute")
    func ddlAndMapping() throws {
        let ref = try Self.refs().requireEntity("Ref")
        #expect(SchemaDDL.createTable(ref) == #"CREATE TABLE "refs" ("owner" TEXT NOT NULL, "repo" TEXT NOT NULL, "#
                + #""ref" TEXT NOT NULL, "nodeID" TEXT, "url" TEXT, "sha" TEXT NOT NULL, "type" TEXT, "#
                + #"PRIMARY KEY ("owner", "repo", "ref"))"#)
        #expect(SchemaDDL.createTable(ref, dialect: .postgres).hasSuffix(#""type" text, PRIMARY KEY ("owner", "repo", "ref"))"#))
        #expect(UpsertStatements.upsertSQL(ref, present: [true, true, true, false, false, true, false])
                == #"INSERT INTO "refs" ("owner", "repo", "ref", "sha") VALUES (?, ?, ?, ?) ON CONFLICT("owner", "repo", "ref") "#
                + #"DO UPDATE SET "sha" = excluded."sha" WHERE "sha" IS NOT excluded."sha""#)
        let map = try PropertyMap(entity: ref, in: try Self.refs())
        #expect(map.primaryKeyIndexes == [0, 1, 2])
        #expect(map.jsonKey(forAttribute: "ref") == "ref")
        #expect(map.jsonKey(forAttribute: "nodeID") == "node_id")
        let mapped = try map.map(["owner": "o", "repo": "r", "ref": "refs/heads/main", "object": ["sha": "aa"]], at: .root)
        #expect(mapped.primaryKey == .compositeKey([.string("o"), .string("r"), .string("refs/heads/main")]))
        #expect(try map.primaryKey(of: mapped, at: .root) == .compositeKey([.string("o"), .string("r"), .string("refs/heads/main")]))
        let partial = try map.map(["ref": "refs/heads/main"], at: .root)
        #expect(partial.primaryKey == nil)
        #expect(map.primaryKey(ofInvalid: ["owner": "o", "repo": "r", "ref": "x", "object": 3]) == .compositeKey([.string("o"), .string("r"), .string("x")]))
    }

    @Test("composite key values: made, taken apart, kept in change sets and page records")
    func keyValues() {
        let key = AttributeValue.compositeKey([.integer(7), .string("a/b")])
        #expect(key.description == #"[7,"a/b"]"#)
        #expect(key.compositeKeyParts == [.integer(7), .string("a/b")])
        #expect(AttributeValue.string("x").compositeKeyParts == nil)
        var keys = PrimaryKeys([.integer(1), key, .string("s"), key])
        #expect(keys.count == 4 && keys.tuples.count == 2 && keys.hasDuplicates)
        #expect(keys.values == [.integer(1), .string("s"), key, key])
        #expect(keys.contains(key) && !keys.contains(.compositeKey([.integer(7), .string("a")])))
        keys.normalize()
        #expect(keys.values == [.integer(1), .string("s"), key])
        #expect(keys.description == #"[1, s, [7,"a/b"]]"#)
        #expect(PrimaryKeys(encoded: keys.encoded()) == keys)
        // Records of single keys read as before.
        #expect(PrimaryKeys(encoded: PrimaryKeys([.integer(3)]).encoded()) == PrimaryKeys([.integer(3)]))
    }

    @Test("errors name the part and its pointer", arguments: [
        (#""Ref": {"primaryKey": ["ref"], "attributes": {"ref": "string"}}"#,
         #"t.json: /entities/Ref/primaryKey: a composite primary key names two or more attributes, found 1 (a single key is a string: "primaryKey": "id")"#),
        (#""Ref": {"primaryKey": ["repo", "ref", "repo"], "attributes": {"repo": "string", "ref": "string"}}"#,
         "t.json: /entities/Ref/primaryKey/2: primary key names attribute 'repo' twice"),
        (#""Ref": {"primaryKey": ["repo", 3], "attributes": {"repo": "string"}}"#,
         "t.json: /entities/Ref/primaryKey/1: expected an attribute name, found number"),
        (#""Ref": {"primaryKey": ["repo", "name"], "attributes": {"repo": "string", "ref": "string"}}"#,
         "t.json: /entities/Ref/primaryKey/1: primary key 'name' of entity 'Ref' is not one of its attributes"),
        (#""Ref": {"primaryKey": ["repo", "ref"], "attributes": {"repo": "string", "ref": {"type": "string", "nullable": true}}}"#,
         "t.json: /entities/Ref/attributes/ref/nullable: primary key 'ref' of entity 'Ref' cannot be nullable"),
        (#""Ref": {"primaryKey": ["repo", "at"], "attributes": {"repo": "string", "at": "double"}}"#,
         "t.json: /entities/Ref/attributes/at/type: primary key 'at' of entity 'Ref' is a double; keys are integer or string"),
        (#""Ref": {"primaryKey": ["repo", "ref"], "jsonIdKey": "name", "attributes": {"repo": "string", "ref": "string"}}"#,
         "t.json: /entities/Ref/jsonIdKey: jsonIdKey does not apply to the composite primary key ['repo', 'ref'] of entity 'Ref': "
            + "each part maps as its attribute does (its jsonKey, the key convention, or the route's scope)"),
        (#""Ref": {"primaryKey": ["repo", "ref"], "attributes": {"repo": "string", "ref": "string"}}, "#
            + #""Tag": {"attributes": {"id": "integer", "refID": "string"}, "relationships": {"ref": {"toOne": "Ref", "foreignKey": "refID"}}}"#,
         "t.json: /entities/Tag/relationships/ref/toOne: relationship 'ref' of entity 'Tag' points to 'Ref', whose primary key is "
            + "composite (repo, ref): a foreign key holds a single-column key"),
        (#""Ref": {"primaryKey": ["repo", "ref"], "attributes": {"repo": "string", "ref": "string"}, "#
            + #""relationships": {"tags": {"toMany": "Tag", "through": "ref_tags"}}}, "Tag": {"attributes": {"id": "integer"}}"#,
         "t.json: /entities/Ref/relationships/tags/through: to-many relationship 'tags' of entity 'Ref' cannot hold keys of 'Ref' "
            + "in its join table: its primary key is composite (repo, ref), and relationships hold single-column keys only"),
    ])
    func errors(entity: String, expected: String) {
        #expect(Self.error(entity)?.description == expected)
    }

    @Test("a route naming every part holds one object; one naming some parts is a scope")
    func routes() throws {
        let table = try RouteTable(schema: try Self.refs())
        let list = try table.resolve(.get, "/repos/octocat/Hello-World/git/refs")
        #expect(!list.scope.isSingleObject)
        #expect(list.scope.primaryKey(of: try Self.refs().requireEntity("Ref")) == nil)
        let one = try table.resolve(.get, "/repos/octocat/Hello-World/git/refs/refs%2Fheads%2Fmain")
        #expect(one.scope.isSingleObject)
        #expect(one.scope.primaryKey(of: try Self.refs().requireEntity("Ref"))
                == .compositeKey([.string("octocat"), .string("Hello-World"), .string("refs/heads/main")]))
    }
}
