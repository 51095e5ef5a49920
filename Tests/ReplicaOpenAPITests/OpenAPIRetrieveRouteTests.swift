import Foundation
import Replica
import ReplicaOpenAPI
import ReplicaTestSupport
import Testing

/// A `GET` answering one object of an entity is that entity's route, whether its response names
/// the entity (`$ref`) or is a `oneOf`/`anyOf` with one entity among its branches (Stripe's
/// `GET /v1/customers/{customer}` answers a customer or a deleted customer); one that cannot be
/// (several entities, no identity) stays DATA with a note naming the path and why.
@Suite("OpenAPI import: retrieve routes")
struct OpenAPIRetrieveRouteTests {
    static let stripe = packageRoot.appendingPathComponent("Schemas/openapi/stripe-customers.json")

    @Test("Stripe's customers and invoices: lists, retrieves (anyOf customer or deleted customer), updates and deletes are entity routes")
    func stripeRetrieves() throws {
        let imported = try OpenAPISchemaImport.schema(contentsOf: Self.stripe)
        let routes = imported.schema.routes.map { "\($0.method) \($0.path) -> \($0.target)" }
        #expect(routes == [
            "GET /v1/customers -> Customer", "POST /v1/customers -> Customer",
            "GET /v1/customers/:id -> Customer", "POST /v1/customers/:id -> Customer",
            "DELETE /v1/customers/:id -> Customer",
            "GET /v1/invoices -> Invoice", "POST /v1/invoices -> Invoice",
            "GET /v1/invoices/:id -> Invoice", "DELETE /v1/invoices/:id -> Invoice",
        ], "\(imported.text)")
        let lists = imported.schema.routes.filter { $0.method == .get && !$0.path.contains(":") }
        #expect(lists.map(\.envelope) == ["data", "data"])
        #expect(lists.map(\.pagination) == [PaginationRule.stripe, PaginationRule.stripe])
        let customer = try imported.schema.requireEntity("Customer")
        #expect(customer.primaryKeyAttribute.type == .string)
        #expect(customer.attribute(named: "addressCity")?.jsonKey == "address.city")

        let notes = imported.notes.map(\.description)
        let place = "stripe-customers.json #/paths/~1v1~1customers~1{customer}"
        #expect(notes.contains("GET /v1/customers/:id at \(place): {customer} names the Customer its GET answers: the route's variable "
                               + "is :id, Customer's key, so a call scopes by it and find(\"Customer\", id:) reads through it"),
                "\(notes.joined(separator: "\n"))")
        #expect(notes.contains("GET /v1/customers/:id at \(place)/get/responses/200/content/application~1json/schema/anyOf: "
                               + "answers anyOf customer, deleted_customer: the route's objects are Customer (DeletedCustomer: "
                               + "its deleted form, a `deleted` flag beside its key)"), "\(notes.joined(separator: "\n"))")
        #expect(notes.contains("DELETE /v1/customers/:id at \(place)/delete: answers DeletedCustomer, the deleted form of "
                               + "the Customer its path's GET answers: the route targets Customer"), "\(notes.joined(separator: "\n"))")
        // Every GET of the document is an entity route: none is DATA.
        #expect(imported.schema.routes.allSatisfy { $0.target != .data })
        try imported.schema.checkOpening(in: .postgres)
        try imported.schema.checkOpening(in: .sqlite)
        #expect(try Schema(jsonValue: imported.schema.fileJSON) == imported.schema)
    }

    static let unreadable = """
        openapi: 3.0.3
        info: {title: Pets, version: "1"}
        paths:
          /pets/{pet}:
            get:
              parameters: [{name: pet, in: path, required: true, schema: {type: string}}]
              responses:
                '200':
                  description: a cat or a dog
                  content: {application/json: {schema: {oneOf: [{$ref: '#/components/schemas/Cat'}, {$ref: '#/components/schemas/Dog'}]}}}
          /codes/{code}:
            get:
              parameters: [{name: code, in: path, required: true, schema: {type: string}}]
              responses:
                '200':
                  description: a code
                  content: {application/json: {schema: {anyOf: [{type: string}, {type: integer}]}}}
          /balance:
            get:
              responses:
                '200':
                  description: the balance
                  content: {application/json: {schema: {$ref: '#/components/schemas/Balance'}}}
          /cats/{cat}:
            get:
              parameters: [{name: cat, in: path, required: true, schema: {type: integer}}]
              responses:
                '200':
                  description: a cat, or nothing
                  content: {application/json: {schema: {oneOf: [{$ref: '#/components/schemas/Cat'}, {type: string}]}}}
        components:
          schemas:
            Cat: {type: object, required: [id], properties: {id: {type: integer}, purrs: {type: boolean}}}
            Dog: {type: object, required: [id], properties: {id: {type: integer}, barks: {type: boolean}}}
            Balance: {type: object, properties: {available: {type: integer}, pending: {type: integer}}}
        """

    @Test("several entities, no entity, no identity: DATA, each with a note naming the path and why; one entity beside a string is its route")
    func dataWithNotes() throws {
        let imported = try OpenAPISchemaImport.schema(from: Data(Self.unreadable.utf8), source: "pets.yaml", name: "pets")
        #expect(imported.schema.routes.map { "\($0.method) \($0.path) -> \($0.target)" } == [
            "GET /pets/:pet -> DATA", "GET /codes/:code -> DATA", "GET /balance -> DATA", "GET /cats/:id -> Cat",
        ])
        let notes = imported.notes.map(\.description)
        let schema = "responses/200/content/application~1json/schema"
        for expected in [
            "GET /pets/:pet at pets.yaml #/paths/~1pets~1{pet}/get/\(schema)/oneOf: answers oneOf Cat, Dog, objects of several "
                + "entities (Cat, Dog) that no discriminator tells apart: DATA, handed back as it is",
            "GET /codes/:code at pets.yaml #/paths/~1codes~1{code}/get/\(schema)/anyOf: answers anyOf #0, #1, none of which is "
                + "one object of an entity: DATA, handed back as it is",
            "GET /balance at pets.yaml #/paths/~1balance/get/\(schema): answers Balance, which has no id or identity-like property "
                + "(and holds no array of an entity's objects): DATA, handed back as it is",
            "GET /cats/:id at pets.yaml #/paths/~1cats~1{cat}/get/\(schema)/oneOf: answers oneOf Cat, #1: the route's objects are Cat; "
                + "objects of #1 it answers are read as Cat's",
        ] {
            #expect(notes.contains(expected), "\(expected)\n-- notes:\n\(notes.joined(separator: "\n"))")
        }
    }
}
