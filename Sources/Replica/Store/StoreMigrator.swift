import Foundation
import GRDB

/// Creates tables for a new database, reads the recorded schema of an existing one,
/// and applies additive migrations. Runs inside one write transaction, so a refused
/// migration leaves the database untouched.
struct StoreMigrator {
    let path: String?

    static let metaTable = "replica_meta"

    func fail(_ message: String) -> StoreError {
        StoreError(.incompatibleSchema, message, path: path)
    }

    func prepare(_ db: Database, schema: Schema?) throws -> Schema {
        let recorded = try recordedSchema(db)
        switch (recorded, schema) {
        case (nil, nil):
            throw StoreError(.missingSchema, "the database records no Replica schema; give one to create its tables", path: path)
        case (let recorded?, nil):
            return recorded
        case (nil, let schema?):
            try create(db, schema: schema)
            return schema
        case (let recorded?, let schema?):
            if recorded.fileJSON == schema.fileJSON { return schema }
            guard recorded.name == schema.name else {
                throw fail("the database holds schema '\(recorded.name)', not '\(schema.name)'")
            }
            guard schema.version > recorded.version else {
                if schema.version == recorded.version {
                    throw fail("schema '\(schema.name)' differs from the one recorded at version \(recorded.version); "
                               + "raise its version to migrate")
                }
                throw fail("the database was written with version \(recorded.version) of schema '\(schema.name)', "
                           + "newer than the given version \(schema.version)")
            }
            try migrate(db, from: recorded, to: schema)
            return schema
        }
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

    func create(_ db: Database, schema: Schema) throws {
        for entity in schema.entities {
            if try db.replicaTableExists(entity.tableName) {
                throw fail("table '\(entity.tableName)' of entity '\(entity.name)' already exists in a database "
                           + "that records no Replica schema")
            }
            try db.execute(sql: SchemaDDL.createTable(entity))
            for index in SchemaDDL.indexes(of: entity) {
                try db.execute(sql: SchemaDDL.createIndex(index, on: entity))
            }
        }
        try record(db, schema: schema)
    }

    /// Applies the additive changes from `old` to `new`, or refuses before writing anything.
    func migrate(_ db: Database, from old: Schema, to new: Schema) throws {
        var statements: [String] = []
        for entity in new.entities {
            guard let previous = old.entities.first(where: { $0.name == entity.name }) else {
                if try db.replicaTableExists(entity.tableName) {
                    throw fail("new entity '\(entity.name)' uses table '\(entity.tableName)', which already exists")
                }
                statements.append(SchemaDDL.createTable(entity))
                statements += SchemaDDL.indexes(of: entity).map { SchemaDDL.createIndex($0, on: entity) }
                continue
            }
            statements += try changes(db, from: previous, to: entity)
        }
        // Entities dropped from the schema keep their tables: a migration never deletes data.
        for statement in statements { try db.execute(sql: statement) }
        try record(db, schema: new)
    }

    func changes(_ db: Database, from old: Entity, to new: Entity) throws -> [String] {
        let where_ = "entity '\(new.name)'"
        guard old.tableName == new.tableName else {
            throw fail("\(where_): table changed from '\(old.tableName)' to '\(new.tableName)'; "
                       + "Replica migrates additively and does not rename tables")
        }
        guard old.primaryKey == new.primaryKey else {
            throw fail("\(where_): primary key changed from '\(old.primaryKey)' to '\(new.primaryKey)'; "
                       + "a primary key cannot change")
        }
        var statements: [String] = []
        let existingColumns = Set(try db.replicaColumns(in: new.tableName).map { $0.lowercased() })
        for attribute in new.attributes {
            let what = "\(where_), attribute '\(attribute.name)'"
            if let before = old.attribute(named: attribute.name) {
                guard before.type == attribute.type else {
                    throw fail("\(what): type changed from \(before.type) to \(attribute.type); "
                               + "Replica migrates additively and cannot change a column's type")
                }
                guard before.isNullable == attribute.isNullable else {
                    throw fail("\(what): changed from \(before.isNullable ? "nullable" : "non-null") to "
                               + "\(attribute.isNullable ? "nullable" : "non-null"); Replica cannot change a column's constraints")
                }
            } else if !existingColumns.contains(attribute.name.lowercased()) {
                if !attribute.isNullable && (attribute.defaultValue == nil || attribute.defaultValue == .null) {
                    throw fail("\(what): a non-null attribute added to an existing entity needs a default value "
                               + "for the rows already stored")
                }
                statements.append(SchemaDDL.addColumn(attribute, to: new))
            }
        }
        for attribute in old.attributes where new.attribute(named: attribute.name) == nil {
            if !attribute.isNullable && (attribute.defaultValue == nil || attribute.defaultValue == .null) {
                throw fail("\(where_), attribute '\(attribute.name)': removing a non-null attribute without a default "
                           + "would make its column refuse new rows")
            }
        }
        let oldIndexes = SchemaDDL.indexes(of: old)
        let newIndexes = SchemaDDL.indexes(of: new)
        for index in oldIndexes where !newIndexes.contains(index) {
            statements.append(SchemaDDL.dropIndex(index, on: old))
        }
        for index in newIndexes where !oldIndexes.contains(index) {
            statements.append(SchemaDDL.createIndex(index, on: new))
        }
        return statements
    }
}
