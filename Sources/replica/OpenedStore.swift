import Foundation
import Replica
import ReplicaPostgres

/// The store a `--db` names: a `postgres://` URL (a PostgreSQL replica) or an SQLite file. The
/// commands use it through ``ReplicaStore`` alone.
struct OpenedStore {
    let store: any ReplicaStore
    var mapping: SchemaMapping { store.mapping }
    var routes: RouteTable { store.routes }

    /// Releases the store's connections (a PostgreSQL replica's); for SQLite, waits for the WAL checkpoint under way.
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

/// A database file a command creates: removed again when the command fails before its first
/// commit, so that a failed first import or sync leaves nothing behind (no file with a schema
/// recorded and no rows).
enum CreatedFile {
    /// Runs `body`; when it throws and `path` did not exist before, removes the file and its WAL
    /// and shared-memory files, then rethrows.
    ///
    /// ```swift
    /// try await CreatedFile.removingOnFailure("new.sqlite") { try await importing(into: open("new.sqlite")) }
    /// ```
    static func removingOnFailure<T>(_ path: String, _ body: () async throws -> T) async throws -> T {
        let created = isNew(path)
        do {
            return try await body()
        } catch {
            if created { remove(path) }
            throw error
        }
    }

    /// Whether opening `db` creates an SQLite file (it is no PostgreSQL URL and no file is there).
    static func isNew(_ db: String) -> Bool {
        !PostgresURL.isPostgres(db) && !FileManager.default.fileExists(atPath: db)
    }

    /// Removes the SQLite file at `path` with its `-wal` and `-shm` files (an open connection
    /// keeps reading what it had; nothing can open them again).
    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
