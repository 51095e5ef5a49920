/// The property maps of every entity of a schema, built once and shared.
///
/// ```swift
/// let mapping = try SchemaMapping(schema: schema, transforms: transforms)
/// let users = try mapping.requireMap("User")
/// let (payload, pointer) = try mapping.envelope(for: route).unwrap(response)
/// ```
public struct SchemaMapping: Sendable {
    /// The schema mapped.
    public let schema: Schema
    /// The custom transforms the maps were built with.
    public let transforms: TransformRegistry
    /// The maps, in the schema's entity order.
    public let maps: [PropertyMap]
    private let indexByName: [String: Int]
    /// The many-to-many relationships, one per relationship with `through`: what a link row of
    /// a ``RowBatch`` refers to by index.
    package let links: [LinkSide]
    /// The index in ``links`` by entity index and relationship index.
    private let linkIndexes: [[Int: Int]]

    /// Builds the property map of every entity.
    ///
    /// ```swift
    /// let mapping = try SchemaMapping(schema: try Schema(contentsOf: url))
    /// ```
    ///
    /// - Parameters:
    ///   - schema: The schema.
    ///   - transforms: Custom transforms attributes may name.
    /// - Throws: The first ``MappingError`` of ``PropertyMap/init(entity:in:transforms:)``.
    public init(schema: Schema, transforms: TransformRegistry = TransformRegistry()) throws {
        var maps: [PropertyMap] = []
        var indexByName: [String: Int] = [:]
        for entity in schema.entities {
            indexByName[entity.name] = maps.count
            if indexByName[entity.tableName] == nil { indexByName[entity.tableName] = maps.count }
            maps.append(try PropertyMap(entity: entity, in: schema, transforms: transforms))
        }
        self.schema = schema
        self.transforms = transforms
        self.maps = maps
        self.indexByName = indexByName
        var links: [LinkSide] = []
        var linkIndexes: [[Int: Int]] = Array(repeating: [:], count: maps.count)
        for (entityIndex, entity) in schema.entities.enumerated() {
            for (position, relationship) in entity.relationships.enumerated() {
                guard let join = schema.joinTable(for: relationship, of: entity),
                      let child = indexByName[relationship.destination] else { continue }
                linkIndexes[entityIndex][position] = links.count
                links.append(LinkSide(table: join.name, parent: entityIndex, child: child,
                                      parentColumn: join.columns[0], childColumn: join.columns[1],
                                      relationship: relationship.name))
            }
        }
        self.links = links
        self.linkIndexes = linkIndexes
    }

    /// The index in ``links`` of relationship `relationship` of entity `entity`, when it is many-to-many.
    package func linkIndex(entity: Int, relationship: Int) -> Int? { linkIndexes[entity][relationship] }

    /// The join table columns holding keys of entity `entity` (both of a self-join's), each
    /// table once, with the column and entity at the links' other end: the links a deleted row of
    /// `entity` takes with it, and the rows those links reached (reported updated).
    package func joinColumns(of entity: Int) -> [JoinColumn] {
        var result: [JoinColumn] = []
        for link in links {
            let ends = [(link.parent, link.parentColumn, link.child, link.childColumn),
                        (link.child, link.childColumn, link.parent, link.parentColumn)]
            for (owner, column, other, otherColumn) in ends where owner == entity {
                if !result.contains(where: { $0.table.lowercased() == link.table.lowercased() && $0.column == column }) {
                    result.append(JoinColumn(table: link.table, column: column, otherColumn: otherColumn, other: other))
                }
            }
        }
        return result
    }

    /// The map of the entity named `name` (entity or table name), or `nil`.
    ///
    /// ```swift
    /// mapping["User"]?.jsonKey(forAttribute: "userID")   // "user_id"
    /// ```
    ///
    /// - Parameters:
    ///   - name: The entity name or table name.
    /// - Returns: The map, or `nil`.
    public subscript(name: String) -> PropertyMap? {
        indexByName[name].map { maps[$0] }
    }

    /// The map of the entity named `name`, or an error naming it.
    ///
    /// ```swift
    /// let users = try mapping.requireMap("users")
    /// ```
    ///
    /// - Parameters:
    ///   - name: The entity name or table name.
    /// - Returns: The map.
    /// - Throws: ``MappingError/Code/unknownEntity``.
    public func requireMap(_ name: String) throws -> PropertyMap {
        guard let map = self[name] else {
            let known = schema.entities.map(\.name).joined(separator: ", ")
            throw MappingError(.unknownEntity, "unknown entity '\(name)' (schema '\(schema.name)' has \(known))")
        }
        return map
    }

    /// The envelope of a route's responses: the route's own, else the schema's; `""` means none.
    ///
    /// ```swift
    /// mapping.envelope(for: route).keys   // ["data"]
    /// ```
    ///
    /// - Parameters:
    ///   - route: The route, or `nil` for the schema's default.
    /// - Returns: The envelope.
    public func envelope(for route: Route?) -> Envelope {
        Envelope(for: route, in: schema)
    }
}

/// One side of a join table: the links a many-to-many relationship of `parent` writes, each a
/// pair of the parent's key (in `parentColumn`) and a child's (in `childColumn`).
/// A join table column holding one entity's keys, and the column and entity at the other end of
/// its links (``SchemaMapping/joinColumns(of:)``).
package struct JoinColumn: Sendable, Hashable {
    /// The join table.
    package let table: String
    /// The column holding the entity's keys.
    package let column: String
    /// The column holding the keys at the other end.
    package let otherColumn: String
    /// The entity index at the other end.
    package let other: Int
}

package struct LinkSide: Sendable, Hashable {
    /// The join table.
    package let table: String
    /// The entity index of the relationship's source, and of its destination.
    package let parent: Int
    package let child: Int
    /// The columns holding the parent's and the child's keys.
    package let parentColumn: String
    package let childColumn: String
    /// The relationship's name, for messages.
    package let relationship: String
}
