import Foundation
import Replica
import ReplicaPostgres

/// The store a `--db` names: a `postgres://` URL (a PostgreSQL replica) or an SQLite file.
struct OpenedStore {
    let store: any ReplicaStore
    let mapping: SchemaMapping
    let routes: RouteTable
    let close: () async -> Void

    /// Opens `db` with the schema file (creating tables), or with the schema it records.
    ///
    /// - Throws: `CLIError` with the store's message (the URL never shows its password).
    static func open(db: String, schema: String?) async throws -> OpenedStore {
        guard PostgresURL.isPostgres(db) else {
            let engine = try SyncEngine(store: ImportCommand.openStore(db: db, schema: schema))
            return OpenedStore(store: engine, mapping: engine.mapping, routes: engine.routes, close: {})
        }
        let loaded: Schema?
        do {
            loaded = try schema.map { try Schema(contentsOf: URL(fileURLWithPath: $0)) }
        } catch let error as SchemaError {
            throw CLIError(error.description)
        }
        return try await open(postgres: db, schema: loaded)
    }

    /// Opens the PostgreSQL replica at `url` with `schema` (`nil`: the one it records).
    ///
    /// - Throws: `CLIError` with the store's message (the URL never shows its password).
    static func open(postgres url: String, schema: Schema?) async throws -> OpenedStore {
        do {
            let replica = try await PostgresReplica.open(url: url, schema: schema)
            return OpenedStore(store: replica, mapping: replica.mapping, routes: replica.routes, close: { await replica.close() })
        } catch let error as SchemaError {
            throw CLIError(error.description)
        } catch let error as StoreError {
            throw CLIError(error.description)
        } catch let error as PostgresStoreError {
            throw CLIError(error.description)
        }
    }
}
