import Foundation
import ReplicaServer
import ReplicaTestSupport
import Testing

extension Fixture {
    /// Places whose address sits in a nested object: attributes with dotted `jsonKey`s.
    static let placesSchemaText = nestedPlacesSchema

    static var placesResources: [MockResource] {
        get throws { MockResource.resources(for: try Schema(json: Data(placesSchemaText.utf8))) }
    }
}

@Suite("MockServer dotted JSON keys: nested objects on the wire, flat properties in the stores")
struct MockServerNestedKeyTests {
    static let stores = ["memory", "sqlite", "postgres"]

    @Test("a POST with nested objects stores each attribute; answers nest them, prefixes merged, nulls kept", arguments: stores)
    func roundTrip(kind: String) async throws {
        let store = try await Fixture.store(kind)
        let places = try #require(try Fixture.placesResources.first)
        #expect(places.properties.map(\.name) == ["id", "name", "address.city", "address.zip", "address.geo.lat"])
        try await withServer([places], options: MockServerOptions(store: store)) { _, client in
            let created = try await client.post("/places", #"{"name":"home","address":{"city":"Paris","zip":"75001","geo":{"lat":48.5}}}"#)
            #expect(created.status == 201)
            #expect(created.text == #"{"id":1,"name":"home","address":{"city":"Paris","zip":"75001","geo":{"lat":48.5}}}"# + "\n")
            #expect(try await client.get("/places/1").text == created.text)
            // Nothing stored under address: the object is there, its members null.
            let bare = try await client.post("/places", #"{"name":"nowhere"}"#)
            #expect(bare.text == #"{"id":2,"name":"nowhere","address":{"city":null,"zip":null,"geo":{"lat":null}}}"# + "\n")
            let list = try await client.get("/places")
            let listed: String = "[" + String(created.text.dropLast()) + "," + String(bare.text.dropLast()) + "]\n"
            #expect(list.text == listed)
            // The stores keep one flat member per attribute, under its dotted name.
            let stored = try await store.object(places, id: 1)
            #expect(stored == JSONObject([("id", 1), ("name", "home"), ("address.city", "Paris"), ("address.zip", "75001"),
                                          ("address.geo.lat", 48.5)]))
        }
    }

    @Test("PUT and PATCH merge nested members; \"address\": null clears them all", arguments: stores)
    func merging(kind: String) async throws {
        try await withServer(try Fixture.placesResources, options: MockServerOptions(store: try await Fixture.store(kind))) { _, client in
            _ = try await client.post("/places", #"{"name":"home","address":{"city":"Paris","zip":"75001","geo":{"lat":48.5}}}"#)
            let patched = try await client.patch("/places/1", #"{"address":{"city":"Lyon"}}"#)
            #expect(patched.status == 200)
            #expect(patched.json == .parse(#"{"id":1,"name":"home","address":{"city":"Lyon","zip":"75001","geo":{"lat":48.5}}}"#))
            let put = try await client.put("/places/1", #"{"name":"flat","address":{"geo":{"lat":45.75}}}"#)
            #expect(put.json == .parse(#"{"id":1,"name":"flat","address":{"city":"Lyon","zip":"75001","geo":{"lat":45.75}}}"#))
            let cleared = try await client.patch("/places/1", #"{"address":{"zip":null,"geo":null}}"#)
            #expect(cleared.json == .parse(#"{"id":1,"name":"flat","address":{"city":"Lyon","zip":null,"geo":{"lat":null}}}"#))
            let gone = try await client.patch("/places/1", #"{"address":null}"#)
            #expect(gone.json == .parse(#"{"id":1,"name":"flat","address":{"city":null,"zip":null,"geo":{"lat":null}}}"#))
            #expect(try await client.get("/places/1").json == gone.json)
        }
    }

    @Test("nested values are type-checked and named by key path; a flat dotted key is a 422 showing the nested form")
    func validation() async throws {
        try await withServer(try Fixture.placesResources) { _, client in
            let wrongType = try await client.post("/places", #"{"name":"x","address":{"zip":75001,"geo":{"lat":"north"}}}"#)
            #expect(wrongType.status == 422)
            #expect(wrongType.json == .parse(#"{"errors":{"address.zip":["must be a string"],"address.geo.lat":["must be a number"]}}"#))
            let notObject = try await client.post("/places", #"{"name":"x","address":"1 rue de Rivoli"}"#)
            #expect(notObject.status == 422)
            #expect(notObject.json == .parse(#"{"errors":{"address":["must be an object or null, not string"]}}"#))
            let unknownOnly = try await client.post("/places", #"{"address":{"planet":"Earth"}}"#)
            #expect(unknownOnly.status == 422)
            #expect(unknownOnly.json == .parse(#"{"errors":{"address.planet":["is not a property of places"]}}"#))
            // Not dropped as an unknown key would be: the value would be lost.
            let flat = try await client.post("/places", #"{"name":"x","address.city":"Paris"}"#)
            #expect(flat.status == 422)
            #expect(flat.json == .parse(#"{"errors":{"address.city":["is nested: send {\"address\": {\"city\": …}}"]}}"#))
            // Unknown nested keys beside known ones are dropped, as at the top level.
            let kept = try await client.post("/places", #"{"address":{"city":"Paris","planet":"Earth"}}"#)
            #expect(kept.json == .parse(#"{"id":1,"name":null,"address":{"city":"Paris","zip":null,"geo":{"lat":null}}}"#))
            #expect(try await client.get("/places").json?.arrayValue?.count == 1)
        }
    }

    @Test("filters and sorts name the dotted property", arguments: stores)
    func filtersAndSorts(kind: String) async throws {
        try await withServer(try Fixture.placesResources, options: MockServerOptions(store: try await Fixture.store(kind))) { server, client in
            let data = JSONValue.parse("""
                {"places": [{"name": "a", "address": {"city": "Paris", "zip": "75002"}},
                            {"name": "b", "address": {"city": "Lyon", "zip": "69001"}},
                            {"name": "c", "address": {"city": "Paris", "zip": "75001", "geo": {"lat": 48.9}}}]}
                """)
            #expect(try await server.load(json: data).loaded == 3)
            let paris = try await client.get("/places?address.city=Paris&_sort=address.zip")
            #expect(paris.header("X-Total-Count") == "2")
            #expect(paris.json?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["c", "a"])
            let byZip = try await client.get("/places?_sort=-address.zip")
            #expect(byZip.json?.arrayValue?.compactMap { $0["address"]?["zip"]?.stringValue } == ["75002", "75001", "69001"])
            #expect(try await client.get("/places?address.geo.lat=48.9").json?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["c"])
            let badFilter = try await client.get("/places?address.geo.lat=north")
            #expect(badFilter.status == 400)
            #expect(badFilter.json?["error"]?["message"] == "filter address.geo.lat=north: address.geo.lat must be a number")
        }
    }

    @Test("loading data keeps nested values, from JSON and from a file", arguments: stores)
    func loading(kind: String) async throws {
        let directory = try TemporaryDirectory("replica-server")
        defer { directory.remove() }
        try await withServer(try Fixture.placesResources, options: MockServerOptions(store: try await Fixture.store(kind))) { server, client in
            let file = directory.url("seed.json")
            try Data(#"{"places": [{"id": 7, "name": "a", "address": {"city": "Nice", "zip": "06000", "geo": {"lat": 43.7}}}, {"address": 5}]}"#.utf8)
                .write(to: file)
            let result = try await server.load(file: file.path)
            #expect(result.loaded == 1 && result.rejected == 1)
            #expect(result.rejections == ["places[1]: address must be an object or null, not number"])
            #expect(try await client.get("/places/7").json == .parse(#"{"id":7,"name":"a","address":{"city":"Nice","zip":"06000","geo":{"lat":43.7}}}"#))
            // Loading into an object with a key merges, nested members too.
            let again = try await server.load(json: .parse(#"[{"id": 7, "address": {"zip": "06100"}}]"#), into: "places")
            #expect(again.loaded == 1)
            #expect(try await client.get("/places/7").json == .parse(#"{"id":7,"name":"a","address":{"city":"Nice","zip":"06100","geo":{"lat":43.7}}}"#))
        }
    }

    @Test("form fields named by a dotted property go to its key path")
    func formFields() async throws {
        try await withServer(try Fixture.placesResources) { _, client in
            let reply = try await client.send(.POST, "/places", bytes: Array("name=home&address.city=Paris&address.geo.lat=48.5".utf8),
                                              headers: [("Content-Type", "application/x-www-form-urlencoded")])
            #expect(reply.status == 201)
            #expect(reply.json == .parse(#"{"id":1,"name":"home","address":{"city":"Paris","zip":null,"geo":{"lat":48.5}}}"#))
        }
    }

    @Test("a resource whose key paths collide is refused, naming both properties")
    func collision() async throws {
        let clash = MockResource("places", properties: [MockProperty("address.city", .string), MockProperty("address", .string)])
        await #expect { try await MockServer.start(resources: [clash]) } throws: { error in
            let refused = try #require(error as? MockServerError)
            return refused.code == .invalidResource && refused.message == "resource 'places': property 'address.city' and property "
                + "'address' collide: a JSON key cannot hold both a value and nested keys"
        }
    }

    @Test("nested(_:) puts stored values at their key paths, in property order; namespaced serializers wrap the nested object")
    func nestedAndSerializers() async throws {
        let places = try #require(try Fixture.placesResources.first)
        #expect(places.nested(["address.zip": "75001", "id": 3]).members.map(\.key) == ["id", "name", "address"])
        #expect(places.nested(["address.zip": "75001", "id": 3])
            == JSONObject([("id", 3), ("name", nil), ("address", .parse(#"{"city":null,"zip":"75001","geo":{"lat":null}}"#))]))
        var options = MockServerOptions()
        options.defaultSerializer = NamespacedSerializer()
        try await withServer([places], options: options) { _, client in
            let created = try await client.post("/places", #"{"place":{"name":"home","address":{"city":"Paris"}}}"#)
            #expect(created.json == .parse(#"{"place":{"id":1,"name":"home","address":{"city":"Paris","zip":null,"geo":{"lat":null}}}}"#))
        }
    }
}
