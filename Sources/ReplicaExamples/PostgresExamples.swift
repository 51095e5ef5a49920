import Foundation
import Replica
import ReplicaHTTP
import ReplicaPostgres

/// README "When one machine is not enough": one replica in PostgreSQL, synced by one service
/// and watched by the others.
///
/// - Returns: The people with more than two children.
public func postgresExample(url: String, schemaFile: URL, peopleFile: String) async throws -> [EntityRow] {
    // README: postgres
    let schema = try Schema(contentsOf: schemaFile)                                    // Schemas/people.json
    let replica = try await PostgresReplica.open(url: url, schema: schema)             // postgres://replica@db:5432/cache
    let token = await replica.addObserver(for: ["Person"], queue: .main) { changes in  // this process's and others' commits
        print("people changed:", changes["Person"] ?? EntityChanges())
    }
    let result = try await replica.importFile(peopleFile, into: .entity("Person"))     // COPY, then one merge
    print(result.changes)
    let store: any ReplicaStore = replica                                              // the protocol SQLiteReplica implements too
    let parents = try await store.rows(RowQuery("Person", where: "numberOfKids > ?", arguments: [.integer(2)]))
    replica.removeObserver(token)
    await replica.close()
    // README: end
    return parents
}

/// The README's live result set on a PostgreSQL replica: opened, its first snapshot counted,
/// its updates printed until it is closed.
///
/// - Returns: The number of people with more than two children.
public func postgresLiveExample(url: String) async throws -> Int {
    // README: postgres-live
    let replica = try await PostgresReplica.open(url: url)                              // the schema the database records
    let parents = try await LiveResultSet(replica: replica, query: LiveQuery(
        "Person", where: "numberOfKids > ?", arguments: [.integer(2)], sort: [.ascending("name")]))
    let updates = parents.updates()                                                      // from the current snapshot on
    print(updates.initial.count)
    let printing = Task { for await update in updates { print(update.diff) } }          // every process's commits
    parents.close()                                                                      // ends the updates
    await printing.value
    await replica.close()
    // README: end
    return updates.initial.count
}

/// The README's HTTP client on a PostgreSQL replica: a paged call committed in one
/// transaction, its validators kept in the database for every service.
///
/// - Returns: The call's result.
public func postgresClientExample(url: String, schemaFile: URL, api: URL, transport: HTTPTransport) async throws -> CallResult {
    // README: postgres-client
    let replica = try await PostgresReplica.open(url: url, schema: try Schema(contentsOf: schemaFile))
    let client = ReplicaClient(store: replica, configuration: ClientConfiguration(
        transport: transport, baseURLs: [.production: api]))                       // http://127.0.0.1:8888
    let result = try await client.call("/people", params: ["_sort": "id", "_page": 1, "_limit": 2])
    print(result.status, result.pages, result.changes)                              // every page, one transaction
    let session = try replica.session(.get, "/people", options: SyncOptions())     // or stage pages yourself
    _ = try await session.stage(body: Data(#"[{"id": 9, "name": "Ida"}]"#.utf8))
    _ = try await session.commit(complete: false)                                   // upserts; deletes nothing
    await replica.close()
    // README: end
    return result
}
