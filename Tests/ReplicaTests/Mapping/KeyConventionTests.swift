import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Key conventions")
struct KeyConventionTests {
    @Test("snake_case keys from attribute names", arguments: [
        ("userID", "user_id"),
        ("htmlURL", "html_url"),
        ("htmlUrl", "html_url"),
        ("avatarSm", "avatar_sm"),
        ("numberOfKids", "number_of_kids"),
        ("URLString", "url_string"),
        ("id", "id"),
        ("ID", "id"),
        ("name", "name"),
        ("friends", "friends"),
        ("line2", "line2"),
        ("address1Line", "address1_line"),
        ("user2FA", "user2_fa"),
        ("utf8String", "utf8_string"),
        ("UTF8String", "utf8_string"),
        ("userIDs", "user_ids"),
        ("imageURLsCount", "image_urls_count"),
        ("HTTPServer", "http_server"),
        ("UserID", "user_id"),
        ("_id", "_id"),
        ("user_ID", "user_id"),
        ("already_snake", "already_snake"),
        ("crééAt", "créé_at"),
        ("ÉtéFin", "été_fin"),
        ("", ""),
    ])
    func snakeCaseKeys(attribute: String, key: String) {
        #expect(KeyConvention.snakeCase.jsonKey(forAttribute: attribute) == key)
    }

    @Test("camelCase keys lower-case the first word", arguments: [
        ("userID", "userID"),
        ("UserID", "userID"),
        ("URLString", "urlString"),
        ("ID", "id"),
        ("IDs", "ids"),
        ("UTF8String", "utf8String"),
        ("avatarSm", "avatarSm"),
        ("_ID", "_id"),
        ("Name", "name"),
    ])
    func camelCaseKeys(attribute: String, key: String) {
        #expect(KeyConvention.camelCase.jsonKey(forAttribute: attribute) == key)
    }

    @Test("asIs keys are the attribute names")
    func asIsKeys() {
        for name in ["userID", "URLString", "avatar_sm", "x"] {
            #expect(KeyConvention.asIs.jsonKey(forAttribute: name) == name)
            #expect(KeyConvention.asIs.attributeName(forJSONKey: name) == name)
        }
    }

    @Test("plain JSON key to attribute name, when no attribute exists", arguments: [
        ("user_id", "userId"),
        ("html_url", "htmlUrl"),
        ("avatar_sm", "avatarSm"),
        ("number_of_kids", "numberOfKids"),
        ("address1_line", "address1Line"),
        ("line2", "line2"),
        ("_id", "_id"),
        ("content-type", "contentType"),
        ("Content-Type", "contentType"),
        ("User_ID", "userID"),
        ("a__b", "aB"),
        ("2fa-enabled", "_2faEnabled"),
        ("name", "name"),
        ("", ""),
    ])
    func plainCamelCase(key: String, attribute: String) {
        #expect(KeyConvention.snakeCase.attributeName(forJSONKey: key) == attribute)
    }

    @Test("camelCase convention: plain JSON key to attribute name")
    func camelCasePlain() {
        #expect(KeyConvention.camelCase.attributeName(forJSONKey: "userID") == "userID")
        #expect(KeyConvention.camelCase.attributeName(forJSONKey: "URLString") == "urlString")
        #expect(KeyConvention.camelCase.attributeName(forJSONKey: "3d") == "_3d")
    }

    @Test("RSAPI User: JSON keys and attributes round-trip through the table")
    func rsapiUser() throws {
        let attributes = ["userID", "name", "email", "avatarSm", "friends"]
        let keys = ["user_id", "name", "email", "avatar_sm", "friends"]
        let table = try KeyConvention.snakeCase.table(attributes: attributes)
        #expect(table.attributes == attributes)
        #expect(table.convention == .snakeCase)
        for (attribute, key) in zip(attributes, keys) {
            #expect(table.jsonKey(forAttribute: attribute) == key)
            #expect(table.attribute(forJSONKey: key) == attribute)
            #expect(KeyConvention.snakeCase.jsonKey(forAttribute: attribute) == key)
        }
        #expect(table.attribute(forJSONKey: "unknown") == nil)
        #expect(table.jsonKey(forAttribute: "unknown") == nil)
        // A key spelled like an attribute name still finds it.
        #expect(table.attribute(forJSONKey: "avatarSm") == "avatarSm")
    }

    @Test("the table follows how the attribute is named: htmlURL or htmlUrl")
    func acronymsFollowTheAttribute() throws {
        let upper = try KeyConvention.snakeCase.table(attributes: ["htmlURL", "URLString", "userIDs"])
        #expect(upper.attribute(forJSONKey: "html_url") == "htmlURL")
        #expect(upper.attribute(forJSONKey: "url_string") == "URLString")
        #expect(upper.attribute(forJSONKey: "user_ids") == "userIDs")
        let lower = try KeyConvention.snakeCase.table(attributes: ["htmlUrl"])
        #expect(lower.attribute(forJSONKey: "html_url") == "htmlUrl")
        let camel = try KeyConvention.camelCase.table(attributes: ["URLString", "userID"])
        #expect(camel.attribute(forJSONKey: "urlString") == "URLString")
        #expect(camel.jsonKey(forAttribute: "URLString") == "urlString")
        #expect(camel.attribute(forJSONKey: "userID") == "userID")
        let asIs = try KeyConvention.asIs.table(attributes: ["user_id", "userID"])
        #expect(asIs.attribute(forJSONKey: "user_id") == "user_id")
        #expect(asIs.attribute(forJSONKey: "userID") == "userID")
    }

    @Test("two attributes with the same key are refused, naming both and the key")
    func collisions() throws {
        let error = #expect(throws: KeyConventionError.self) {
            try KeyConvention.snakeCase.table(attributes: ["userID", "name", "userId"])
        }
        #expect(error?.code == .collidingKeys)
        #expect(error?.attributes == ["userID", "userId"])
        #expect(error?.jsonKey == "user_id")
        #expect(error?.message == "attributes \"userID\" and \"userId\" both map to JSON key \"user_id\" (snakeCase)")
        #expect(error?.code.description == "collidingKeys")
        // Repeated names are taken once.
        #expect(try KeyConvention.snakeCase.table(attributes: ["a", "a"]).attributes == ["a"])
    }

    @Test("snake_case keys round-trip to camelCase attributes without acronyms")
    func roundTrip() {
        for attribute in ["userId", "avatarSm", "numberOfKids", "address1Line", "line2", "name", "_id"] {
            let key = KeyConvention.snakeCase.jsonKey(forAttribute: attribute)
            #expect(KeyConvention.snakeCase.attributeName(forJSONKey: key) == attribute)
        }
    }
}
