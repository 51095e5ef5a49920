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
