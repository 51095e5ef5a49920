import Foundation
import NIOConcurrencyHelpers
@testable import ReplicaServer
import ReplicaTestSupport
import Testing

/// A controller that answers the index through `MockCRUD` and records the body it saw: the `JSONValue` path.
private struct BodyReadingController: MockController {
    let seen: NIOLockedValueBox<[JSONValue?]>

    func index(_ request: MockRequest) async throws -> MockResponse {
        let response = try await MockCRUD.index(request)
        seen.withLockedValue { $0.append(response.body) }
        return response
    }
}

/// Nil when `a` and `b` are the same bytes, else where they first differ, with some text around it.
private func difference(_ a: [UInt8], _ b: [UInt8]) -> String? {
    guard a != b else { return nil }
    let index = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
    func around(_ bytes: [UInt8]) -> String {
        String(decoding: bytes[max(0, index - 40)..<min(bytes.count, index + 40)], as: UTF8.self).debugDescription
    }
    return "byte \(index) of \(a.count) / \(b.count): \(around(a)) vs \(around(b))"
}

@Suite("MockServer page rendering: stored rows straight to bytes, byte for byte the serializer's output")
struct MockServerPageRenderingTests {
    static let stores = ["memory", "sqlite"]

    /// A resource with a property of every type.
    static let things = MockResource("things", properties: [
        MockProperty("name", .string), MockProperty("count", .integer), MockProperty("score", .double),
        MockProperty("flag", .bool), MockProperty("avatar", .blob), MockProperty("born", .date), MockProperty("extra", .json),
    ])

    /// Strings that need every kind of escape, and some that need none.
    static let strings: [String] = [
        "", "plain", "quote \" and backslash \\ and slash /", "new\nline\rreturn\ttab\u{8}back\u{c}feed",
        "nul \u{0} unit \u{1f} bell \u{7} del \u{7f}", "line separator \u{2028} paragraph \u{2029}",
        "Zoë São Paulo Søren 日本語", "emoji 👩‍👩‍👧 🇫🇷 \u{1F600}", "\\u0041 is not an escape", String(repeating: "é\"\u{1}", count: 700),
    ]

    static let doubles: [Double] = [
        0, -0.0, 1, -1, 0.1, 2.5, 1e20, 1e21, 1e-7, 123_456_789.125, 1e300, -1e-300, 5e-324,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude, .nan, .infinity, -.infinity, 9_007_199_254_740_993,
    ]

    static let integers: [Int64] = [0, 1, 9, 10, 42, -1, -9, -10, 1_000_000, Int64.max, Int64.min, Int64.min + 1]

    /// Every scalar the serializer writes, and containers of them.
    static var values: [JSONValue] {
        var values: [JSONValue] = [.null, .bool(true), .bool(false), .bigInteger("123456789012345678901234567890"),
                                   .bigInteger("-98765432109876543210"), .bigInteger("012"), .bigInteger("1e5"), .bigInteger("")]
        values += strings.map(JSONValue.string) + doubles.map(JSONValue.double) + integers.map(JSONValue.int)
        values += [.array([]), .object(JSONObject()), .array(values), .object(JSONObject([("z", 1), ("a", .null), ("k\"ey\n", "v"),
                                                                                             ("nested", .array([.object(["x": .double(.nan)])]))]))]
        return values
    }

    @Test("the writer writes every value as JSONValue.serializedBytes(), and its ETag hash is the server's")
    func values() {
        for value in Self.values {
            var writer = MockPageWriter()
            writer.write(value)
            let body = writer.finish()
            let expected = value.serializedBytes()
            #expect(difference(body.bytes, expected) == nil, "\(value)")
            #expect(body.count == expected.count)
            #expect(body.fingerprint == MockServer.fingerprint(expected))
            #expect(body.chunks.last?.readableBytesView.last == 10)
        }
    }

    /// Rows as a store may keep them: missing properties, extra keys, every type, tricky values.
    static func rows(count: Int) -> [JSONObject] {
        (0..<count).map { index in
            var row = JSONObject()
            row["id"] = .int(Int64(index + 1))
            if index % 7 != 3 { row["name"] = .string(strings[index % strings.count]) }
            row["count"] = .int(integers[index % integers.count])
            row["score"] = index % 5 == 0 ? .int(Int64(index)) : .double(doubles[index % doubles.count])
            row["flag"] = index % 3 == 0 ? .null : .bool(index % 2 == 0)
            row["avatar"] = index % 4 == 0 ? .string(Data("blob \(index) \u{0}".utf8).base64EncodedString()) : .null
            row["born"] = .string("2024-02-\(String(format: "%02d", index % 28 + 1))T12:34:56.789+02:00")
            row["extra"] = index % 6 == 0 ? .object(["tags": .array(["a\u{2028}", .int(1), .null]), "deep": ["x": .double(-0.0)]])
                : .array([.bigInteger("18446744073709551616")])
            if index % 9 == 0 { row["notAProperty"] = "dropped by complete" }
            return row
        }
    }

    @Test("stored rows render as wire(complete(row)) serializes, across many chunks, flat and nested resources")
    func storedRows() throws {
        let schema = nestedPlacesSchema.replacingOccurrences(of: #""table": "places","#, with: #""table": "places", "unmappedKeys": "keep","#)
        let places = try #require(MockResource.resources(for: try Schema(json: Data(schema.utf8))).first)
        #expect(places.unmappedProperty != nil)
        let placeRows: [JSONObject] = [
            ["id": 1, "name": "home", "address.city": "Paris", "address.zip": "75001", "address.geo.lat": 48.5,
             places.unmappedProperty ?? "unmapped": ["address": ["street": "Main \"1\"", "geo": ["lng": 2]], "rank": 3]],
            ["id": 2, "name": "nowhere"],
        ]
        let cases: [(MockResource, [JSONObject], String?)] = [
            (Self.things, Self.rows(count: 3_000), nil), (Self.things, Self.rows(count: 3), "data.items"),
            (places, placeRows, nil), (Self.things, [], "data"),
        ]
        for (resource, rows, envelope) in cases {
            let renderer = MockPageRenderer(resource: resource, envelope: envelope)
            #expect(renderer.isFlat == (resource.name == "things"))
            var writer = renderer.begin()
            for (index, row) in rows.enumerated() { renderer.writeStored(row, first: index == 0, into: &writer) }
            let body = renderer.end(&writer)
            var expected = JSONValue.array(rows.map { .object(resource.wire(resource.complete($0))) })
            for key in (envelope ?? "").split(separator: ".").reversed() { expected = .object([String(key): expected]) }
            let bytes = expected.serializedBytes()
            #expect(difference(body.bytes, bytes) == nil)
            #expect(body.fingerprint == MockServer.fingerprint(bytes))
            if rows.count == 3_000 { #expect(body.chunks.count > 2) }
            // Complete objects (a store without a page source) render the same.
            #expect(difference(renderer.render(rows.map(resource.complete)).bytes, bytes) == nil)
        }
    }

    @Test("a large page is rendered in two halves at once, joined and hashed as one")
    func halves() async throws {
        // Short names: the escapes are the other tests' business, the halves' seam and hash this one's.
        let rows = Self.rows(count: MockPageRenderer.parallelRows + 501).enumerated().map { index, row in
            var row = row
            row["name"] = .string("n\(index) \u{1}\"")
            return row
        }
        for envelope in [nil, "data.things"] {
            let renderer = MockPageRenderer(resource: Self.things, envelope: envelope)
            let body = await renderer.renderStored(rows)
            var expected = JSONValue.array(rows.map { .object(Self.things.complete($0)) })
            if let envelope { expected = .object([envelope.components(separatedBy: ".")[0]: .object(["things": expected])]) }
            let bytes = expected.serializedBytes()
            #expect(difference(body.bytes, bytes) == nil)
            #expect(body.count == bytes.count)
            #expect(body.fingerprint == MockServer.fingerprint(bytes))
        }
    }

    @Test("only the default controller and serializer without a body fault render from rows")
    func decision() {
        let seen = NIOLockedValueBox<[JSONValue?]>([])
        #expect(MockServer.rendersIndex(action: .index, controller: CRUDController(), serializer: PassThroughSerializer(), bodyFault: nil))
        #expect(!MockServer.rendersIndex(action: .show, controller: CRUDController(), serializer: PassThroughSerializer(), bodyFault: nil))
        #expect(!MockServer.rendersIndex(action: .index, controller: BodyReadingController(seen: seen),
                                         serializer: PassThroughSerializer(), bodyFault: nil))
        #expect(!MockServer.rendersIndex(action: .index, controller: CRUDController(), serializer: NamespacedSerializer(), bodyFault: nil))
        #expect(!MockServer.rendersIndex(action: .index, controller: CRUDController(), serializer: PassThroughSerializer(),
                                         bodyFault: .malformedBody))
    }

    @Test("a page over HTTP is byte for byte the JSONValue path's, headers, ETag and 304 included", arguments: stores)
    func overHTTP(kind: String) async throws {
        let store = try Fixture.store(kind)
        let things = Self.things
        try await withServer([things], options: MockServerOptions(store: store)) { server, client in
            _ = try await store.upsert(things, objects: Self.rows(count: 300))
            // Writes between the rows: pages must follow them (the memory store keeps its rows in key order).
            #expect(try await client.put("/things/5", #"{"name":"renamed","count":-5}"#).status == 200)
            #expect(try await client.delete("/things/7").status == 204)
            #expect(try await client.delete("/things/300").status == 204)
            #expect(try await client.post("/things", #"{"name":"new one"}"#).status == 201)
            _ = try await store.upsert(things, objects: [["id": 7, "name": "back again"], ["id": 150, "flag": true]])
            let paths = ["/things", "/things?_page=1&_limit=8", "/things?_page=2&_limit=7", "/things?limit=5&offset=290", "/things?_sort=-count,name&_page=1&_limit=50",
                         "/things?flag=true", "/things?flag=null&_sort=score", "/things?_page=99&_limit=10"]
            var fast: [String: Reply] = [:]
            for path in paths { fast[path] = try await client.get(path) }
            // The same requests through a controller that reads the body: the JSONValue path.
            let seen = NIOLockedValueBox<[JSONValue?]>([])
            server.setController(BodyReadingController(seen: seen), for: "things")
            for path in paths {
                let slow = try await client.get(path)
                let reply = try #require(fast[path])
                #expect(reply.status == 200)
                #expect(difference(reply.bytes, slow.bytes) == nil, "\(kind) \(path)")
                for name in ["ETag", "X-Total-Count", "Link", "X-Cursor", "Content-Type", "Content-Length", "Last-Modified"] {
                    #expect(reply.header(name) == slow.header(name), "\(kind) \(path) \(name)")
                }
                #expect(reply.json != nil)
            }
            #expect(seen.withLockedValue { $0.count } == paths.count)
            #expect(seen.withLockedValue { $0.allSatisfy { $0 != nil } })
            server.setController(nil, for: "things")

            // The rendered page's ETag answers If-None-Match with 304; HEAD gives its length and no body.
            let page = try #require(fast["/things"])
            let tag = try #require(page.header("ETag"))
            #expect(tag == "\"" + MockServer.fingerprint(Array(page.bytes.dropLast())) + "\"")
            let notModified = try await client.get("/things", headers: [("If-None-Match", "W/" + tag)])
            #expect(notModified.status == 304)
            #expect(notModified.bytes.isEmpty)
            #expect(notModified.header("ETag") == tag)
            let head = try await client.send(.HEAD, "/things")
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == String(page.bytes.count))
            #expect(head.header("ETag") == tag)
            #expect(head.bytes.isEmpty)
            // A custom serializer still gets the objects (the renderer would write a bare array).
            server.setSerializer(NamespacedSerializer(), for: "things")
            let wrapped = try await client.get("/things?_page=1&_limit=2")
            #expect(wrapped.json?["things"]?[1]?["id"] == .int(2))
        }
    }

    @Test("children, envelopes and nested keys render as the JSONValue path does", arguments: stores)
    func routes(kind: String) async throws {
        let store = try Fixture.store(kind)
        var resources = try Fixture.peopleResources
        resources += try Fixture.placesResources
        let routes = [MockRoute("GET", "/api/people", resource: "people", envelope: "data.people"),
                      MockRoute("GET", "/api/people/:person_id/cars", resource: "cars", envelope: "cars")]
        try await withServer(resources, routes: routes, options: MockServerOptions(store: store)) { server, client in
            _ = try await client.post("/people", #"{"name":"Ann \"the\" first","numberOfKids":2,"kilometersWalked":-0.0,"avatar":"AAEC/w=="}"#)
            _ = try await client.post("/people", #"{"name":"Bob\u2028","kilometersWalked":1e300}"#)
            _ = try await client.post("/people/1/cars", #"{"name":"Twingo","color":"red"}"#)
            _ = try await client.post("/people/1/cars", #"{"name":"Zoé"}"#)
            _ = try await client.post("/people/2/cars", #"{"name":"other"}"#)
            _ = try await client.post("/places", #"{"name":"home","address":{"city":"Paris","geo":{"lat":48.5}}}"#)
            _ = try await client.post("/places", #"{"name":"nowhere"}"#)
            let paths = ["/people", "/people/1/cars", "/people/1/cars?_sort=-name", "/api/people?_page=1&_limit=1",
                         "/api/people/1/cars", "/places", "/places?address.city=Paris"]
            var fast: [String: Reply] = [:]
            for path in paths { fast[path] = try await client.get(path) }
            let seen = NIOLockedValueBox<[JSONValue?]>([])
            for name in ["people", "cars", "places"] { server.setController(BodyReadingController(seen: seen), for: name) }
            for path in paths {
                let slow = try await client.get(path)
                let reply = try #require(fast[path])
                #expect(reply.status == 200, "\(path): \(reply.text)")
                #expect(difference(reply.bytes, slow.bytes) == nil, "\(kind) \(path)")
                #expect(reply.header("ETag") == slow.header("ETag"))
                #expect(reply.header("X-Total-Count") == slow.header("X-Total-Count"))
                #expect(reply.header("Link") == slow.header("Link"))
            }
            #expect(seen.withLockedValue { $0.count } == paths.count)
            #expect(fast["/api/people/1/cars"]?.json?["cars"]?[1]?["name"] == "Zoé")
            #expect(fast["/places"]?.json?[0]?["address"]?["geo"]?["lat"] == .double(48.5))
        }
    }
}
