import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Property map keys")
struct MappingKeyTests {
    @Test("RSAPI's User: snake_case keys and the jsonIdKey, both directions")
    func blogUserKeys() throws {
        let schema = try MappingFixtures.blog()
        let users = try MappingFixtures.map("User", in: schema)
        let expected = [
            ("userID", "user_id"), ("name", "name"), ("email", "email"),
            ("avatarSm", "avatar_sm"), ("friends", "friends"), ("createdAt", "created_at"),
        ]
        #expect(users.attributes.map(\.name) == expected.map(\.0))
        for (attribute, key) in expected {
            #expect(users.jsonKey(forAttribute: attribute) == key)
            #expect(users.attribute(forJSONKey: key) == attribute)
        }
        #expect(users.relationships.map(\.jsonKey) == ["posts", "comments"])
        #expect(users.relationship(forJSONKey: "posts") == "posts")
        #expect(users.attribute(forJSONKey: "userID") == nil)
        #expect(users.attribute(forJSONKey: "id") == nil)
        #expect(users.primaryKeyIndex == 0)
    }

    @Test("mapping RSAPI's User example object")
    func blogUserObject() throws {
        let users = try MappingFixtures.map("User", in: MappingFixtures.blog())
        let object: JSONObject = [
            "user_id": 17, "name": "Ann", "email": "ann@example.com",
            "avatar_sm": "https://x/a.png", "friends": [3, 5],
        ]
        let mapped = try users.map(object, at: JSONPointer("/users/0")!)
        #expect(mapped.values == [
            .integer(17), .string("Ann"), .string("ann@example.com"),
            .string("https://x/a.png"), .json([3, 5]), nil,
        ])
        #expect(mapped.primaryKey == .integer(17))
        #expect(mapped["avatarSm"] == .string("https://x/a.png"))
        #expect(mapped["createdAt"] == nil)
        #expect(!mapped.contains("createdAt"))
        #expect(mapped.unknownKeyCount == 0)
        #expect(mapped.unknownKeys == [])
        #expect(mapped.relationships == [nil, nil])
        #expect(users.encode(["userID": .integer(17), "avatarSm": .string("a.png"), "friends": .json([3])])
            == ["user_id": 17, "avatar_sm": "a.png", "friends": [3]])
    }

    @Test("acronyms follow the attribute's own spelling", arguments: [
        ("htmlURL", "html_url"), ("htmlUrl", "html_url"), ("userID", "user_id"), ("avatarSm", "avatar_sm"),
        ("imageURLs", "image_urls"), ("numberOfKids", "number_of_kids"),
    ])
    func acronyms(attribute: String, key: String) throws {
        let map = try MappingFixtures.thingMap(Attribute(attribute, .string))
        #expect(map.jsonKey(forAttribute: attribute) == key)
        #expect(map.attribute(forJSONKey: key) == attribute)
        #expect(try map.map([key: "v"], at: .root)[attribute] == .string("v"))
    }

    @Test("camelCase and asIs conventions")
    func otherConventions() throws {
        let camel = try MappingFixtures.map("Thing", in: MappingFixtures.thing(
            [Attribute("UserID", .integer), Attribute("avatarSm", .string)], keyConvention: .camelCase))
        #expect(camel.jsonKey(forAttribute: "UserID") == "userID")
        #expect(camel.jsonKey(forAttribute: "avatarSm") == "avatarSm")
        let asIs = try MappingFixtures.map("Thing", in: MappingFixtures.thing(
            [Attribute("avatar_sm", .string)], keyConvention: .asIs))
        #expect(asIs.jsonKey(forAttribute: "avatar_sm") == "avatar_sm")
    }

    @Test("an explicit jsonKey overrides the convention; the others keep it")
    func explicitKeys() throws {
        let map = try MappingFixtures.thingMap(
            Attribute("avatarSm", .string, jsonKey: "smallAvatarURL"),
            Attribute("fullName", .string))
        #expect(map.jsonKey(forAttribute: "avatarSm") == "smallAvatarURL")
        #expect(map.jsonKey(forAttribute: "fullName") == "full_name")
        let mapped = try map.map(["smallAvatarURL": "s.png", "avatar_sm": "ignored", "full_name": "Ann"], at: .root)
        #expect(mapped["avatarSm"] == .string("s.png"))
        #expect(mapped["fullName"] == .string("Ann"))
        #expect(mapped.unknownKeys == ["avatar_sm"])
    }

    @Test("the primary key reads the entity's jsonIDKey; an explicit jsonKey on it wins")
    func primaryKeyKeys() throws {
        let schema = try Schema(name: "t", entities: [
            Entity("A", primaryKey: "uuid", jsonIDKey: "_id") { Attribute("uuid", .string) },
            Entity("B", primaryKey: "code") { Attribute("code", .string) },
            Entity("C", primaryKey: "key", jsonIDKey: "ignored") { Attribute("key", .string, jsonKey: "meta.key") },
        ])
        #expect(try MappingFixtures.map("A", in: schema).jsonKey(forAttribute: "uuid") == "_id")
        #expect(try MappingFixtures.map("B", in: schema).jsonKey(forAttribute: "code") == "id")
        let c = try MappingFixtures.map("C", in: schema)
        #expect(c.jsonKey(forAttribute: "key") == "meta.key")
        #expect(try c.map(["meta": ["key": "k1"]], at: .root).primaryKey == .string("k1"))
    }

    @Test("nested key paths read nested objects")
    func keyPathsRead() throws {
        let map = try MappingFixtures.thingMap(
            Attribute("addressGeoLat", .double, jsonKey: "address.geo.lat"),
            Attribute("addressGeoLng", .double, jsonKey: "address.geo.lng"),
            Attribute("addressCity", .string, jsonKey: "address.city"))
        #expect(map.attribute(forJSONKey: "address.geo.lat") == "addressGeoLat")
        #expect(map.attribute(forJSONKey: "address") == nil)
        #expect(map.attributes[1].jsonPath == ["address", "geo", "lat"])
        let mapped = try map.map([
            "id": 1,
            "address": ["city": "Oslo", "zip": "0150", "geo": ["lat": 59.9, "lng": 10, "alt": 3]],
        ], at: JSONPointer("/things/0")!)
        #expect(mapped["addressGeoLat"] == .double(59.9))
        #expect(mapped["addressGeoLng"] == .double(10))
        #expect(mapped["addressCity"] == .string("Oslo"))
        #expect(mapped.unknownKeyCount == 2)
        #expect(Set(mapped.unknownKeys) == ["address.zip", "address.geo.alt"])

        let partial = try map.map(["address": ["city": "Oslo"]], at: .root)
        #expect(partial["addressGeoLat"] == nil)
        #expect(partial["addressCity"] == .string("Oslo"))

        let nulled = try map.map(["address": nil], at: .root)
        #expect(nulled.values == [nil, .null, .null, .null])

        let error = MappingFixtures.mappingError { _ = try map.map(["address": ["geo": "59.9,10"]], at: JSONPointer("/things/3")!) }
        #expect(error?.code == .notAnObject)
        #expect(error?.pointer == JSONPointer("/things/3/address/geo"))
        #expect(error?.description == #"Thing.addressGeoLat at /things/3/address/geo: expected an object under key path "#
            + #"'address.geo', found string "59.9,10""#)
    }

    @Test("explicit null and a missing key differ")
    func nullVersusMissing() throws {
        let map = try MappingFixtures.thingMap(Attribute("email", .string), Attribute("nick", .string))
        let mapped = try map.map(["id": 1, "email": nil], at: .root)
        #expect(mapped.values == [.integer(1), .null, nil])
        #expect(mapped["email"] == .null)
        #expect(mapped.contains("email"))
        #expect(mapped["nick"] == nil)
        #expect(!mapped.contains("nick"))
        #expect(mapped.presentValues.map(\.name) == ["id", "email"])
    }

    @Test("null in a non-null attribute is an error naming entity, attribute and pointer")
    func nullNotAllowed() throws {
        let users = try MappingFixtures.map("User", in: MappingFixtures.blog())
        let error = MappingFixtures.mappingError { _ = try users.map(["user_id": 1, "name": nil], at: JSONPointer("/data/users/4")!) }
        #expect(error?.code == .nullNotAllowed)
        #expect(error?.entity == "User")
        #expect(error?.attribute == "name")
        #expect(error?.description == "User.name at /data/users/4/name: null is not allowed: the attribute is not nullable")
        let idError = MappingFixtures.mappingError { _ = try users.map(["user_id": nil], at: .root) }
        #expect(idError?.code == .nullNotAllowed)
        #expect(idError?.attribute == "userID")
    }

    @Test("unknown keys are counted and named in document order")
    func unknownKeys() throws {
        let map = try MappingFixtures.thingMap(Attribute("name", .string))
        let object = JSONObject([("zeta", 1), ("name", "x"), ("alpha", true), ("Name", "y")])
        let mapped = try map.map(object, at: .root)
        #expect(mapped.unknownKeyCount == 3)
        #expect(mapped.unknownKeys == ["zeta", "alpha", "Name"])
        #expect(mapped["name"] == .string("x"))
    }

    @Test("a missing primary key is reported on request")
    func missingPrimaryKey() throws {
        let users = try MappingFixtures.map("User", in: MappingFixtures.blog())
        let pointer = JSONPointer("/users/2")!
        let mapped = try users.map(["name": "Ann"], at: pointer)
        #expect(mapped.primaryKey == nil)
        let error = MappingFixtures.mappingError { _ = try users.primaryKey(of: mapped, at: pointer) }
        #expect(error?.code == .missingPrimaryKey)
        #expect(error?.description == "User.userID at /users/2: object has no id: key 'user_id' is missing")
        #expect(try users.primaryKey(of: users.map(["user_id": "9"], at: pointer), at: pointer) == .integer(9))
    }

    @Test("a non-object is rejected by map(value:at:)")
    func notAnObject() throws {
        let map = try MappingFixtures.thingMap()
        let error = MappingFixtures.mappingError { _ = try map.map(value: [1, 2], at: JSONPointer("/things/1")!) }
        #expect(error?.code == .notAnObject)
        #expect(error?.description == "Thing at /things/1: expected an object, found array [1,2]")
        #expect(try map.map(value: ["id": 3], at: .root).primaryKey == .integer(3))
    }

    @Test("two attributes on one JSON key: an error naming both", arguments: [
        ([Attribute("userID", .integer), Attribute("user_id", .integer)],
         "Thing: attributes 'userID' and 'user_id' both map to JSON key 'user_id' (snakeCase)"),
        ([Attribute("avatarSm", .string), Attribute("small", .string, jsonKey: "avatar_sm")],
         "Thing: attribute 'avatarSm' and attribute 'small' both map to JSON key 'avatar_sm'"),
        ([Attribute("other", .integer, jsonKey: "id")],
         "Thing: attribute 'id' and attribute 'other' both map to JSON key 'id'"),
        ([Attribute("address", .json), Attribute("addressCity", .string, jsonKey: "address.city")],
         "Thing: attribute 'address' (JSON key 'address') and attribute 'addressCity' (JSON key 'address.city') "
            + "collide: 'address' cannot hold both a value and nested keys"),
        ([Attribute("addressCity", .string, jsonKey: "address.city"), Attribute("address", .json)],
         "Thing: attribute 'addressCity' (JSON key 'address.city') and attribute 'address' (JSON key 'address') "
            + "collide: 'address' cannot hold both a value and nested keys"),
    ])
    func collidingKeys(attributes: [Attribute], message: String) throws {
        let schema = try MappingFixtures.thing(attributes)
        let error = MappingFixtures.mappingError { _ = try MappingFixtures.map("Thing", in: schema) }
        #expect(error?.code == .collidingKeys)
        #expect(error?.description == message)
    }

    @Test("a relationship colliding with an attribute is an error")
    func relationshipCollision() throws {
        let schema = try Schema(name: "t", entities: [
            Entity("User") { Attribute("id", .integer) },
            Entity("Post") {
                Attribute("id", .integer)
                Attribute("author", .string)
                Attribute("userID", .integer)
                Relationship.toOne("writer", "User", foreignKey: "userID", jsonKey: "author")
            },
        ])
        let error = MappingFixtures.mappingError { _ = try MappingFixtures.map("Post", in: schema) }
        #expect(error?.code == .collidingKeys)
        #expect(error?.description == "Post: attribute 'author' and relationship 'writer' both map to JSON key 'author'")
    }

    @Test("SchemaMapping holds one map per entity, by entity or table name")
    func schemaMapping() throws {
        let mapping = try SchemaMapping(schema: MappingFixtures.blog())
        #expect(mapping.maps.map(\.entity.name) == ["User", "Post", "Comment"])
        #expect(mapping["users"]?.entity.name == "User")
        #expect(try mapping.requireMap("Post").jsonKey(forAttribute: "userID") == "user_id")
        let error = MappingFixtures.mappingError { _ = try mapping.requireMap("Tag") }
        #expect(error?.code == .unknownEntity)
        #expect(error?.description == "unknown entity 'Tag' (schema 'blog' has User, Post, Comment)")
    }
}
