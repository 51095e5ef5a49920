/// Checks a schema for consistency and reports the first problem with its pointer
/// in the schema-file format (`/entities/User/attributes/name`).
struct SchemaValidator {
    /// The file the schema came from, for error messages.
    let file: String?

    /// Attribute types that can be primary keys.
    static let keyTypes: Set<AttributeType> = [.integer, .string]
    /// Route targets reserved by RSAPI's route modes.
    static let reservedEntityNames: Set<String> = ["DATA", "MANY"]

    func fail(_ code: SchemaError.Code, _ message: String, at pointer: JSONPointer) -> SchemaError {
        SchemaError(code, message, file: file, pointer: pointer)
    }

    /// Names become SQL identifiers and CLI output: no control characters (NUL included).
    func checkName(_ name: String, _ what: String, at pointer: JSONPointer) throws {
        if let bad = name.unicodeScalars.first(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            let code = String(bad.value, radix: 16, uppercase: true)
            throw fail(.invalidValue, "\(what) \(name.debugDescription) holds the control character U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code)",
                       at: pointer)
        }
    }

    func validate(_ schema: inout Schema) throws {
        guard !schema.name.isEmpty else { throw fail(.invalidValue, "schema name is empty", at: .root / "name") }
        guard schema.version >= 1 else {
            throw fail(.invalidValue, "version must be 1 or more, not \(schema.version)", at: .root / "version")
        }
        // A schema validated before carries the columns of kept keys; they are made again below.
        for index in schema.entities.indices { schema.entities[index].attributes.removeAll(where: \.isUnmappedColumn) }
        var entityNames: [String: String] = [:]
        var tableNames: [String: String] = [:]
        for entity in schema.entities {
            let pointer = JSONPointer.root / "entities" / entity.name
            guard !entity.name.isEmpty else { throw fail(.invalidValue, "entity name is empty", at: pointer) }
            try checkName(entity.name, "entity name", at: pointer)
            try checkName(entity.tableName, "table name", at: pointer / "table")
            for (offset, part) in entity.primaryKeyNames.enumerated() {
                try checkName(part, "primary key", at: entity.hasCompositeKey ? pointer / "primaryKey" / offset : pointer / "primaryKey")
            }
            if Self.reservedEntityNames.contains(entity.name) {
                throw fail(.invalidValue, "entity name '\(entity.name)' is reserved for route targets", at: pointer)
            }
            if let other = entityNames[entity.name.lowercased()] {
                throw fail(.duplicateName, "entity '\(entity.name)' is defined twice (also '\(other)')", at: pointer)
            }
            entityNames[entity.name.lowercased()] = entity.name
            let table = try checkTableName(entity.tableName, "table name", at: pointer / "table")
            if let other = tableNames[table] {
                throw fail(.duplicateTable, "entities '\(other)' and '\(entity.name)' both use table '\(entity.tableName)'",
                           at: pointer / "table")
            }
            tableNames[table] = entity.name
            try validateAttributes(of: entity, at: pointer)
        }
        for entity in schema.entities {
            try validateRelationships(of: entity, in: schema, at: JSONPointer.root / "entities" / entity.name)
            try validateIndexes(of: entity, at: JSONPointer.root / "entities" / entity.name / "indexes")
        }
        try validateJoinTables(of: schema, entityTables: tableNames)
        try validateRoutes(of: schema)
        try validateUnmappedKeys(of: schema)
        schema.synthesizeUnmappedColumns()
    }

    /// `ignoreKeys` patterns are not empty; the column of kept keys is a valid name that no
    /// attribute has already.
    private func validateUnmappedKeys(of schema: Schema) throws {
        for (offset, pattern) in schema.ignoreKeys.enumerated() where pattern.isEmpty {
            throw fail(.invalidValue, "an empty ignoreKeys pattern matches no key", at: .root / "ignoreKeys" / offset)
        }
        for entity in schema.entities {
            let pointer = JSONPointer.root / "entities" / entity.name
            for (offset, pattern) in entity.ignoreKeys.enumerated() where pattern.isEmpty {
                throw fail(.invalidValue, "an empty ignoreKeys pattern matches no key", at: pointer / "ignoreKeys" / offset)
            }
            if let version = entity.versionAttribute {
                guard let attribute = entity.attribute(named: version) else {
                    throw fail(.invalidValue, "versionAttribute '\(version)' names no attribute of entity '\(entity.name)'",
                               at: pointer / "versionAttribute")
                }
                guard !entity.primaryKeyNames.contains(version), attribute.type == .integer || attribute.type == .string else {
                    throw fail(.invalidValue, "versionAttribute '\(version)' of entity '\(entity.name)' must be an integer or string "
                               + "attribute outside the primary key, not \(entity.primaryKeyNames.contains(version) ? "a key" : attribute.type.rawValue)",
                               at: pointer / "versionAttribute")
                }
            }
            if let column = entity.unmappedColumn {
                guard !column.isEmpty else { throw fail(.invalidValue, "unmappedColumn is empty", at: pointer / "unmappedColumn") }
                try checkName(column, "unmappedColumn", at: pointer / "unmappedColumn")
            }
            guard schema.unmappedKeyPolicy(of: entity) == .keep else { continue }
            let column = entity.unmappedColumnName
            if let clash = entity.attributes.first(where: { $0.name.lowercased() == column.lowercased() }) {
                let at = entity.unmappedColumn != nil ? pointer / "unmappedColumn"
                    : entity.unmappedKeys != nil ? pointer / "unmappedKeys" : JSONPointer.root / "unmappedKeys"
                throw fail(.duplicateName, "entity '\(entity.name)' keeps its unmapped keys in column '\(column)', which is "
                           + "also its attribute '\(clash.name)'; name another column with \"unmappedColumn\"", at: at)
            }
        }
    }

    private func validateRoutes(of schema: Schema) throws {
        for (index, route) in schema.routes.enumerated() {
            let pointer = JSONPointer.root / "routes" / index
            guard route.path.hasPrefix("/") else {
                throw fail(.invalidRoute, "route path '\(route.path)' must start with '/'", at: pointer / "path")
            }
            do {
                _ = try RoutePattern(route.path)
            } catch {
                throw fail(.invalidRoute, error.message, at: pointer / "path")
            }
            if case .entity(let name) = route.target, schema.entity(named: name) == nil {
                throw fail(.unknownEntity, "route \(route.method) \(route.path) targets unknown entity '\(name)'",
                           at: pointer / "target")
            }
            try validateStaleScope(of: route, in: schema, at: pointer)
            if route.incremental != nil {
                guard route.method == .get, case .entity = route.target, !route.singleton else {
                    throw fail(.invalidRoute, "route \(route.method) \(route.path) syncs incrementally, which needs a GET route "
                               + "of an entity's collection (not \(route.singleton ? "a singleton" : "\(route.method) \(route.target)"))",
                               at: pointer / "incremental")
                }
            }
            if let pagination = route.pagination {
                guard route.method == .get, case .entity(let name) = route.target, !route.singleton else {
                    throw fail(.invalidRoute, "route \(route.method) \(route.path) pages, which needs a GET route of an entity's "
                               + "collection (not \(route.singleton ? "a singleton" : "\(route.method) \(route.target)"))",
                               at: pointer / "pagination")
                }
                if case .afterLastKey(let parameter, _) = pagination, let entity = schema.entity(named: name), entity.hasCompositeKey {
                    throw fail(.invalidRoute, "route \(route.method) \(route.path) sends the last object's key as ?\(parameter)=, but "
                               + "\(entity.name) has a composite key (\(entity.primaryKeyNames.joined(separator: ", "))): "
                               + "use another pagination style", at: pointer / "pagination")
                }
            }
            if let discriminator = route.discriminator {
                try validate(discriminator, of: route, in: schema, at: pointer / "discriminator")
            }
            if route.push != nil, route.method != .get {
                throw fail(.invalidRoute, "route \(route.method) \(route.path) cannot be kept live by push: only GET routes are synced",
                           at: pointer / "push")
            }
            if route.singleton {
                guard case .entity = route.target else {
                    throw fail(.invalidRoute, "singleton route \(route.method) \(route.path) must target an entity, not \(route.target)",
                               at: pointer / "singleton")
                }
                guard route.stalePolicy == .keep else {
                    throw fail(.invalidRoute, "singleton route \(route.method) \(route.path) names one object and cannot delete stale rows",
                               at: pointer / "stale")
                }
            }
        }
        do {
            _ = try RouteTable(schema: schema)
        } catch {
            // Point at the later of the two conflicting routes.
            let culprit = schema.routes.indices.last { index in
                let text = (try? RoutePattern(schema.routes[index].path).description) ?? schema.routes[index].path
                return text == error.otherPattern || text == error.pattern
            }
            let pointer = culprit.map { JSONPointer.root / "routes" / $0 / "path" } ?? JSONPointer.root / "routes"
            throw fail(.invalidRoute, error.message, at: pointer)
        }
    }

    /// A route that deletes stale rows deletes them inside its scope: every path variable must
    /// name an attribute of its entity (or the route must name one object). A variable that
    /// names nothing would widen the deletion to rows of every value it can take.
    /// A discriminator names known entities, the route's target among them, on a GET route of an entity.
    private func validate(_ discriminator: Discriminator, of route: Route, in schema: Schema, at pointer: JSONPointer) throws {
        guard route.method == .get, case .entity(let target) = route.target else {
            throw fail(.invalidRoute, "route \(route.method) \(route.path) routes objects by '\(discriminator.key)', which needs "
                       + "a GET route whose target is an entity (the one its collection holds), not \(route.method) \(route.target)",
                       at: pointer)
        }
        guard !discriminator.key.isEmpty else { throw fail(.invalidValue, "the discriminator key is empty", at: pointer / "key") }
        guard !discriminator.entities.isEmpty else {
            throw fail(.invalidValue, "the discriminator names no entity", at: pointer / "entities")
        }
        for (type, name) in discriminator.entities.sorted(by: { $0.key < $1.key }) where schema.entity(named: name) == nil {
            throw fail(.unknownEntity, "route \(route.method) \(route.path) routes type '\(type)' to unknown entity '\(name)'",
                       at: pointer / "entities" / type)
        }
        guard discriminator.entities.values.contains(target) else {
            throw fail(.invalidRoute, "route \(route.method) \(route.path) targets \(target), but its discriminator routes no type "
                       + "to \(target) (\(discriminator.summary)): name the type of its collection's objects", at: pointer / "entities")
        }
        if let included = discriminator.included, included.components.isEmpty {
            throw fail(.invalidValue, "the included objects' pointer names the whole response", at: pointer / "included")
        }
    }

    private func validateStaleScope(of route: Route, in schema: Schema, at pointer: JSONPointer) throws {
        guard route.stalePolicy == .delete, !route.singleton, case .entity(let name) = route.target,
              let entity = schema.entity(named: name), let pattern = try? RoutePattern(route.path) else { return }
        let unscoped = RouteTable.unscopedVariables(of: pattern, in: entity, convention: schema.keyConvention)
        guard !unscoped.isEmpty else { return }
        throw fail(.invalidRoute, RouteTable.unscopedMessage(route: "route \(route.method) \(route.path)", entity: entity,
                                                             variables: unscoped)
                   + #"; or give the route "stale": "keep""#, at: pointer / "stale")
    }

    private func validateAttributes(of entity: Entity, at pointer: JSONPointer) throws {
        var seen: Set<String> = []
        for attribute in entity.attributes {
            let attributePointer = pointer / "attributes" / attribute.name
            guard !attribute.name.isEmpty else { throw fail(.invalidValue, "attribute name is empty", at: attributePointer) }
            try checkName(attribute.name, "attribute name", at: attributePointer)
            guard seen.insert(attribute.name.lowercased()).inserted else {
                throw fail(.duplicateName, "attribute '\(attribute.name)' of entity '\(entity.name)' is defined twice "
                           + "(column names are case-insensitive)", at: attributePointer)
            }
            if let value = attribute.defaultValue {
                if value.isNull {
                    if !attribute.isNullable {
                        throw fail(.invalidValue, "default of non-null attribute '\(attribute.name)' is null",
                                   at: attributePointer / "default")
                    }
                } else if value.type != attribute.type {
                    throw fail(.invalidValue, "default of attribute '\(attribute.name)' is a \(value.type?.rawValue ?? "null"), "
                               + "not a \(attribute.type)", at: attributePointer / "default")
                }
            }
        }
        guard !entity.primaryKeyNames.isEmpty else {
            throw fail(.invalidPrimaryKey, "entity '\(entity.name)' has no primary key", at: pointer / "primaryKey")
        }
        let composite = entity.hasCompositeKey
        if composite, entity.jsonIDKey != "id" {
            throw fail(.invalidPrimaryKey, "jsonIdKey does not apply to the composite primary key of entity '\(entity.name)': "
                       + "each part maps as its attribute does (its jsonKey, the key convention, or the route's scope)",
                       at: pointer / "jsonIdKey")
        }
        var parts: Set<String> = []
        for (offset, name) in entity.primaryKeyNames.enumerated() {
            let at = composite ? pointer / "primaryKey" / offset : pointer / "primaryKey"
            guard parts.insert(name).inserted else {
                throw fail(.invalidPrimaryKey, "primary key of entity '\(entity.name)' names attribute '\(name)' twice", at: at)
            }
            guard let key = entity.attribute(named: name) else {
                throw fail(.invalidPrimaryKey, "primary key '\(name)' of entity '\(entity.name)' is not one of its attributes", at: at)
            }
            guard Self.keyTypes.contains(key.type) else {
                throw fail(.invalidPrimaryKey, "primary key '\(key.name)' of entity '\(entity.name)' is a \(key.type); "
                           + "keys are integer or string", at: pointer / "attributes" / key.name / "type")
            }
            guard !key.isNullable else {
                throw fail(.invalidPrimaryKey, "primary key '\(key.name)' of entity '\(entity.name)' cannot be nullable",
                           at: pointer / "attributes" / key.name / "nullable")
            }
        }
    }

    private func validateRelationships(of entity: Entity, in schema: Schema, at pointer: JSONPointer) throws {
        var seen = Set(entity.attributes.map { $0.name.lowercased() })
        for relationship in entity.relationships {
            let relPointer = pointer / "relationships" / relationship.name
            try checkName(relationship.name, "relationship name", at: relPointer)
            if let foreignKey = relationship.foreignKey { try checkName(foreignKey, "foreign key", at: relPointer / "foreignKey") }
            guard seen.insert(relationship.name.lowercased()).inserted else {
                throw fail(.duplicateName, "relationship '\(relationship.name)' of entity '\(entity.name)' has the name of "
                           + "another attribute or relationship", at: relPointer)
            }
            guard let destination = schema.entities.first(where: { $0.name == relationship.destination }) else {
                throw fail(.unknownEntity, "relationship '\(relationship.name)' of entity '\(entity.name)' points to "
                           + "missing entity '\(relationship.destination)'", at: relPointer / relationship.kind.rawValue)
            }
            // A foreign key or a join-table column holds one key value: it cannot point at a row
            // identified by several.
            if destination.hasCompositeKey, relationship.kind == .toOne || relationship.through != nil {
                let what = relationship.kind == .toOne ? "a foreign key" : "a join table"
                throw fail(.invalidRelationship, "relationship '\(relationship.name)' of entity '\(entity.name)' points to "
                           + "'\(destination.name)', whose primary key is composite (\(destination.primaryKeyNames.joined(separator: ", "))): "
                           + "\(what) holds a single-column key", at: relPointer / relationship.kind.rawValue)
            }
            if entity.hasCompositeKey, relationship.kind == .toMany {
                let what = relationship.through != nil ? "its join table" : "the foreign key of its inverse"
                throw fail(.invalidRelationship, "to-many relationship '\(relationship.name)' of entity '\(entity.name)' "
                           + "cannot hold keys of '\(entity.name)' in \(what): its primary key is composite "
                           + "(\(entity.primaryKeyNames.joined(separator: ", "))), and relationships hold single-column keys only",
                           at: relPointer / (relationship.through != nil ? "through" : "inverse"))
            }
            switch relationship.kind {
            case .toOne:
                guard let foreignKey = relationship.foreignKey, let attribute = entity.attribute(named: foreignKey) else {
                    throw fail(.unknownAttribute, "foreign key '\(relationship.foreignKey ?? "")' of relationship "
                               + "'\(relationship.name)' is not an attribute of entity '\(entity.name)'",
                               at: relPointer / "foreignKey")
                }
                let keyType = destination.primaryKeyAttribute.type
                guard attribute.type == keyType else {
                    throw fail(.invalidRelationship, "foreign key '\(foreignKey)' of entity '\(entity.name)' has type "
                               + "\(attribute.type) but the primary key of '\(destination.name)' has type \(keyType)",
                               at: relPointer / "foreignKey")
                }
            case .toMany where relationship.through != nil:
                // Checked with every other declaration of its table, in validateJoinTables.
                break
            case .toMany:
                guard let inverseName = relationship.inverse,
                      let inverse = destination.relationship(named: inverseName)
                else {
                    throw fail(.invalidRelationship, "inverse '\(relationship.inverse ?? "")' of relationship "
                               + "'\(relationship.name)' is not a relationship of entity '\(destination.name)'",
                               at: relPointer / "inverse")
                }
                guard inverse.kind == .toOne, inverse.destination == entity.name else {
                    throw fail(.invalidRelationship, "inverse '\(inverseName)' of relationship '\(relationship.name)' must be "
                               + "a to-one relationship of '\(destination.name)' pointing to '\(entity.name)'",
                               at: relPointer / "inverse")
                }
            }
        }
    }

    /// The table name `name` lowercased (how tables collide), refused when empty or when it takes
    /// a prefix the store keeps for itself; `what` names it in the error.
    private func checkTableName(_ name: String, _ what: String, at pointer: JSONPointer) throws -> String {
        let table = name.lowercased()
        guard !table.isEmpty else { throw fail(.invalidValue, "\(what) is empty", at: pointer) }
        if table.hasPrefix("sqlite_") || table.hasPrefix("replica_") {
            throw fail(.invalidValue, "\(what) '\(name)' is reserved (sqlite_ and replica_ prefixes)", at: pointer)
        }
        return table
    }

    /// Join tables: named like no entity's table, two distinct key columns of key types, and a
    /// table declared by several relationships (both sides of one link, say) always joining the
    /// same two entities through the same columns.
    private func validateJoinTables(of schema: Schema, entityTables: [String: String]) throws {
        var declared: [String: (join: JoinTable, pointer: JSONPointer)] = [:]
        for entity in schema.entities {
            for relationship in entity.relationships {
                guard let join = schema.joinTable(for: relationship, of: entity) else { continue }
                let pointer = JSONPointer.root / "entities" / entity.name / "relationships" / relationship.name
                try checkName(join.name, "join table name", at: pointer / "through")
                let table = try checkTableName(join.name, "join table name", at: pointer / "through")
                if let owner = entityTables[table] {
                    throw fail(.duplicateTable, "join table '\(join.name)' of relationship '\(entity.name).\(relationship.name)' "
                               + "is the table of entity '\(owner)'", at: pointer / "through")
                }
                for (offset, column) in join.columns.enumerated() {
                    guard !column.isEmpty else {
                        throw fail(.invalidValue, "join table column name is empty", at: pointer / "throughKeys" / offset)
                    }
                    try checkName(column, "join table column", at: pointer / "throughKeys" / offset)
                }
                if join.columns[0].lowercased() == join.columns[1].lowercased() {
                    let at = relationship.throughKeys == nil ? pointer / "through" : pointer / "throughKeys"
                    throw fail(.duplicateName, "join table '\(join.name)' would have two columns named '\(join.columns[0])' "
                               + "(\(entity.name) links \(relationship.destination)); name them with \"throughKeys\": "
                               + "[\"\(Schema.joinColumn(for: relationship.name))\", \"\(join.columns[1])\"] or similar", at: at)
                }
                guard let (first, firstPointer) = declared[table] else {
                    declared[table] = (join, pointer)
                    continue
                }
                // The same table from the other side lists the same pairs in the other order.
                let mirrored = JoinTable(name: join.name, entities: join.entities.reversed(), columns: join.columns.reversed(),
                                         types: join.types.reversed())
                guard first.columns == join.columns && first.entities == join.entities
                        || first.columns == mirrored.columns && first.entities == mirrored.entities
                else {
                    throw fail(.invalidRelationship, "join table '\(join.name)' is declared by \(firstPointer) as "
                               + "\(first.entities[0]).\(first.columns[0]) ↔ \(first.entities[1]).\(first.columns[1]) but here as "
                               + "\(join.entities[0]).\(join.columns[0]) ↔ \(join.entities[1]).\(join.columns[1])",
                               at: pointer / "through")
                }
            }
        }
    }

    private func validateIndexes(of entity: Entity, at pointer: JSONPointer) throws {
        var names: Set<String> = []
        for (position, index) in entity.indexes.enumerated() {
            guard !index.attributes.isEmpty else {
                throw fail(.invalidValue, "index of entity '\(entity.name)' names no attribute", at: pointer / position / "attributes")
            }
            for (i, name) in index.attributes.enumerated() where entity.attribute(named: name) == nil {
                throw fail(.unknownAttribute, "index of entity '\(entity.name)' names unknown attribute '\(name)'",
                           at: pointer / position / "attributes" / i)
            }
            guard names.insert(index.sqlName(table: entity.tableName).lowercased()).inserted else {
                throw fail(.duplicateName, "index '\(index.sqlName(table: entity.tableName))' is defined twice",
                           at: pointer / position)
            }
        }
    }
}
