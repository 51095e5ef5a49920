import Foundation
import Replica
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
    let store: any ReplicaStore = replica                                              // the protocol SyncEngine implements too
    let parents = try await store.rows(RowQuery("Person", where: "numberOfKids > ?", arguments: [.integer(2)]))
    replica.removeObserver(token)
    await replica.close()
    // README: end
    return parents
}
