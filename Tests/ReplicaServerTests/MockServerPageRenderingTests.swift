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
        0, -0.0, 1, -1, 0.1, 2.5, 1e20, 1e21, 1e-7, 123_456_789.125, 1e300, -1e-300, .leastNonzeroMagnitude,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude, .nan, .infinity, -.infinity, 9_007_199_254_740_992,
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

    @Test("the ETag hash is the same at every split of the body into pieces, and one changed byte changes it")
    func fingerprintPieces() {
        let body = Array(#"[{"id":1,"name":"Ada \u00e9","age":36},{"id":2,"name":"Bob","age":41}]"#.utf8)
        let whole = MockServer.fingerprint(body)
        #expect(whole.count == 16)
        #expect(whole.allSatisfy { "0123456789abcdef".contains($0) })
        // Every pair of split points: pieces of 0 to 7 bytes, across word boundaries and within words.
        for first in 0...body.count {
            for second in first...body.count {
                var hash = MockFingerprint()
                hash.add(Array(body[..<first]))
                hash.add(Array(body[first..<second]))
                hash.add(Array(body[second...]))
                #expect(hash.hex == whole, "split at \(first) and \(second)")
            }
        }
        var byteByByte = MockFingerprint()
        for byte in body { byteByByte.add([byte]) }
        #expect(byteByByte.hex == whole)
        // Any one byte changed, in a whole word or in the tail, and a byte more or less, hash apart.
        var seen: Set<String> = [whole]
        for index in body.indices {
            var changed = body
            changed[index] ^= 0x01
            seen.insert(MockServer.fingerprint(changed))
        }
        seen.insert(MockServer.fingerprint(body + [0]))
        seen.insert(MockServer.fingerprint(Array(body.dropLast())))
        #expect(seen.count == body.count + 3)
        #expect(MockServer.fingerprint([]) != MockServer.fingerprint([0]))
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

    /// The page of `query` from the memory store's fast path and from its completed objects (the
    /// `JSONValue` path) must be the same bytes, hash and total; whether the fast path used the kept bytes.
    private static func comparePages(_ store: MemoryMockStore, _ resource: MockResource, cached: Bool,
                                     _ label: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let count = try await store.count(resource, query: MockQuery())
        let queries = [MockQuery(), MockQuery(limit: 1), MockQuery(limit: 7, offset: 3), MockQuery(limit: 1, offset: max(0, count - 1)),
                       MockQuery(limit: count / 2 + 1, offset: count / 3), MockQuery(limit: 10, offset: count + 5), MockQuery(limit: 0)]
        for (index, query) in queries.enumerated() {
            let envelope = index % 2 == 0 ? nil : "data.items"
            let renderer = MockPageRenderer(resource: resource, envelope: envelope)
            #expect((store.storedBytes(resource, query: query) != nil) == cached, "\(label) query \(index)", sourceLocation: sourceLocation)
            let fast = try await store.renderPage(resource, query: query, with: renderer)
            let page = try await store.objects(resource, query: query)
            let slow = renderer.render(page.objects)
            #expect(difference(fast.body.bytes, slow.bytes) == nil, "\(label) query \(index)", sourceLocation: sourceLocation)
            #expect(fast.body.fingerprint == slow.fingerprint, "\(label) query \(index)", sourceLocation: sourceLocation)
            #expect(fast.body.count == slow.count, sourceLocation: sourceLocation)
            #expect(fast.total == page.total, sourceLocation: sourceLocation)
        }
    }

    @Test("the memory store keeps a flat resource's rows as bytes: pages after creates, changes, deletes and compaction")
    func keptBytes() async throws {
        let store = MemoryMockStore()
        let things = Self.things
        try await store.addResource(things)
        try await Self.comparePages(store, things, cached: true, "empty")
        // Rows missing some properties (null on the wire) and with keys that are not properties (left out).
        _ = try await store.upsert(things, objects: Self.rows(count: 3_000))
        _ = try await store.create(things, values: ["name": "only a name"])
        try await Self.comparePages(store, things, cached: true, "created")

        // A changed row's bytes change with it, wherever its new bytes were put.
        let before = try await store.renderPage(things, query: MockQuery(limit: 1, offset: 4), with: MockPageRenderer(resource: things, envelope: nil))
        _ = try await store.modify(things, id: 5, values: ["name": "renamed \"5\"", "count": .null, "flag": true, "notAProperty": 1])
        let after = try await store.renderPage(things, query: MockQuery(limit: 1, offset: 4), with: MockPageRenderer(resource: things, envelope: nil))
        #expect(String(decoding: after.body.bytes, as: UTF8.self).contains(#""name":"renamed \"5\"","count":null"#))
        #expect(after.body.fingerprint != before.body.fingerprint)
        _ = try await store.modify(things, id: 1, values: ["score": 0.5])
        _ = try await store.modify(things, id: 3_001, values: ["extra": ["a": [1, 2]]])
        _ = try await store.upsert(things, objects: [["id": 10, "name": "upserted"], ["id": 5_000, "name": "beyond"]])
        try await Self.comparePages(store, things, cached: true, "modified")

        // Deleted first, middle and last rows; a key deleted and created again goes back in the middle.
        for id: Int64 in [1, 2, 1_500, 5_000, 3_001] { #expect(try await store.delete(things, id: .int(id))) }
        _ = try await store.create(things, values: ["id": 1_500, "name": "back in the middle"])
        try await Self.comparePages(store, things, cached: true, "deleted")

        // Many changes of long rows: the dead bytes are dropped and the rows copied, pages unchanged.
        let long = String(repeating: "long \u{1} ", count: 60)
        for round in 0..<3 {
            for id in stride(from: 3, through: 3_000, by: 1) where id != 1_500 {
                _ = try await store.modify(things, id: .int(Int64(id)), values: ["name": .string("\(round) \(long)")])
            }
        }
        try await Self.comparePages(store, things, cached: true, "compacted")

        // The resource added again with other properties: the bytes are written again for them.
        let fewer = MockResource("things", properties: [MockProperty("flag", .bool), MockProperty("name", .string), MockProperty("missing", .string)])
        try await store.addResource(fewer)
        try await Self.comparePages(store, fewer, cached: true, "other properties")
        // A request with the old resource (a stale renderer) does not use bytes written for other properties.
        #expect(store.storedBytes(things, query: MockQuery()) == nil)
        _ = try await store.create(fewer, values: ["name": "new", "flag": false])
        try await Self.comparePages(store, fewer, cached: true, "other properties, created")
        // Filters and sorts render the rows, as before.
        #expect(store.storedBytes(fewer, query: MockQuery(filters: [MockQuery.Filter(property: "flag", value: true)])) == nil)
        #expect(store.storedBytes(fewer, query: MockQuery(sort: [MockQuery.SortKey(property: "name")])) == nil)
    }

    @Test("a resource with dotted (nesting) properties keeps no bytes, and its pages are rendered from the rows")
    func nestedKeepsNoBytes() async throws {
        let places = try #require(try Fixture.placesResources.first)
        #expect(!MockPageRenderer.isFlat(places))
        let store = MemoryMockStore()
        try await store.addResource(places)
        _ = try await store.upsert(places, objects: [
            ["id": 1, "name": "home", "address.city": "Paris", "address.zip": "75001", "address.geo.lat": 48.5],
            ["id": 2, "name": "nowhere"], ["id": 3, "address.geo.lat": -0.0],
        ])
        _ = try await store.modify(places, id: 2, values: ["address.city": "Oslo"])
        try await Self.comparePages(store, places, cached: false, "nested")
        #expect(MockRowBytes(resource: places, rows: []) == nil)
    }

    @Test("kept row bytes: a page's runs are the rows with commas between them, across blocks; dead bytes are dropped")
    func rowBytesRuns() throws {
        let renderer = MockPageRenderer(resource: Self.things, envelope: nil)
        let rows = Self.rows(count: 2_000)
        var bytes = try #require(MockRowBytes(resource: Self.things, rows: Array(rows[0..<1_000])))
        for index in 1_000..<2_000 { bytes.insert(rows[index], at: index) }
        #expect(bytes.count == 2_000)
        func expected(_ range: Range<Int>, _ rows: [JSONObject]) -> [UInt8] {
            var writer = renderer.begin()
            for index in range { renderer.writeStored(rows[index], first: index == range.lowerBound, into: &writer) }
            return renderer.end(&writer).bytes
        }
        func check(_ rows: [JSONObject], sourceLocation: SourceLocation = #_sourceLocation) {
            for range in [0..<rows.count, 0..<1, 5..<6, 17..<1_234, rows.count - 1..<rows.count, 3..<3] {
                let body = renderer.render(bytes.page(range))
                let wanted = expected(range, rows)
                #expect(difference(body.bytes, wanted) == nil, "\(range)", sourceLocation: sourceLocation)
                #expect(body.fingerprint == MockServer.fingerprint(wanted), sourceLocation: sourceLocation)
            }
        }
        check(rows)
        // All but the last chunk end exactly at the chunk size, wherever a row ends.
        let body = renderer.render(bytes.page(0..<2_000))
        #expect(body.chunks.count > 3)
        #expect(body.chunks.dropLast().allSatisfy { $0.readableBytes == MockPageWriter.chunkSize })

        var changed = rows
        let long = JSONValue.string(String(repeating: "x", count: 2_000))
        // About 8 MB of rows replaced in all, against 4 MB alive at the end: without compaction, more dead than live.
        for round in 0..<6 {
            for index in stride(from: round % 2, to: changed.count, by: 2) {
                changed[index]["name"] = long
                bytes.replace(at: index, with: changed[index])
            }
        }
        #expect(bytes.dead <= bytes.live, "compacted: \(bytes.dead) dead bytes, \(bytes.live) live")
        check(changed)
        for index in stride(from: 1_999, through: 0, by: -3) {
            changed.remove(at: index)
            bytes.remove(at: index)
        }
        check(changed)
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
        let store = try await Fixture.store(kind)
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
        let store = try await Fixture.store(kind)
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
