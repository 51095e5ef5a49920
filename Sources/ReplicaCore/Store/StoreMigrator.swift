import Foundation

/// What a migration needs to know of a database's tables.
package protocol SchemaCatalog {
    /// Whether a table of that name exists (case-insensitively).
    func tableExists(_ name: String) throws -> Bool
    /// The column names of a table.
    func columns(in table: String) throws -> [String]
}

/// What opening a store with a schema does: the schema in force, the DDL to run and whether
/// the schema must be recorded.
package struct MigrationPlan {
    /// The schema in force after the migration.
    package var schema: Schema
    /// Statements to run, in order, in the dialect asked for.
    package var statements: [String]
    /// Whether the database must record ``schema`` (it was created or migrated).
    package var recordsSchema: Bool

    /// Whether opening writes nothing (the recorded schema is the one given, or none was given).
    package var changesNothing: Bool { statements.isEmpty && !recordsSchema }
}

/// Creates tables for a new database, reads the recorded schema of an existing one,
/// and applies additive migrations. Runs inside one write transaction, so a refused
/// migration leaves the database untouched.
///
/// The decisions (what may change, which DDL follows) are the same for every store: they are
/// planned from a ``SchemaCatalog`` and rendered in a ``SQLDialect``.
package struct StoreMigrator {
    /// Where the database is, for errors (a file path or a URL without its password).
    package let path: String?
    let dialect: SQLDialect

    package static let metaTable = "replica_meta"

    package init(path: String?, dialect: SQLDialect = .sqlite) {
        self.path = path
        self.dialect = dialect
    }

    func fail(_ message: String) -> StoreError {
        StoreError(.incompatibleSchema, message, path: path)
    }

    /// Decides what opening a database that recorded `recorded` with `schema` does.
    ///
    /// - Throws: ``StoreError`` (`missingSchema`, `incompatibleSchema`) before anything is written.
    package func plan(recorded: Schema?, given schema: Schema?, catalog: any SchemaCatalog) throws -> MigrationPlan {
        var plan = try schemaPlan(recorded: recorded, given: schema, catalog: catalog)
        // An outbox an earlier version made gains the columns it lacks.
        if try catalog.tableExists(OutboxTable.name) {
            plan.statements += OutboxTable.upgrades(columns: try catalog.columns(in: OutboxTable.name), dialect)
        }
        return plan
    }

    /// The part of ``plan(recorded:given:catalog:)`` that the schemas decide.
    private func schemaPlan(recorded: Schema?, given schema: Schema?, catalog: any SchemaCatalog) throws -> MigrationPlan {
        switch (recorded, schema) {
        case (nil, nil):
            throw StoreError(.missingSchema, "the database records no Replica schema; give one to create its tables", path: path)
        case (let recorded?, nil):
            return MigrationPlan(schema: recorded, statements: [], recordsSchema: false)
        case (nil, let schema?):
            return MigrationPlan(schema: schema, statements: try create(catalog, schema: schema), recordsSchema: true)
        case (let recorded?, let schema?):
            if recorded.fileJSON == schema.fileJSON { return MigrationPlan(schema: schema, statements: [], recordsSchema: false) }
            // What is done with unmapped keys, short of keeping them in a column, changes no table:
            // the new policy is recorded without a version.
            if recorded.storageJSON == schema.storageJSON { return MigrationPlan(schema: schema, statements: [], recordsSchema: true) }
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
            return MigrationPlan(schema: schema, statements: try migrate(catalog, from: recorded, to: schema),
                                 recordsSchema: true)
        }
    }

    func create(_ catalog: any SchemaCatalog, schema: Schema) throws -> [String] {
        var statements: [String] = []
        for entity in schema.entities {
            if try catalog.tableExists(entity.tableName) {
                throw fail("table '\(entity.tableName)' of entity '\(entity.name)' already exists in a database "
                           + "that records no Replica schema")
            }
            statements.append(SchemaDDL.createTable(entity, dialect: dialect))
            statements += SchemaDDL.indexes(of: entity).map { SchemaDDL.createIndex($0, on: entity) }
        }
        for join in schema.joinTables {
            if try catalog.tableExists(join.name) {
                throw fail("join table '\(join.name)' already exists in a database that records no Replica schema")
            }
            statements += SchemaDDL.createJoinTable(join, dialect: dialect)
        }
        return statements
    }

    /// The additive changes from `old` to `new`, or a refusal before anything is written.
    func migrate(_ catalog: any SchemaCatalog, from old: Schema, to new: Schema) throws -> [String] {
        var statements: [String] = []
        for entity in new.entities {
            guard let previous = old.entities.first(where: { $0.name == entity.name }) else {
                if try catalog.tableExists(entity.tableName) {
                    throw fail("new entity '\(entity.name)' uses table '\(entity.tableName)', which already exists")
                }
                statements.append(SchemaDDL.createTable(entity, dialect: dialect))
                statements += SchemaDDL.indexes(of: entity).map { SchemaDDL.createIndex($0, on: entity) }
                continue
            }
            statements += try changes(catalog, from: previous, to: entity)
        }
        let oldJoins = Dictionary(old.joinTables.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        for join in new.joinTables {
            guard let previous = oldJoins[join.name.lowercased()] else {
                if try catalog.tableExists(join.name) {
                    throw fail("new join table '\(join.name)' already exists as a table")
                }
                statements += SchemaDDL.createJoinTable(join, dialect: dialect)
                continue
            }
            let reversed = Array(previous.columns.reversed())
            guard previous.columns == join.columns && previous.entities == join.entities
                    || reversed == join.columns && Array(previous.entities.reversed()) == join.entities else {
                throw fail("join table '\(join.name)': its columns changed from \(previous.columns.joined(separator: ", ")) "
                           + "to \(join.columns.joined(separator: ", ")); Replica migrates additively and does not "
                           + "rename columns")
            }
        }
        // Entities and join tables dropped from the schema keep their tables: a migration never deletes data.
        return statements
    }

    func changes(_ catalog: any SchemaCatalog, from old: Entity, to new: Entity) throws -> [String] {
        let where_ = "entity '\(new.name)'"
        guard old.tableName == new.tableName else {
            throw fail("\(where_): table changed from '\(old.tableName)' to '\(new.tableName)'; "
                       + "Replica migrates additively and does not rename tables")
        }
        guard old.primaryKeyNames == new.primaryKeyNames else {
            func shown(_ names: [String]) -> String { names.count == 1 ? "'\(names[0])'" : "(\(names.joined(separator: ", ")))" }
            throw fail("\(where_): primary key changed from \(shown(old.primaryKeyNames)) to \(shown(new.primaryKeyNames)); "
                       + "a primary key cannot change")
        }
        var statements: [String] = []
        let existingColumns = Set(try catalog.columns(in: new.tableName).map { $0.lowercased() })
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
                statements.append(SchemaDDL.addColumn(attribute, to: new, dialect: dialect))
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
