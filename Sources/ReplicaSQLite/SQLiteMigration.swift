import Foundation
import GRDB
import ReplicaCore

/// Migrating an SQLite database: the plan read and applied inside the caller's write transaction.
extension StoreMigrator {
    /// What opening the database with `schema` would do, read without writing.
    func plan(_ db: Database, schema: Schema?) throws -> MigrationPlan {
        try plan(recorded: try recordedSchema(db), given: schema, catalog: SQLiteCatalog(db: db))
    }

    /// Creates or migrates the tables for `schema` (inside the caller's write transaction).
    func prepare(_ db: Database, schema: Schema?) throws -> Schema {
        let plan = try plan(db, schema: schema)
        for statement in plan.statements { try db.execute(sql: statement) }
        if plan.recordsSchema { try record(db, schema: plan.schema) }
        return plan.schema
    }

    func recordedSchema(_ db: Database) throws -> Schema? {
        guard try db.replicaTableExists(Self.metaTable) else { return nil }
        guard let text = try String.fetchOne(
            db, sql: "SELECT value FROM \(Self.metaTable.quotedIdentifier) WHERE key = 'schema'")
        else { return nil }
        do {
            return try Schema(json: Data(text.utf8), file: "\(path ?? ":memory:") (recorded schema)")
        } catch {
            throw StoreError(.corruptMetadata, "the recorded schema cannot be read: \(error)", path: path)
        }
    }

    func record(_ db: Database, schema: Schema) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(Self.metaTable.quotedIdentifier) (
                key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL)
            """)
        // Unchanged values write nothing: opening a store is then no commit that other processes'
        // live result sets would see (through `data_version`) as a change.
        let upsert = "INSERT INTO \(Self.metaTable.quotedIdentifier) (key, value) VALUES (?, ?) "
            + "ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE value IS NOT excluded.value"
        try db.execute(sql: upsert, arguments: ["schema", schema.fileJSON.serialized(pretty: true, sortedKeys: false)])
        try db.execute(sql: upsert, arguments: ["schema_version", String(schema.version)])
    }
}

/// The tables of a SQLite database, read inside the migration's transaction.
struct SQLiteCatalog: SchemaCatalog {
    let db: Database

    func tableExists(_ name: String) throws -> Bool { try db.replicaTableExists(name) }
    func columns(in table: String) throws -> [String] { try db.replicaColumns(in: table) }
}
