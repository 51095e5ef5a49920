/// How one entity's objects look in JSON: which key holds which attribute or
/// relationship, and how values convert. Built once per entity, then shared.
///
/// Keys come from, in order of precedence:
/// 1. the attribute's explicit `jsonKey` (RSAPI's RSModelHelper: list only the
///    exceptions); a key containing dots is a key path into nested objects
///    (`address.geo.lat`);
/// 2. for a single-column primary key, the entity's `jsonIDKey` (RSAPI's `jsonIdKeyForClass`, default
///    `id`); the parts of a composite key map as any attribute does (explicit key, else convention);
/// 3. the schema's ``KeyConvention`` applied to the attribute name
///    (`userID` ↔ `user_id`, `avatarSm` ↔ `avatar_sm`).
///
/// Relationships use their explicit `jsonKey` or the convention applied to
/// their name. Keys match exactly (case-sensitive); any other key of an object
/// is counted as unknown and ignored.
///
/// ```swift
/// let schema = try Schema(contentsOf: URL(fileURLWithPath: "Schemas/blog.json"))
/// let users = try PropertyMap(entity: schema.requireEntity("User"), in: schema)
/// users.jsonKey(forAttribute: "avatarSm")   // "avatar_sm"
/// let mapped = try users.map(["user_id": 7, "name": "Ann"], at: .root)
/// mapped["userID"]   // .integer(7)
/// ```
public struct PropertyMap: Sendable {
    /// The entity mapped.
    public let entity: Entity
    /// One mapping per attribute, in the entity's attribute order (the slots of ``MappedObject/values``).
    public let attributes: [AttributeMapping]
    /// One mapping per relationship, in the entity's order (the slots of ``MappedObject/relationships``).
    public let relationships: [RelationshipMapping]
    /// The index of a single-column primary key in ``attributes``; for a composite key, its first
    /// part's (code that may meet one reads ``primaryKeyIndexes``).
    public let primaryKeyIndex: Int
    /// What ``map(_:at:)`` does with keys that match nothing (the entity's policy, else the schema's).
    public let unmappedKeys: UnmappedKeyPolicy
    /// The globs of keys that are dropped without being counted (the schema's and the entity's).
    public let ignoredKeyGlobs: [KeyGlob]
    /// Under ``UnmappedKeyPolicy/keep``, the index in ``attributes`` of the JSON column that holds
    /// the kept keys; `nil` otherwise.
    ///
    /// ```swift
    /// issues.unmappedIndex.map { issues.attributes[$0].name }   // "unmapped"
    /// ```
    public let unmappedIndex: Int?
    /// The indexes of the primary key's attributes in ``attributes``, in key order: one for a
    /// single-column key, two or more for a composite key.
    ///
    /// ```swift
    /// try PropertyMap(entity: ref, in: schema).primaryKeyIndexes   // [0, 1, 2] for owner, repo, ref
    /// ```
    public let primaryKeyIndexes: [Int]

    /// JSON key → slot, for the top level; nested nodes for key paths.
    let root: KeyNode
    private let indexByName: [String: Int]
    /// The attribute and relationship names, shared by every ``MappedObject``.
    let attributeNames: [String]
    let relationshipNames: [String]
    /// The to-one relationships that can fill a foreign key: (relationship index, attribute index).
    let foreignKeyLinks: [(relationship: Int, attribute: Int)]

    /// Builds the map of `entity`.
    ///
    /// ```swift
    /// var transforms = TransformRegistry()
    /// transforms.register("upper") { .string($0.stringValue?.uppercased() ?? "") }
    /// let map = try PropertyMap(entity: schema.requireEntity("User"), in: schema, transforms: transforms)
    /// ```
    ///
    /// - Parameters:
    ///   - entity: The entity, one of `schema`'s.
    ///   - schema: The schema: its key convention, and the destinations of relationships.
    ///   - transforms: Custom transforms that attributes may name.
    /// - Throws: ``MappingError`` with code `.unknownTransform` or `.invalidTransform`
    ///   naming the entity and attribute, or `.collidingKeys` naming both attributes
    ///   (or relationships) that map to one JSON key.
    public init(entity: Entity, in schema: Schema, transforms: TransformRegistry = TransformRegistry()) throws {
        let convention = schema.keyConvention
        // A single key's JSON key is the entity's jsonIDKey; a composite key's parts follow the convention.
        let idKeyAttribute = entity.hasCompositeKey ? nil : entity.primaryKey
        let conventional = entity.attributes.filter {
            $0.jsonKey == nil && $0.name != idKeyAttribute && !$0.isUnmappedColumn
        }.map(\.name)
        do {
            // Only to refuse two attributes the convention maps to one key.
            _ = try convention.table(attributes: conventional)
        } catch {
            throw MappingError(.collidingKeys, "attributes \(error.attributes.map { "'\($0)'" }.joined(separator: " and ")) "
                               + "both map to JSON key '\(error.jsonKey)' (\(convention.rawValue))",
                               entity: entity.name)
        }
        var attributes: [AttributeMapping] = []
        var indexByName: [String: Int] = [:]
        var unmappedIndex: Int?
        for attribute in entity.attributes {
            if attribute.isUnmappedColumn {
                // No JSON key: the column holds the keys no other attribute took.
                unmappedIndex = attributes.count
                indexByName[attribute.name] = attributes.count
                attributes.append(AttributeMapping(
                    name: attribute.name, type: attribute.type, isNullable: true, jsonPath: [], transform: nil,
                    converter: try ValueConverter(attribute: attribute, entity: entity.name, transforms: transforms)))
                continue
            }
            let key = Self.jsonKey(of: attribute, in: entity, convention: convention)
            indexByName[attribute.name] = attributes.count
            attributes.append(AttributeMapping(
                name: attribute.name, type: attribute.type, isNullable: attribute.isNullable,
                jsonPath: Self.path(key), transform: attribute.transform,
                converter: try ValueConverter(attribute: attribute, entity: entity.name, transforms: transforms)))
        }
        var relationships: [RelationshipMapping] = []
        var links: [(relationship: Int, attribute: Int)] = []
        for relationship in entity.relationships {
            let key = Self.jsonKey(of: relationship, convention: convention)
            var foreignKeyIndex: Int?
            var destinationIDPath: [String]?
            if relationship.kind == .toOne, let foreignKey = relationship.foreignKey, let index = indexByName[foreignKey] {
                foreignKeyIndex = index
                links.append((relationships.count, index))
                if let destination = schema.entity(named: relationship.destination) {
                    destinationIDPath = Self.path(Self.primaryKeyJSONKey(of: destination))
                }
            }
            relationships.append(RelationshipMapping(
                name: relationship.name, kind: relationship.kind, destination: relationship.destination,
                jsonPath: Self.path(key), foreignKeyIndex: foreignKeyIndex, destinationIDPath: destinationIDPath))
        }
        self.entity = entity
        self.attributes = attributes
        self.relationships = relationships
        self.indexByName = indexByName
        self.attributeNames = attributes.map(\.name)
        self.relationshipNames = relationships.map(\.name)
        self.foreignKeyLinks = links
        self.primaryKeyIndexes = entity.primaryKeyNames.map { indexByName[$0] ?? 0 }
        self.primaryKeyIndex = primaryKeyIndexes.first ?? 0
        self.unmappedKeys = schema.unmappedKeyPolicy(of: entity)
        self.ignoredKeyGlobs = schema.ignoredKeyGlobs(of: entity)
        self.unmappedIndex = unmappedKeys == .keep ? unmappedIndex : nil
        self.root = try KeyNode.build(entity: entity.name, attributes: attributes, relationships: relationships)
    }

    /// Whether the key (a dotted key path for nested keys) matches one of ``ignoredKeyGlobs``.
    ///
    /// ```swift
    /// issues.isIgnored("events_url")   // true with "ignoreKeys": ["*_url"]
    /// ```
    ///
    /// - Parameter key: The key or dotted key path.
    /// - Returns: `true` when the key is dropped without a word.
    public func isIgnored(_ key: String) -> Bool {
        !ignoredKeyGlobs.isEmpty && ignoredKeyGlobs.contains { $0.matches(key) }
    }

    /// The JSON key (a dot-joined key path for nested keys) of an attribute of `entity`, by the
    /// rules above: its explicit `jsonKey`; for a single-column primary key, the entity's
    /// `jsonIDKey`; else the convention applied to its name. The one rule for every reader and
    /// writer of an entity's objects (the client's map, and the mock server's resources and
    /// routes); it needs no map built, so it never fails. The column of kept unmapped keys,
    /// which objects never hold under a key of its own, is named by the convention.
    ///
    /// ```swift
    /// let user = try schema.requireEntity("User")
    /// PropertyMap.jsonKey(of: Attribute("avatarSm", .string), in: user, convention: .snakeCase)   // "avatar_sm"
    /// ```
    package static func jsonKey(of attribute: Attribute, in entity: Entity, convention: KeyConvention) -> String {
        if attribute.jsonKey?.isEmpty != false, !attribute.isUnmappedColumn, !entity.hasCompositeKey,
           attribute.name == entity.primaryKey {
            return entity.jsonIDKey
        }
        return jsonKey(of: attribute, convention: convention)
    }

    /// The JSON key of an attribute by itself, whatever its entity: its explicit `jsonKey`, else the
    /// convention applied to its name (``jsonKey(of:in:convention:)`` without the `jsonIdKey` of a
    /// one-column primary key).
    ///
    /// ```swift
    /// PropertyMap.jsonKey(of: Attribute("homeCity", .string, jsonKey: "address.city"), convention: .snakeCase)   // "address.city"
    /// ```
    package static func jsonKey(of attribute: Attribute, convention: KeyConvention) -> String {
        if let explicit = attribute.jsonKey, !explicit.isEmpty { return explicit }
        return convention.jsonKey(forAttribute: attribute.name)
    }

    /// The JSON key of a relationship's nested value: its explicit `jsonKey`, else the convention
    /// applied to its name.
    ///
    /// ```swift
    /// PropertyMap.jsonKey(of: .toOne("author", "User", foreignKey: "userID"), convention: .snakeCase)   // "author"
    /// ```
    package static func jsonKey(of relationship: Relationship, convention: KeyConvention) -> String {
        if let explicit = relationship.jsonKey, !explicit.isEmpty { return explicit }
        return convention.jsonKey(forAttribute: relationship.name)
    }

    /// The JSON key (path) of an entity's single-column primary key: its explicit `jsonKey`, else the
    /// entity's `jsonIDKey` (relationships point at single-column keys only).
    static func primaryKeyJSONKey(of entity: Entity) -> String {
        if entity.hasCompositeKey, let first = entity.primaryKeyNames.first { return first }
        if let explicit = entity.attribute(named: entity.primaryKey)?.jsonKey, !explicit.isEmpty { return explicit }
        return entity.jsonIDKey
    }

    /// `address.geo.lat` → `["address", "geo", "lat"]`; a key without dots is a path of one.
    static func path(_ key: String) -> [String] {
        guard key.utf8.contains(UInt8(ascii: ".")) else { return [key] }
        return key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// The index of attribute `name` in ``attributes`` (and ``MappedObject/values``).
    ///
    /// ```swift
    /// map.index(ofAttribute: "userID")   // 0
    /// ```
    ///
    /// - Parameters:
    ///   - name: The attribute name.
    /// - Returns: The index, or `nil` when the entity has no such attribute.
    public func index(ofAttribute name: String) -> Int? { indexByName[name] }

    /// The JSON key of an attribute, key paths joined by dots.
    ///
    /// ```swift
    /// map.jsonKey(forAttribute: "avatarSm")       // "avatar_sm"
    /// map.jsonKey(forAttribute: "addressGeoLat")  // "address.geo.lat"
    /// ```
    ///
    /// - Parameters:
    ///   - name: The attribute name.
    /// - Returns: The key, or `nil` when the entity has no such attribute.
    public func jsonKey(forAttribute name: String) -> String? {
        indexByName[name].map { attributes[$0].jsonKey }
    }

    /// The attribute stored under a JSON key (a dot-joined key path for nested keys).
    ///
    /// ```swift
    /// map.attribute(forJSONKey: "user_id")          // "userID"
    /// map.attribute(forJSONKey: "address.geo.lat")  // "addressGeoLat"
    /// ```
    ///
    /// - Parameters:
    ///   - key: The JSON key or dot-joined key path.
    /// - Returns: The attribute name, or `nil` when no attribute has this key.
    public func attribute(forJSONKey key: String) -> String? {
        guard case .attribute(let index) = root.slot(at: Self.path(key)) else { return nil }
        return attributes[index].name
    }

    /// The relationship whose nested value is under a JSON key (a dot-joined key path for nested keys).
    ///
    /// ```swift
    /// map.relationship(forJSONKey: "author")   // "author"
    /// ```
    ///
    /// - Parameters:
    ///   - key: The JSON key or dot-joined key path.
    /// - Returns: The relationship name, or `nil` when no relationship has this key.
    public func relationship(forJSONKey key: String) -> String? {
        guard case .relationship(let index) = root.slot(at: Self.path(key)) else { return nil }
        return relationships[index].name
    }
}
