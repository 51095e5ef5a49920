import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Encoding request bodies")
struct MappingEncodingTests {
    static let may1 = MappingFixtures.date(2024, 5, 1, 12, 34, 56)

    @Test("values become JSON under their keys, wrapped in the namespace on request")
    func namespaceAndDates() throws {
        let posts = try MappingFixtures.map("Post", in: MappingFixtures.blog())
        let values: [String: AttributeValue] = [
            "title": .string("Hi"), "userID": .integer(7), "published": .bool(true),
            "createdAt": .date(Self.may1), "tags": .json(["a", "b"]), "notAnAttribute": .integer(1),
        ]
        let body = posts.encode(values)
        #expect(body == ["user_id": 7, "title": "Hi", "published": true, "tags": ["a", "b"],
                         "created_at": "2024-05-01T12:34:56Z"])
        #expect(body.keys == ["user_id", "title", "published", "tags", "created_at"])
        #expect(posts.encode(values, wrapped: true) == ["post": .object(body)])
        let users = try MappingFixtures.map("User", in: MappingFixtures.blog())
        #expect(users.encode(["name": .string("Ann")], wrapped: true) == ["name": "Ann"])
    }

    @Test("key paths re-nest")
    func keyPaths() throws {
        let map = try MappingFixtures.thingMap(
            Attribute("addressGeoLat", .double, jsonKey: "address.geo.lat"),
            Attribute("addressCity", .string, jsonKey: "address.city"),
            Attribute("addressGeoLng", .double, jsonKey: "address.geo.lng"))
        let body = map.encode(["id": .integer(1), "addressGeoLat": .double(59.9), "addressCity": .string("Oslo"),
                               "addressGeoLng": .null])
        #expect(body == ["id": 1, "address": ["geo": ["lat": 59.9, "lng": nil], "city": "Oslo"]])
        #expect(body["address"]?.objectValue?.keys == ["geo", "city"])
        let again = try map.map(body, at: .root)
        #expect(again.values == [.integer(1), .double(59.9), .string("Oslo"), .null])
    }

    @Test("dates follow the attribute's transform; data is base64")
    func transforms() throws {
        let millis = MappingFixtures.date(2024, 5, 1).addingTimeInterval(0.25)
        let map = try MappingFixtures.thingMap(
            Attribute("auto", .date),
            Attribute("seconds", .date, transform: "unixSeconds"),
            Attribute("fraction", .date, transform: "unixSeconds"),
            Attribute("millis", .date, transform: "unixMilliseconds"),
            Attribute("formatted", .date, transform: "date:yyyy-MM-dd HH:mm"),
            Attribute("iso", .date, transform: "iso8601"),
            Attribute("blob", .data),
            Attribute("share", .double, transform: "percentage"))
        let body = map.encode([
            "auto": .date(millis), "seconds": .date(Self.may1), "fraction": .date(millis), "millis": .date(millis),
            "formatted": .date(Self.may1), "iso": .date(Self.may1), "blob": .data([0xFB, 0xFF, 0x00]),
            "share": .double(0.07),
        ])
        #expect(body == [
            "auto": "2024-05-01T00:00:00.250Z",
            "seconds": .int(Int64(Self.may1.timeIntervalSince1970)),
            "fraction": .double(millis.timeIntervalSince1970),
            "millis": .int(Int64(millis.timeIntervalSince1970 * 1000)),
            "formatted": "2024-05-01 12:34",
            "iso": "2024-05-01T12:34:56Z",
            "blob": "+/8A",
            "share": 7,
        ])
        let again = try map.map(body, at: .root)
        #expect(again["seconds"] == .date(Self.may1))
        #expect(again["millis"] == .date(millis))
        #expect(again["formatted"] == .date(MappingFixtures.date(2024, 5, 1, 12, 34)))
        #expect(again["blob"] == .data([0xFB, 0xFF, 0x00]))
        #expect(again["share"] == .double(0.07))
    }

    @Test("a stored row encodes like its values")
    func row() throws {
        let users = try MappingFixtures.map("User", in: MappingFixtures.blog())
        let row = EntityRow(entity: "User", names: ["userID", "name", "email", "avatarSm", "friends", "createdAt"],
                            values: [.integer(3), .string("Ann"), .null, .string("a.png"), .json([1]), .date(Self.may1)],
                            primaryKeyIndex: 0)
        #expect(users.encode(row) == ["user_id": 3, "name": "Ann", "email": nil, "avatar_sm": "a.png", "friends": [1],
                                      "created_at": "2024-05-01T12:34:56Z"])
        #expect(users.encode(row).keys == ["user_id", "name", "email", "avatar_sm", "friends", "created_at"])
    }
}
