import Foundation
import Replica
import ReplicaPostgres

/// The store a `--db` names: a `postgres://` URL (a PostgreSQL replica) or an SQLite file. The
/// commands use it through ``ReplicaStore`` alone.
struct OpenedStore {
    let store: any ReplicaStore
    var mapping: SchemaMapping { store.mapping }
    var routes: RouteTable { store.routes }

    /// Releases the store's connections (a PostgreSQL replica's; nothing for SQLite).
    func close() async {
        await store.close()
    }

    /// Runs `body`, then closes the store, whether `body` returned or threw.
    func using<T>(_ body: (OpenedStore) async throws -> T) async throws -> T {
        let result: T
        do {
            result = try await body(self)
        } catch {
            await close()
            throw error
        }
        await close()
        return result
    }

    /// Opens `db` with the schema file (creating tables), or with the schema it records; an
    /// SQLite file's writes wait up to `busyTimeout` seconds for another process's.
    ///
    /// - Throws: `CLIError` with the store's message (the URL never shows its password).
    static func open(db: String, schema: String?, busyTimeout: Double = StoreOptions().busyTimeout) async throws -> OpenedStore {
        guard PostgresURL.isPostgres(db) else {
            return try open(sqlite: ImportCommand.openStore(db: db, schema: schema, busyTimeout: busyTimeout))
        }
        let loaded: Schema?
        do {
            loaded = try schema.map { try Schema(contentsOf: URL(fileURLWithPath: $0)) }
        } catch let error as SchemaError {
            throw CLIError(error.description)
        }
        return try await open(postgres: db, schema: loaded)
    }

    /// The SQLite replica of an opened `Store`.
    ///
    /// - Throws: ``RouteError`` or ``MappingError`` when the schema's routes or maps cannot be built.
    static func open(sqlite store: Store) throws -> OpenedStore {
        OpenedStore(store: try SQLiteReplica(store: store))
    }

    /// Opens the PostgreSQL replica at `url` with `schema` (`nil`: the one it records).
    ///
    /// - Throws: `CLIError` with the store's message (the URL never shows its password).
    static func open(postgres url: String, schema: Schema?) async throws -> OpenedStore {
        do {
            return OpenedStore(store: try await PostgresReplica.open(url: url, schema: schema))
        } catch let error as SchemaError {
            throw CLIError(error.description)
        } catch let error as StoreError {
            throw CLIError(error.description)
        } catch let error as PostgresStoreError {
            throw CLIError(error.description)
        }
    }
}
