import Foundation
import Replica
import ReplicaHTTP

/// The README's "In Swift" example: a schema in code, an in-memory store, a client syncing
/// `/products` from `baseURL`, a live result set printing its rows and then the diff of every
/// change the periodic sync brings in.
///
/// - Parameters:
///   - baseURL: The API's base URL (the test points it at an embedded mock server).
///   - maxUpdates: How many updates to print before returning.
/// - Returns: The live result set's rows when it returns.
public func quickStart(baseURL: URL, maxUpdates: Int) async throws -> [EntityRow] {
    // README: quick-start
    let schema = try Schema(name: "shop", routes: [Route(.get, "/products", target: .entity("Product"))]) {
        Entity("Product") {
            Attribute("id", .integer)
            Attribute("name", .string)
            Attribute("price", .double)
        }
    }
    let engine = try SQLiteReplica(store: Store.inMemory(schema: schema))
    let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(
        transport: HTTPTransport(), baseURLs: [.production: baseURL]))
    try await client.call("/products")                      // GET, upserted in one transaction

    let products = try LiveResultSet(engine: engine, query: LiveQuery("Product", sort: [.ascending("name")]))
    for row in products.snapshot.rows { print(row) }
    let updates = products.updates()                        // every change after this snapshot
    let polling = client.keepSynced("/products", every: .seconds(1)) { _ in }
    for await update in updates.prefix(maxUpdates) {        // without .prefix: until cancelled
        print(update.diff)
    }
    polling.cancel()
    // README: end
    return Array(products.snapshot.rows)
}
