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

    /// Removes the SQLite file at `path` with its `-wal` and `-shm` files, unless another
    /// process has it open: two commands that create one file at the same moment share it, and
    /// the one that fails must not take it from the other.
    ///
    /// SQLite's locks tell: a connection that reads or writes holds one of the database file's
    /// lock bytes (from `PENDING_BYTE`, 0x40000000, through the shared range), and a connection
    /// in WAL mode holds the shared-memory file's DMS byte (128) for as long as it is open. The
    /// file is removed only while this process holds the database file's lock bytes itself (a
    /// process opening it meanwhile waits, then finds no file) and no other holds the DMS byte.
    static func remove(_ path: String) {
        let database = open(path, O_RDWR)
        guard database >= 0 else { return }
        // Closing the descriptor releases the locks below (and any this process held on the file).
        defer { close(database) }
        guard lockBytes(database, type: F_WRLCK, start: 0x4000_0000, length: 512, test: false) else { return }
        let shm = open(path + "-shm", O_RDWR)
        if shm >= 0 {
            defer { close(shm) }
            guard lockBytes(shm, type: F_WRLCK, start: 128, length: 1, test: true) else { return }
        }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Takes (or with `test`, only tests for) a POSIX lock of `length` bytes at `start`; `false`
    /// when another process holds a lock there.
    private static func lockBytes(_ descriptor: Int32, type: Int32, start: Int, length: Int, test: Bool) -> Bool {
        var lock = flock()
        lock.l_type = Int16(type)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(start)
        lock.l_len = off_t(length)
        if test {
            guard fcntl(descriptor, F_GETLK, &lock) == 0 else { return false }
            return lock.l_type == Int16(F_UNLCK)
        }
        return fcntl(descriptor, F_SETLK, &lock) == 0
    }
}
