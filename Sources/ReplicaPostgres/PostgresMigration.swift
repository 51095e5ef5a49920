import Foundation
import Logging
import PostgresNIO
import ReplicaCore

/// Opening a PostgreSQL replica: reads the recorded schema and the catalog, plans with the
/// same ``ReplicaCore/StoreMigrator`` as SQLite, and applies the plan in one transaction. Opens
/// of several processes at once take turns (an advisory lock), so two never both create tables.
struct PostgresMigration {
    let url: PostgresURL
    let connection: PostgresConnection
    let logger: Logger

    /// The advisory lock key that serializes opens.
    static let openLock: Int64 = 0x5265_706C_6963_6100   // "Replica\0"
    /// The table of change sets too large for a `NOTIFY` payload.
    static let changesTable = "replica_changes"
    /// The sequence numbering change sets across processes.
    static let changeSequence = "replica_change_seq"

    func prepare(schema: Schema?) async throws -> Schema {
        do {
            return try await connection.transaction(logger: logger) { _ in
                try await run("SELECT pg_advisory_xact_lock(\(Self.openLock))")
                let catalog = try await readCatalog()
                let recorded = try await recordedSchema(catalog)
                let plan = try StoreMigrator(path: url.description, dialect: .postgres)
                    .plan(recorded: recorded, given: schema, catalog: catalog)
                for statement in plan.statements { try await run(statement) }
                try await createBookkeeping()
                if plan.recordsSchema { try await record(plan.schema) }
                return plan.schema
            }
        } catch {
            if error is StoreError || error is PostgresStoreError { throw error }
            throw PostgresStoreError.from(error, url: url, doing: "cannot open the replica")
        }
    }

    func run(_ sql: String, _ arguments: [AttributeValue] = []) async throws {
        do {
            _ = try await connection.query(PostgresSQL.query(sql, arguments), logger: logger).collect()
        } catch {
            throw PostgresStoreError.from(error, url: url)
        }
    }

    /// Every table of the connection's schema search path and its columns.
    func readCatalog() async throws -> PostgresCatalog {
        var columns: [String: [String]] = [:]
        let query: PostgresQuery = """
            SELECT c.relname, a.attname FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema()
            """
        do {
            for try await (table, column) in try await connection.query(query, logger: logger).decode((String, String?).self) {
                columns[table, default: []] += column.map { [$0] } ?? []
            }
        } catch {
            throw PostgresStoreError.from(error, url: url, doing: "cannot read the catalog")
        }
        return PostgresCatalog(columns: columns)
    }

    func recordedSchema(_ catalog: PostgresCatalog) async throws -> Schema? {
        guard catalog.columns[StoreMigrator.metaTable] != nil else { return nil }
        let query = PostgresSQL.query("SELECT value FROM \(StoreMigrator.metaTable.quotedIdentifier) WHERE key = 'schema'")
        var text: String?
        do {
            for try await value in try await connection.query(query, logger: logger).decode(String.self) { text = value }
        } catch {
            throw PostgresStoreError.from(error, url: url, doing: "cannot read the recorded schema")
        }
        guard let text else { return nil }
        do {
            return try Schema(json: Data(text.utf8), file: "\(url) (recorded schema)")
        } catch {
            throw StoreError(.corruptMetadata, "the recorded schema cannot be read: \(error)", path: url.description)
        }
    }

    func createBookkeeping() async throws {
        try await run("""
            CREATE TABLE IF NOT EXISTS \(StoreMigrator.metaTable.quotedIdentifier) (
                key text NOT NULL PRIMARY KEY, value text NOT NULL)
            """)
        try await run("CREATE SEQUENCE IF NOT EXISTS \(Self.changeSequence.quotedIdentifier)")
        try await run("""
            CREATE TABLE IF NOT EXISTS \(Self.changesTable.quotedIdentifier) (
                id bigint NOT NULL PRIMARY KEY, committed timestamptz NOT NULL DEFAULT now(), body text NOT NULL)
            """)
        // The HTTP client's records (validators, cursors, pages' keys), shared by every service.
        try await run("""
            CREATE TABLE IF NOT EXISTS \(ClientCache.table.quotedIdentifier) (
                url text NOT NULL PRIMARY KEY, etag text, last_modified text, cursor text, next_url text, keys bytea,
                paged boolean NOT NULL DEFAULT false)
            """)
        // Local writes waiting for the API, shared by every service.
        for statement in OutboxTable.create(.postgres) { try await run(statement) }
    }

    func record(_ schema: Schema) async throws {
        let upsert = "INSERT INTO \(StoreMigrator.metaTable.quotedIdentifier) (key, value) VALUES (?, ?) "
            + "ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE \(StoreMigrator.metaTable.quotedIdentifier).value IS DISTINCT FROM excluded.value"
        try await run(upsert, [.string("schema"), .string(schema.fileJSON.serialized(pretty: true, sortedKeys: false))])
        try await run(upsert, [.string("schema_version"), .string(String(schema.version))])
    }
}

/// The tables and columns of a PostgreSQL schema, read before planning a migration.
struct PostgresCatalog: SchemaCatalog {
    /// Columns by table name.
    let columns: [String: [String]]

    func tableExists(_ name: String) throws -> Bool {
        columns.keys.contains { $0.lowercased() == name.lowercased() }
    }

    func columns(in table: String) throws -> [String] {
        columns[table] ?? columns.first { $0.key.lowercased() == table.lowercased() }?.value ?? []
    }
}
