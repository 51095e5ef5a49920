import Foundation
import Replica
import ReplicaOpenAPI
import ReplicaTestSupport
import Testing

/// The Swagger Petstore's own OpenAPI 3.0 document (`Schemas/openapi/petstore.yaml`, verbatim) and
/// its conversion to 3.1 (`petstore-3.1.json`): the schema they import, and that schema syncing
/// the pet store's documented responses with no key left unplaced and no change the second time.
@Suite("OpenAPI import: the pet store")
struct OpenAPIPetStoreTests {
    static func imported(_ file: String) throws -> InferredSchema {
        try OpenAPISchemaImport.schema(contentsOf: packageRoot.appendingPathComponent("Schemas/openapi/" + file))
    }

    /// A pet, an order and a user as the pet store documents them (its examples).
    static let pet = #"{"id":10,"name":"doggie","category":{"id":1,"name":"Dogs"},"photoUrls":["string"],"tags":[{"id":0,"name":"string"}],"status":"available"}"#
    static let pets = #"[{"id":10,"name":"doggie","category":{"id":1,"name":"Dogs"},"photoUrls":["string"],"tags":[{"id":0,"name":"string"}],"status":"available"},{"id":11,"name":"kitty","category":{"id":2,"name":"Cats"},"photoUrls":[],"tags":[{"id":0,"name":"string"},{"id":3,"name":"indoor"}],"status":"sold"}]"#
    static let order = #"{"id":10,"petId":198772,"quantity":7,"shipDate":"2024-05-01T12:34:56.000+00:00","status":"approved","complete":true}"#
    static let user = #"{"id":10,"username":"theUser","firstName":"John","lastName":"James","email":"john@email.com","password":"12345","phone":"12345","userStatus":1}"#

    /// Syncs `text` through `method path` twice: the first leaves no key unplaced, the second changes nothing.
    static func importsCleanly(_ store: SQLiteReplica, _ path: String, _ text: String, method: HTTPMethod = .get) async throws -> SyncResult {
        let first = try await store.sync(method, path, body: Data(text.utf8))
        #expect(first.ignoredKeys.map(\.description) == [], "\(method) \(path)")
        let second = try await store.sync(method, path, body: Data(text.utf8))
        #expect(second.changes.isEmpty, "\(method) \(path): \(second.changes)")
        #expect(second.ignoredKeys.map(\.description) == [], "\(method) \(path)")
        return first
    }

    @Test("the 3.0 document: five entities with their types, category toOne, tags through, every operation's route")
    func petStore() throws {
        let imported = try Self.imported("petstore.yaml")
        #expect(imported.fileJSON["name"] == "petstore")
        #expect(imported.fileJSON["keyConvention"] == "camelCase")
        #expect(imported.schema.entities.map(\.name) == ["Order", "Customer", "Category", "User", "Tag", "Pet"])
        #expect(imported.schema.entities.map(\.tableName) == ["orders", "customers", "categories", "users", "tags", "pets"])
        #expect(imported.fileJSON["entities"] == .parse("""
            {"Order": {"attributes": {"id": "integer", "petId": "integer", "quantity": "integer", "shipDate": "date",
                                      "status": {"type": "string", "description": "Order Status; one of: placed, approved, delivered"},
                                      "complete": "bool"}},
             "Customer": {"attributes": {"id": "integer", "username": "string", "address": "json"}},
             "Category": {"attributes": {"id": "integer", "name": "string"}},
             "User": {"attributes": {"id": "integer", "username": "string", "firstName": "string", "lastName": "string",
                                     "email": "string", "password": "string", "phone": "string",
                                     "userStatus": {"type": "integer", "description": "User Status"}}},
             "Tag": {"attributes": {"id": "integer", "name": "string"}},
             "Pet": {"attributes": {"id": "integer", "name": {"type": "string", "nullable": false}, "categoryID": "integer",
                                    "photoUrls": {"type": "json", "nullable": false},
                                    "status": {"type": "string", "description": "pet status in the store; one of: available, pending, sold"}},
                     "relationships": {"category": {"toOne": "Category", "foreignKey": "categoryID"},
                                       "tags": {"toMany": "Tag", "through": "pet_tags"}}}}
            """))
        #expect(imported.fileJSON["routes"] == .parse("""
            [{"method": "POST", "path": "/pet", "target": "Pet"},
             {"method": "PUT", "path": "/pet", "target": "Pet"},
             {"path": "/pet/findByStatus", "target": "Pet"},
             {"path": "/pet/findByTags", "target": "Pet"},
             {"path": "/pet/:id", "target": "Pet"},
             {"method": "DELETE", "path": "/pet/:id", "target": "Pet"},
             {"method": "POST", "path": "/pet/:petId/uploadImage", "target": "DATA"},
             {"path": "/store/inventory", "target": "DATA"},
             {"method": "POST", "path": "/store/order", "target": "Order"},
             {"path": "/store/order/:id", "target": "Order"},
             {"method": "DELETE", "path": "/store/order/:id", "target": "Order"},
             {"method": "POST", "path": "/user", "target": "User"},
             {"method": "POST", "path": "/user/createWithList", "target": "User"},
             {"path": "/user/login", "target": "DATA"},
             {"path": "/user/:username", "target": "User"},
             {"method": "PUT", "path": "/user/:username", "target": "User"},
             {"method": "DELETE", "path": "/user/:username", "target": "User"}]
            """))
        #expect(imported.notes.map(\.description) == [
            "Address at petstore.yaml #/components/schemas/Address: an object without an id or identity-like property: not an entity",
            "ApiResponse at petstore.yaml #/components/schemas/ApiResponse: an object without an id or identity-like property: not an entity",
            "GET /pet/:id at petstore.yaml #/paths/~1pet~1{petId}: {petId} names the Pet its GET answers: the route's variable is :id, "
                + "Pet's key, so a call scopes by it and find(\"Pet\", id:) reads through it",
            "POST /pet/:id at petstore.yaml #/paths/~1pet~1{petId}/post: no JSON response, and no entity in its request body: not a route",
            "GET /store/order/:id at petstore.yaml #/paths/~1store~1order~1{orderId}: {orderId} names the Order its GET answers: the "
                + "route's variable is :id, Order's key, so a call scopes by it and find(\"Order\", id:) reads through it",
            "GET /user/logout at petstore.yaml #/paths/~1user~1logout/get: no JSON response: not a route",
            "Customer.address at petstore.yaml #/components/schemas/Customer/properties/address: an array of Address objects "
                + "without an id or identity-like property: json",
        ])
        // GET /pet/10 names Pet 10: the route scopes by the key, so find("Pet", id: 10) reads through it.
        let pet = try RouteTable(schema: imported.schema).resolve(.get, "/pet/10")
        #expect(pet.scope.isSingleObject)
        #expect(pet.scope.conditions.map(\.attribute) == ["id"])
        // The path's :username fills User.username.
        let table = try RouteTable(schema: imported.schema)
        let resolution = try table.resolve(.get, "/user/theUser")
        #expect(resolution.scope.conditions.map(\.attribute) == ["username"])
        #expect(imported.text == imported.fileJSON.serialized(pretty: true) + "\n")
    }

    @Test("the imported pet store syncs its documented pets, orders and users: no unplaced key, no change the second time")
    func petStoreRoundTrip() async throws {
        let imported = try Self.imported("petstore.yaml")
        let store = try SQLiteReplica(store: Store.inMemory(schema: imported.schema))
        let listed = try await Self.importsCleanly(store, "/pet/findByStatus?status=available", Self.pets)
        #expect(listed.changes["Pet"]?.inserted.integers == [10, 11])
        #expect(listed.changes["Category"]?.inserted.integers == [1, 2])
        #expect(listed.changes["Tag"]?.inserted.integers == [0, 3])
        _ = try await Self.importsCleanly(store, "/pet/10", Self.pet)
        _ = try await Self.importsCleanly(store, "/pet", Self.pet, method: .post)
        _ = try await Self.importsCleanly(store, "/pet", Self.pet, method: .put)
        let order = try await Self.importsCleanly(store, "/store/order/10", Self.order)
        #expect(order.changes["Order"]?.inserted.integers == [10])
        let user = try await Self.importsCleanly(store, "/user/theUser", Self.user)
        #expect(user.changes["User"]?.inserted.integers == [10])
        let inventory = try await store.sync(.get, "/store/inventory", body: Data(#"{"available": 7, "sold": 2}"#.utf8))
        #expect(inventory.data == .parse(#"{"available": 7, "sold": 2}"#))
        #expect(inventory.changes.isEmpty)

        let pet = try #require(try await store.rows(RowQuery("Pet", where: "id = ?", arguments: [.integer(10)])).first)
        #expect(pet["name"] == .string("doggie"))
        #expect(pet["categoryID"] == .integer(1))
        #expect(pet["photoUrls"] == .json(.parse(#"["string"]"#)))
        #expect(pet["status"] == .string("available"))
        let shipped = try #require(try await store.rows(RowQuery("Order")).first)
        #expect(shipped["shipDate"] == .date(Date(timeIntervalSince1970: 1_714_566_896)))
        #expect(shipped["complete"] == .bool(true))
    }

    @Test("the 3.1 conversion: type arrays are nullable, a wrapper is an envelope, oneOf without a discriminator is json with a note")
    func petStore31() async throws {
        let imported = try Self.imported("petstore-3.1.json")
        #expect(imported.fileJSON["name"] == "petstore-3.1")
        #expect(imported.schema.entities.map(\.name) == ["Order", "Customer", "Category", "User", "Tag", "Pet"])
        #expect(imported.fileJSON["entities"]?["Order"]?["attributes"] == .parse("""
            {"id": "integer", "petId": {"type": "integer", "nullable": false}, "quantity": {"type": "integer", "nullable": false},
             "shipDate": "date", "status": {"type": "string", "description": "Order Status; one of: placed, approved, delivered"},
             "complete": "bool"}
            """))
        #expect(imported.fileJSON["entities"]?["Pet"]?["attributes"] == .parse("""
            {"id": "integer", "name": {"type": "string", "nullable": false}, "categoryID": "integer",
             "owner": {"type": "json", "description": "who owns the pet"}, "photoUrls": {"type": "json", "nullable": false},
             "status": {"type": "string", "description": "pet status in the store; one of: available, pending, sold"}}
            """))
        let routes = try #require(imported.fileJSON["routes"]?.arrayValue)
        #expect(routes.count == 18)
        #expect(routes[4] == .parse(#"{"path": "/pet/page", "target": "Pet", "envelope": "items"}"#))
        let notes = imported.notes.map(\.description)
        #expect(notes.contains("Pet.owner at petstore-3.1.json #/components/schemas/Pet/properties/owner/oneOf: "
                               + "oneOf without a discriminator: json"))
        #expect(notes.contains("PetPage at petstore-3.1.json #/components/schemas/PetPage: "
                               + "an object without an id or identity-like property: not an entity"))
        #expect(notes.count == 10)

        let store = try SQLiteReplica(store: Store.inMemory(schema: imported.schema))
        let page = #"{"items": [{"id":10,"name":"doggie","category":{"id":1,"name":null},"owner":{"id":10,"username":"theUser"},"photoUrls":["string"],"tags":[],"status":null}], "total": 1, "next": null}"#
        let result = try await Self.importsCleanly(store, "/pet/page", page)
        #expect(result.changes["Pet"]?.inserted.integers == [10])
        let pet = try #require(try await store.rows(RowQuery("Pet")).first)
        #expect(pet["owner"] == .json(.parse(#"{"id":10,"username":"theUser"}"#)))
        #expect(pet["status"] == .null)
    }
}

extension JSONValue {
    /// Parses a literal in a test.
    static func parse(_ text: String) -> JSONValue {
        (try? JSONValue(parsing: text)) ?? .string("unparseable: \(text)")
    }
}

