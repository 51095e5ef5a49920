/// The databases a replica keeps its tables in, for the limits a schema must fit.
///
/// ```swift
/// try schema.checkOpening(in: .postgres)
/// ```
public enum DatabaseKind: String, Sendable, CaseIterable, CustomStringConvertible {
    case sqlite
    case postgres

    /// `SQLite`, `PostgreSQL`.
    public var description: String {
        switch self {
        case .sqlite: "SQLite"
        case .postgres: "PostgreSQL"
        }
    }

    /// The most columns a table may have (SQLite's `SQLITE_MAX_COLUMN` as built by default,
    /// PostgreSQL's `MaxHeapAttributeNumber`).
    public var maximumColumns: Int {
        switch self {
        case .sqlite: 2000
        case .postgres: 1600
        }
    }

    /// The longest name of a table, column or index, in UTF-8 bytes (PostgreSQL cuts longer
    /// ones to 63 bytes, so two long names could become one); `nil` for no limit.
    public var maximumNameBytes: Int? {
        switch self {
        case .sqlite: nil
        case .postgres: 63
        }
    }

    /// Column names the database keeps for itself (PostgreSQL's system columns).
    public var reservedColumnNames: Set<String> {
        switch self {
        case .sqlite: []
        case .postgres: ["tableoid", "xmin", "cmin", "xmax", "cmax", "ctid"]
        }
    }
}

extension Schema {
    /// Every check that opening a store with this schema makes before it creates or migrates a
    /// table: the property maps (two attributes, or a key path and an attribute, on one JSON
    /// key; transforms that exist and fit their attribute's type) and the database's limits
    /// (columns per table, name lengths, reserved column names). Loading the schema has checked
    /// the rest (names, keys, relationships, routes and the scopes of those that delete).
    ///
    /// Stores run it before they write anything, so a schema that would fail at the first sync
    /// is never recorded in a database; `replica schema check` runs it for both databases.
    ///
    /// ```swift
    /// var transforms = TransformRegistry()
    /// transforms.register("upper") { .string($0.stringValue?.uppercased() ?? "") }
    /// try schema.checkOpening(in: .sqlite, transforms: transforms)
    /// ```
    ///
    /// - Parameters:
    ///   - database: The database the tables go into.
    ///   - transforms: The custom transforms attributes may name; `nil` accepts any name that is
    ///     not a built-in transform (what a ``Store`` checks: the replica that uses it registers them).
    /// - Throws: ``SchemaError`` naming the entity or attribute by its pointer.
    public func checkOpening(in database: DatabaseKind, transforms: TransformRegistry? = TransformRegistry()) throws(SchemaError) {
        var registry = transforms ?? TransformRegistry()
        registry.acceptsUnregisteredNames = transforms == nil
        for entity in entities {
            let pointer = JSONPointer.root / "entities" / entity.name
            do {
                _ = try PropertyMap(entity: entity, in: self, transforms: registry)
            } catch let error as MappingError {
                let at = error.attribute.map { name in
                    pointer / (entity.relationship(named: name) != nil && entity.attribute(named: name) == nil
                               ? "relationships" : "attributes") / name
                } ?? pointer
                throw SchemaError(.invalidMapping, error.message, pointer: at)
            } catch {
                throw SchemaError(.invalidMapping, "\(error)", pointer: pointer)
            }
            try checkLimits(of: entity, in: database, at: pointer)
            for relationship in entity.relationships {
                guard let join = joinTable(for: relationship, of: entity) else { continue }
                try checkLimits(of: join, in: database, at: pointer / "relationships" / relationship.name)
            }
        }
    }

    private func checkLimits(of join: JoinTable, in database: DatabaseKind, at pointer: JSONPointer) throws(SchemaError) {
        for (offset, column) in join.columns.enumerated() where database.reservedColumnNames.contains(column.lowercased()) {
            throw SchemaError(.invalidValue, "column '\(column)' of join table '\(join.name)' has the name of a \(database) "
                              + "system column; name the columns with \"throughKeys\"", pointer: pointer / "throughKeys" / offset)
        }
        guard let limit = database.maximumNameBytes else { return }
        let names = [(join.name, "join table name", pointer / "through"),
                     (SchemaDDL.joinIndexName(join), "join table index name", pointer / "through")]
            + join.columns.enumerated().map { ($1, "join table column", pointer / "throughKeys" / $0) }
        for (name, what, at) in names where name.utf8.count > limit {
            throw SchemaError(.invalidValue, "\(what) '\(name)' is \(name.utf8.count) bytes long; \(database) names hold at "
                              + "most \(limit) bytes", pointer: at)
        }
    }

    private func checkLimits(of entity: Entity, in database: DatabaseKind, at pointer: JSONPointer) throws(SchemaError) {
        if entity.attributes.count > database.maximumColumns {
            throw SchemaError(.invalidValue, "entity '\(entity.name)' has \(entity.attributes.count) attributes; a \(database) "
                              + "table holds at most \(database.maximumColumns) columns", pointer: pointer / "attributes")
        }
        for attribute in entity.attributes where database.reservedColumnNames.contains(attribute.name.lowercased()) {
            throw SchemaError(.invalidValue, "attribute '\(attribute.name)' of entity '\(entity.name)' has the name of a "
                              + "\(database) system column; rename it (its JSON key can stay: \"jsonKey\")",
                              pointer: pointer / "attributes" / attribute.name)
        }
        guard let limit = database.maximumNameBytes else { return }
        func checkLength(_ name: String, _ what: String, at pointer: JSONPointer) throws(SchemaError) {
            guard name.utf8.count > limit else { return }
            throw SchemaError(.invalidValue, "\(what) '\(name)' is \(name.utf8.count) bytes long; \(database) names hold at "
                              + "most \(limit) bytes", pointer: pointer)
        }
        try checkLength(entity.tableName, "table name", at: pointer / "table")
        for attribute in entity.attributes {
            try checkLength(attribute.name, "attribute name", at: pointer / "attributes" / attribute.name)
        }
        for index in SchemaDDL.indexes(of: entity) {
            // A declared index, or the one made for a to-one relationship's foreign key.
            let at = entity.indexes.firstIndex(of: index).map { pointer / "indexes" / $0 } ?? pointer / "relationships"
            try checkLength(index.sqlName(table: entity.tableName), "index name", at: at)
        }
    }
}
