import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Envelopes and namespaces")
struct MappingEnvelopeTests {
    @Test("a dot-separated envelope unwraps nested keys")
    func unwrap() throws {
        let envelope = Envelope("JsonResponseEnvelope.SuccessFullJsonResponse")
        #expect(envelope.keys == ["JsonResponseEnvelope", "SuccessFullJsonResponse"])
        #expect(envelope.description == "JsonResponseEnvelope.SuccessFullJsonResponse")
        #expect(envelope.pointer == JSONPointer("/JsonResponseEnvelope/SuccessFullJsonResponse"))
        let response: JSONValue = ["JsonResponseEnvelope": ["SuccessFullJsonResponse": [["id": 1]], "status": 200]]
        let (payload, pointer) = try envelope.unwrap(response)
        #expect(payload == [["id": 1]])
        #expect(pointer == JSONPointer("/JsonResponseEnvelope/SuccessFullJsonResponse"))
    }

    @Test("no envelope returns the response at the root")
    func none() throws {
        for envelope in [Envelope(""), Envelope.none, Envelope(keys: [])] {
            #expect(envelope.isEmpty)
            let (payload, pointer) = try envelope.unwrap([1, 2])
            #expect(payload == [1, 2])
            #expect(pointer == .root)
        }
        #expect(Envelope(keys: ["v1.0"]).keys == ["v1.0"])
    }

    @Test("a missing envelope key names the path and where it stopped")
    func missingKey() throws {
        let envelope = Envelope("data.result")
        let stopped = MappingFixtures.mappingError { _ = try envelope.unwrap(["data": ["items": [], "total": 0]]) }
        #expect(stopped?.code == .missingEnvelopeKey)
        #expect(stopped?.pointer == JSONPointer("/data"))
        #expect(stopped?.description == "at /data: envelope 'data.result' stopped here: no key 'result' (found 'items', 'total')")
        let atRoot = MappingFixtures.mappingError { _ = try envelope.unwrap([:]) }
        #expect(atRoot?.description == "at /: envelope 'data.result' stopped here: no key 'data' (found an empty object)")
        let notObject = MappingFixtures.mappingError { _ = try envelope.unwrap(["data": [1]]) }
        #expect(notObject?.code == .notAnObject)
        #expect(notObject?.description == "at /data: envelope 'data.result' expects an object holding 'result', found array [1]")
    }

    @Test("a route's envelope overrides the schema's; empty means none")
    func routeOverrides() throws {
        let schema = try Schema(name: "t", envelope: "data", entities: [Entity("A") { Attribute("id", .integer) }],
                                routes: [Route(.get, "/a", target: .entity("A")),
                                         Route(.get, "/b", target: .entity("A"), envelope: "result.items"),
                                         Route(.get, "/c", target: .entity("A"), envelope: "")])
        let mapping = try SchemaMapping(schema: schema)
        #expect(mapping.envelope(for: schema.routes[0]).keys == ["data"])
        #expect(mapping.envelope(for: schema.routes[1]).keys == ["result", "items"])
        #expect(mapping.envelope(for: schema.routes[2]).keys == [])
        #expect(mapping.envelope(for: nil).keys == ["data"])
        let bare = try Schema(name: "t", entities: [Entity("A") { Attribute("id", .integer) }])
        #expect(Envelope(for: nil, in: bare) == .none)
    }

    @Test("an entity namespace finds one object or a collection")
    func namespaces() throws {
        let posts = try MappingFixtures.map("Post", in: MappingFixtures.blog())
        #expect(posts.namespaceKeys.object == "post")
        #expect(posts.namespaceKeys.collection == "posts")
        let base = JSONPointer("/data")!
        #expect(try posts.payload(in: ["post": ["id": 1]], at: base) == .object(["id": 1], at: JSONPointer("/data/post")!))
        #expect(try posts.payload(in: ["posts": [["id": 1]], "meta": 1], at: base)
            == .collection([["id": 1]], at: JSONPointer("/data/posts")!))
    }

    @Test("a declared namespace that is missing is an error naming it")
    func missingNamespace() throws {
        let posts = try MappingFixtures.map("Post", in: MappingFixtures.blog())
        let base = JSONPointer("/data")!
        let missing = MappingFixtures.mappingError { _ = try posts.payload(in: ["id": 1, "title": "x"], at: base) }
        #expect(missing?.code == .missingNamespace)
        #expect(missing?.description == "Post at /data: missing namespace: expected key 'post' or 'posts', found 'id', 'title'")
        let array = MappingFixtures.mappingError { _ = try posts.payload(in: [["id": 1]], at: base) }
        #expect(array?.code == .missingNamespace)
        #expect(array?.description == #"Post at /data: expected an object with key 'post' or 'posts', found array [{"id":1}]"#)
        let wrongSingle = MappingFixtures.mappingError { _ = try posts.payload(in: ["post": [1]], at: base) }
        #expect(wrongSingle?.code == .notAnObject)
        #expect(wrongSingle?.pointer == JSONPointer("/data/post"))
        let wrongPlural = MappingFixtures.mappingError { _ = try posts.payload(in: ["posts": ["id": 1]], at: base) }
        #expect(wrongPlural?.code == .notAnArray)
        #expect(wrongPlural?.description == #"Post at /data/posts: expected an array under 'posts', found object {"id":1}"#)
    }

    @Test("without a namespace an object is one object and an array a collection")
    func noNamespace() throws {
        let users = try MappingFixtures.map("User", in: MappingFixtures.blog())
        #expect(users.namespaceKeys.object == nil)
        #expect(users.namespaceKeys.collection == nil)
        #expect(try users.payload(in: ["user_id": 1], at: .root) == .object(["user_id": 1], at: .root))
        #expect(try users.payload(in: [1], at: .root) == .collection([1], at: .root))
        #expect(MappingFixtures.mappingError { _ = try users.payload(in: "x", at: .root) }?.code == .notAnObject)
    }

    @Test("a collection-only namespace")
    func collectionOnly() throws {
        let map = try MappingFixtures.map("Thing", in: MappingFixtures.thing([], collectionNamespace: "items"))
        #expect(map.namespaceKeys.object == nil)
        #expect(try map.payload(in: ["items": []], at: .root) == .collection([], at: JSONPointer("/items")!))
        #expect(MappingFixtures.mappingError { _ = try map.payload(in: ["thing": [:]], at: .root) }?.message
            == "missing namespace: expected key 'items', found 'thing'")
    }
}
