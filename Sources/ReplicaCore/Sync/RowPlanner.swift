/// One row to upsert, already mapped: built on the parsing thread, written on the writer.
struct PlannedRow: Sendable {
    /// The entity, as an index into the schema mapping's maps.
    var entity: Int
    /// The values by attribute index; `nil` leaves the stored value untouched.
    var values: [AttributeValue?]
    /// `true` for objects of the response's own collection (they count as seen for stale-row deletion).
    var isTopLevel: Bool
    /// `true` for a link row: `entity` is then an index into ``SchemaMapping/links`` and `values`
    /// the parent's key followed by its children's keys, which replace the parent's links.
    var isLinks = false
}

/// A child object claimed by a parent through a one-to-many relationship, checked against the
/// other claims of the response: a child has one parent.
struct ChildClaim: Sendable {
    var child: Int
    var key: AttributeValue
    /// The parent's entity index and key, and the child's to-one relationship back to it.
    var parentEntity: Int
    var parent: AttributeValue
    var inverse: String
    var pointer: JSONPointer
}

/// Counters of one response.
struct PlanStatistics: Sendable {
    var objectCount = 0
    /// Keys that matched nothing, collections that matched no entity, keys given twice.
    var ignored = IgnoredKeyTally()
    /// Scratch space of the fast path: the keys of the object being decoded that it did not store.
    var found: [FastObjectDecoder.FoundKey] = []
    var skipped: [SkippedObject] = []
    /// The parents that claimed children through one-to-many relationships in this response
    /// (and, in a paged sync, the pages before it), by child entity and key, with where the
    /// first claim was.
    var claims: [ClaimKey: ChildClaimRecord] = [:]

    /// Occurrences of unknown keys and collections (``SyncResult/ignoredKeyCount``).
    var ignoredKeyCount: Int { ignored.ignoredCount }
}

/// Where a child was first claimed: the parent's key, the pointer, and the response (a page's
/// request or a file) that held it.
package struct ChildClaimRecord: Sendable {
    var parent: AttributeValue
    var pointer: JSONPointer
    var source: String
}

/// A child's entity index and key, for ``PlanStatistics/claims``.
package struct ClaimKey: Hashable, Sendable {
    var entity: Int
    var key: AttributeValue
}

/// A key of an object being planned that will not be stored.
struct Unstored {
    var entity: Int
    var kind: IgnoredKey.Kind
    var key: String
    var pointer: JSONPointer
}

/// Turns JSON objects into planned rows: maps them with the property maps, fills the scope,
/// and unfolds nested to-one objects (written before their parent) and to-many arrays
/// (written after it, with the foreign key to it). Mapping errors surface here, before
/// anything of the object is written, so that skipping an object is all or nothing.
package struct RowPlanner: Sendable {
    let mapping: SchemaMapping
    let entityIndexes: [String: Int]

    init(mapping: SchemaMapping) {
        self.mapping = mapping
        var indexes: [String: Int] = [:]
        for (index, map) in mapping.maps.enumerated() {
            indexes[map.entity.name] = index
            if indexes[map.entity.tableName] == nil { indexes[map.entity.tableName] = index }
        }
        self.entityIndexes = indexes
    }

    /// The index of the entity named `name` (entity or table name).
    func index(of name: String) -> Int? { entityIndexes[name] }

    /// Plans one top-level object of `entity`, honouring the skip policy. `locate` turns a
    /// pointer into `value` into a place in the response, when `value` is not the response's
    /// own object (a JSON:API resource flattened); errors and ignored keys name that place.
    func planTopLevel(_ value: JSONValue, entity: Int, at pointer: JSONPointer, scope: RouteScope?,
                      policy: InvalidObjectPolicy, sharedChildren: SharedChildPolicy = .fail, source: String = "",
                      locate: ((JSONPointer) -> JSONPointer)? = nil,
                      into rows: inout [PlannedRow], statistics: inout PlanStatistics) throws {
        var planned: [PlannedRow] = []
        var objects = 0
        var ignored: [Unstored] = []
        var claims: [ChildClaim] = []
        do {
            try plan(value, entity: entity, at: pointer, scope: scope, overrides: [], isTopLevel: true,
                     into: &planned, objects: &objects, ignored: &ignored, claims: &claims)
        } catch var error as MappingError {
            if let locate, let at = error.pointer { error.pointer = locate(at) }
            statistics.objectCount += 1
            switch policy {
            case .fail:
                throw SyncError(.invalidObject, error.description, underlying: error)
            case .skip:
                statistics.skipped.append(SkippedObject(entity: mapping.maps[entity].entity.name, pointer: pointer,
                                                        reason: error.description,
                                                        key: mapping.maps[entity].primaryKey(ofInvalid: value, scope: scope)))
                return
            }
        }
        for claim in claims {
            try check(claim, policy: sharedChildren, source: source, statistics: &statistics)
        }
        statistics.objectCount += objects
        for key in ignored {
            statistics.ignored.record(entity: key.entity, kind: key.kind, key: key.key, at: locate?(key.pointer) ?? key.pointer)
        }
        rows.append(contentsOf: planned)
    }

    /// Records a one-to-many claim; a child a different parent claimed earlier in the response
    /// (or an earlier page of the sync) is an error naming both (or, under
    /// ``SharedChildPolicy/lastParentWins``, counted as a ``IgnoredKey/Kind/sharedChild``: the
    /// last parent's claim is what is stored).
    private func check(_ claim: ChildClaim, policy: SharedChildPolicy, source: String,
                       statistics: inout PlanStatistics) throws {
        let key = ClaimKey(entity: claim.child, key: claim.key)
        let record = ChildClaimRecord(parent: claim.parent, pointer: claim.pointer, source: source)
        guard let first = statistics.claims[key] else {
            statistics.claims[key] = record
            return
        }
        guard first.parent != claim.parent else { return }
        let child = mapping.maps[claim.child].entity.name
        let parent = mapping.maps[claim.parentEntity].entity.name
        switch policy {
        case .fail:
            // A claim of an earlier page names that page.
            let firstPlace = first.source == source || first.source.isEmpty ? "\(first.pointer)" : "\(first.pointer) of \(first.source)"
            throw SyncError(.invalidObject, "\(child) \(claim.key) at \(claim.pointer) is claimed by two \(parent) objects, "
                            + "\(first.parent) (first at \(firstPlace)) and \(claim.parent): a \(child) has one \(parent) "
                            + "through '\(claim.inverse)', so the second would take it from the first. A \(child) shared by "
                            + "many parents is a many-to-many relationship: give it \"through\": \"<join table>\" instead of "
                            + "\"inverse\" (or sync with sharedChildren: .lastParentWins to let the last parent keep it)")
        case .lastParentWins:
            statistics.claims[key] = record
            statistics.ignored.record(entity: claim.child, kind: .sharedChild, key: claim.inverse, at: claim.pointer)
        }
    }

    /// Plans one object and what it nests; returns its key.
    @discardableResult
    private func plan(_ value: JSONValue, entity: Int, at pointer: JSONPointer, scope: RouteScope?,
                      overrides: [(Int, AttributeValue)], isTopLevel: Bool, into rows: inout [PlannedRow],
                      objects: inout Int, ignored: inout [Unstored], claims: inout [ChildClaim]) throws -> AttributeValue {
        let map = mapping.maps[entity]
        var mapped = try map.map(value: value, at: pointer)
        objects += 1
        for key in mapped.unknownKeys {
            ignored.append(Unstored(entity: entity, kind: .unknownKey, key: key,
                                    pointer: key.split(separator: ".").reduce(pointer) { $0 / String($1) }))
        }
        if case .object(let object) = value {
            for key in object.duplicateKeys {
                ignored.append(Unstored(entity: entity, kind: .duplicateKey, key: key, pointer: pointer / key))
            }
        }
        for (index, forced) in overrides { mapped.values[index] = forced }
        if let scope {
            for condition in scope.conditions {
                if let index = map.index(ofAttribute: condition.attribute), mapped.values[index] == nil {
                    mapped.values[index] = condition.value
                }
            }
        }
        let key = try map.primaryKey(of: mapped, at: pointer)
        // Nested to-one objects first, so the parent's foreign key points at a stored row.
        for (position, relationship) in map.relationships.enumerated() where relationship.kind == .toOne {
            guard case .object(let object, let nestedPointer)? = mapped.relationships[position],
                  let destination = entityIndexes[relationship.destination] else { continue }
            try plan(.object(object), entity: destination, at: nestedPointer, scope: nil, overrides: [],
                     isTopLevel: false, into: &rows, objects: &objects, ignored: &ignored, claims: &claims)
        }
        rows.append(PlannedRow(entity: entity, values: mapped.values, isTopLevel: isTopLevel))
        // Many-to-many: the children (objects upserted, bare keys only linked), then the link row
        // replacing the parent's links. `null` unlinks every child; an absent key leaves the links.
        for position in map.relationships.indices {
            guard let link = mapping.linkIndex(entity: entity, relationship: position),
                  let value = mapped.relationships[position] else { continue }
            let destination = mapping.links[link].child
            var children: [AttributeValue?] = [key]
            if case .array(let items, let arrayPointer) = value {
                children.reserveCapacity(items.count + 1)
                for (offset, item) in items.enumerated() {
                    if case .object = item {
                        children.append(try plan(item, entity: destination, at: arrayPointer / offset, scope: nil, overrides: [],
                                                 isTopLevel: false, into: &rows, objects: &objects, ignored: &ignored,
                                                 claims: &claims))
                    } else {
                        children.append(try mapping.maps[destination].convertKey(item, at: arrayPointer / offset))
                    }
                }
            }
            rows.append(PlannedRow(entity: link, values: children, isTopLevel: false, isLinks: true))
        }
        // Nested one-to-many children after the parent, each pointing back at it.
        for (position, relationship) in map.relationships.enumerated() where relationship.kind == .toMany {
            guard case .array(let items, let arrayPointer)? = mapped.relationships[position],
                  let destination = entityIndexes[relationship.destination],
                  let inverseName = map.entity.relationship(named: relationship.name)?.inverse,
                  let foreignKey = mapping.maps[destination].entity.relationship(named: inverseName)?.foreignKey,
                  let foreignKeyIndex = mapping.maps[destination].index(ofAttribute: foreignKey)
            else { continue }
            for (offset, item) in items.enumerated() {
                // Bare ids in a to-many array name children without describing them: nothing to store.
                guard case .object = item else { continue }
                let child = try plan(item, entity: destination, at: arrayPointer / offset, scope: nil,
                                     overrides: [(foreignKeyIndex, key)], isTopLevel: false,
                                     into: &rows, objects: &objects, ignored: &ignored, claims: &claims)
                claims.append(ChildClaim(child: destination, key: child, parentEntity: entity, parent: key, inverse: inverseName,
                                         pointer: arrayPointer / offset))
            }
        }
        return key
    }
}

extension PlanStatistics {
    /// The keys of skipped objects that had one, by entity index: they still count as seen,
    /// so stale-row deletion keeps their rows.
    func skippedKeys(planner: RowPlanner) -> [Int: PrimaryKeys] {
        var keys: [Int: PrimaryKeys] = [:]
        for object in skipped {
            guard let key = object.key, let entity = planner.index(of: object.entity) else { continue }
            keys[entity, default: PrimaryKeys()].append(key)
        }
        return keys
    }
}
