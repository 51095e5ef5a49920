import AsyncHTTPClient
import Foundation
import NIOCore
import Replica
import ReplicaHTTP
import ReplicaOpenAPI
import ReplicaServer
import ReplicaTestSupport
import Testing

/// `replica serve --schema` with a schema imported from a Stripe-like OpenAPI document answers
/// every GET the document lists: its lists, and its retrieves (`GET /v1/customers/{customer}`,
/// whose response is `anyOf` a customer or a deleted customer) with the object for a seeded key and
/// 404 for another, never 405; the client syncs them with no key left over.
@Suite("OpenAPI import: every GET of the document served")
struct OpenAPIRetrieveServeTests {
    static let document = packageRoot.appendingPathComponent("Schemas/openapi/stripe-customers.json")

    /// A customer and an invoice as Stripe's API reference shows them.
    static let customer: JSONValue = [
        "id": "cus_NffrFeUfNV2Hib", "object": "customer", "address": .null, "balance": 0, "created": 1680893993,
        "currency": .null, "delinquent": false, "description": .null, "email": "jennyrosen@example.com",
        "invoice_prefix": "0759376C", "livemode": false, "metadata": [:], "name": "Jenny Rosen", "phone": .null,
        "preferred_locales": [],
    ]
    static let invoice: JSONValue = [
        "id": "in_1MtHbELkdIwHu7ixl4OzzPMv", "object": "invoice", "amount_due": 999, "amount_paid": 0, "created": 1680644467,
        "currency": "usd", "customer": "cus_NffrFeUfNV2Hib", "livemode": false, "number": .null, "status": "draft", "total": 999,
    ]
    /// The seeded key of each path variable of the document.
    static let keys = ["customer": "cus_NffrFeUfNV2Hib", "invoice": "in_1MtHbELkdIwHu7ixl4OzzPMv"]

    /// The document's GET paths, in document order.
    static func getPaths() throws -> [String] {
        let raw = try JSONValue(parsing: String(contentsOf: document, encoding: .utf8))
        let paths = try #require(raw["paths"]?.objectValue)
        return paths.compactMap { path, item in item["get"] == nil ? nil : path }
    }

    static func get(_ base: String, _ path: String) async throws -> (status: Int, json: JSONValue?) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + path), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), try? JSONValue(parsing: String(buffer: body)))
    }

    @Test("each GET path answers 200 (the object for a seeded key, the list with its envelope) and 404 for an unknown key; the client syncs them")
    func everyGetServed() async throws {
        let imported = try OpenAPISchemaImport.schema(contentsOf: Self.document)
        let server = try await MockServer.start(schema: imported.schema)
        let transport = HTTPTransport()
        try await withTeardown {
            _ = try await server.load(json: .array([Self.customer]), into: "customers")
            _ = try await server.load(json: .array([Self.invoice]), into: "invoices")
            let base = server.baseURL
            let templates = try Self.getPaths()
            #expect(templates == ["/v1/customers", "/v1/customers/{customer}", "/v1/invoices", "/v1/invoices/{invoice}"])
            for template in templates {
                guard let variable = MockRouteVariable.last(of: template) else {
                    let list = try await Self.get(base, template)
                    #expect(list.status == 200, "GET \(template)")
                    #expect(list.json?["data"]?.arrayValue?.count == 1, "GET \(template): \(String(describing: list.json))")
                    #expect(list.json?["has_more"] == false, "GET \(template)")
                    continue
                }
                let key = try #require(Self.keys[variable])
                let found = try await Self.get(base, template.replacingOccurrences(of: "{\(variable)}", with: key))
                #expect(found.status == 200, "GET \(template) with \(key)")
                #expect(found.json?["id"] == .string(key), "GET \(template): \(String(describing: found.json))")
                let missing = try await Self.get(base, template.replacingOccurrences(of: "{\(variable)}", with: "nope_1"))
                #expect(missing.status == 404, "GET \(template) with an unknown key")
            }

            let url = try #require(URL(string: base))
            let engine = try SQLiteReplica(store: Store.inMemory(schema: imported.schema))
            let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(transport: transport, baseURLs: [.production: url]))
            let list = try await client.call("/v1/customers")
            #expect(list.sync.ignoredKeys.map(\.description) == [])
            let retrieved = try await client.call("/v1/customers/cus_NffrFeUfNV2Hib")
            #expect(retrieved.sync.ignoredKeys.map(\.description) == [])
            #expect(retrieved.changes.isEmpty, "\(retrieved.changes)")
            let invoice = try await client.call("/v1/invoices/in_1MtHbELkdIwHu7ixl4OzzPMv")
            #expect(invoice.sync.ignoredKeys.map(\.description) == [])
            #expect(try engine.store.rows("Customer").map(\.primaryKey) == [.string("cus_NffrFeUfNV2Hib")])
            #expect(try engine.store.rows("Invoice").map { $0["total"] } == [.integer(999)])
            // The retrieve route names the key (:id): find reads one customer through it.
            let found = try await client.find("Customer", id: .string("cus_NffrFeUfNV2Hib"))
            #expect(found?["name"] == .string("Jenny Rosen"))
        } teardown: {
            try? await transport.shutdown()
            await server.stop()
        }
    }
}

/// The last variable of an OpenAPI path template (`customer` of `/v1/customers/{customer}`), nil
/// when the path ends in a literal.
enum MockRouteVariable {
    static func last(of template: String) -> String? {
        guard let segment = template.split(separator: "/").last, segment.hasPrefix("{"), segment.hasSuffix("}") else { return nil }
        return String(segment.dropFirst().dropLast())
    }
}
