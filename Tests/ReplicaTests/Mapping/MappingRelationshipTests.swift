import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Relationship mapping")
struct MappingRelationshipTests {
    static func posts() throws -> PropertyMap {
        try MappingFixtures.map("Post", in: MappingFixtures.blog())
    }

    @Test("relationship keys follow the convention or their jsonKey")
    func keys() throws {
        let posts = try Self.posts()
        #expect(posts.relationships.map(\.name) == ["author", "comments"])
        #expect(posts.relationships.map(\.jsonKey) == ["author", "comments"])
        #expect(posts.relationships[0].foreignKeyIndex == posts.index(ofAttribute: "userID"))
        #expect(posts.relationships[0].destinationIDPath == ["user_id"])
        #expect(posts.relationships[1].foreignKeyIndex == nil)
        let schema = try Schema(name: "t", entities: [
            Entity("User") { Attribute("id", .integer) },
            Entity("Post") {
                Attribute("id", .integer)
                Attribute("userID", .integer)
                Relationship.toOne("writtenBy", "User", foreignKey: "userID")
                Relationship.toOne("editor", "User", foreignKey: "userID", jsonKey: "meta.editor")
            },
        ])
        let map = try MappingFixtures.map("Post", in: schema)
        #expect(map.relationships.map(\.jsonKey) == ["written_by", "meta.editor"])
        #expect(map.relationship(forJSONKey: "meta.editor") == "editor")
    }

    @Test("a nested to-one object is handed over and fills the foreign key")
    func nestedObject() throws {
        let posts = try Self.posts()
        let author: JSONObject = ["user_id": 7, "name": "Ann"]
        let mapped = try posts.map(["id": 1, "title": "Hi", "author": .object(author)], at: JSONPointer("/posts/0")!)
        #expect(mapped.relationship("author") == .object(author, at: JSONPointer("/posts/0/author")!))
        #expect(mapped["userID"] == .integer(7))
        #expect(mapped.unknownKeyCount == 0)
    }

    @Test("the JSON's own foreign key wins over the nested object's id, in any order")
    func ownForeignKeyWins() throws {
        let posts = try Self.posts()
        let before = try posts.map(JSONObject([("user_id", 3), ("author", ["user_id": 7])]), at: .root)
        let after = try posts.map(JSONObject([("author", ["user_id": 7]), ("user_id", 3)]), at: .root)
        #expect(before["userID"] == .integer(3))
        #expect(after["userID"] == .integer(3))
    }

    @Test("a bare id under a to-one key is the foreign key")
    func bareID() throws {
        let posts = try Self.posts()
        let mapped = try posts.map(["id": 1, "author": "42"], at: .root)
        #expect(mapped.relationship("author") == .reference(.integer(42)))
        #expect(mapped["userID"] == .integer(42))
        let error = MappingFixtures.mappingError { _ = try posts.map(["author": "ann"], at: JSONPointer("/posts/5")!) }
        #expect(error?.description == #"Post.userID at /posts/5/author: cannot convert "ann" to integer"#)
    }

    @Test("null under a to-one key nulls the foreign key; an object without id leaves it absent")
    func nullAndMissingID() throws {
        let posts = try Self.posts()
        let nulled = try posts.map(["author": nil], at: .root)
        #expect(nulled.relationship("author") == .null)
        #expect(nulled["userID"] == .null)
        let noID = try posts.map(["author": ["name": "Ann"]], at: .root)
        #expect(noID["userID"] == nil)
    }

    @Test("to-many arrays are handed over with their pointer")
    func toMany() throws {
        let posts = try Self.posts()
        let comments: [JSONValue] = [["id": 1, "body": "a"], ["id": 2, "body": "b"]]
        let mapped = try posts.map(["id": 1, "comments": .array(comments)], at: JSONPointer("/posts/0")!)
        #expect(mapped.relationship("comments") == .array(comments, at: JSONPointer("/posts/0/comments")!))
        #expect(try posts.map(["comments": nil], at: .root).relationship("comments") == .null)
        #expect(try posts.map(["id": 1], at: .root).relationships == [nil, nil])
    }

    @Test("wrong JSON types under relationship keys are errors")
    func wrongTypes() throws {
        let posts = try Self.posts()
        let pointer = JSONPointer("/posts/0")!
        let toMany = MappingFixtures.mappingError { _ = try posts.map(["comments": ["id": 1]], at: pointer) }
        #expect(toMany?.code == .notAnArray)
        #expect(toMany?.description == #"Post.comments at /posts/0/comments: expected an array for to-many relationship "#
            + #"to Comment, found object {"id":1}"#)
        let toOne = MappingFixtures.mappingError { _ = try posts.map(["author": [1, 2]], at: pointer) }
        #expect(toOne?.code == .notAnObject)
        #expect(toOne?.description == "Post.author at /posts/0/author: expected an object or an id for to-one "
            + "relationship to User, found array [1,2]")
    }
}
