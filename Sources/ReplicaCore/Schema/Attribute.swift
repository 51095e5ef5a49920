/// A typed, stored property of an ``Entity``: one column.
///
/// ```swift
/// Attribute("name", .string, nullable: false)
/// Attribute("avatarSm", .string, jsonKey: "avatar_sm")
/// Attribute("active", .bool, default: .bool(true))
/// ```
public struct Attribute: Sendable, Hashable {
    public static func == (lhs: Attribute, rhs: Attribute) -> Bool {
        lhs.name == rhs.name && lhs.type == rhs.type && lhs.isNullable == rhs.isNullable
            && lhs.defaultValue == rhs.defaultValue && lhs.jsonKey == rhs.jsonKey && lhs.transform == rhs.transform
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(type)
        hasher.combine(isNullable)
    }

    /// The attribute name; also its column name.
    public var name: String
    /// The value type.
    public var type: AttributeType
    /// Whether the value may be null. Primary keys never are.
    public var isNullable: Bool
    /// `true` when nullability was not given: the entity then makes its primary key non-null.
    var nullabilityIsImplicit: Bool
    /// The value stored when an inserted object lacks this attribute, or `nil` for null.
    public var defaultValue: AttributeValue?
    /// An explicit JSON key (or dot-separated key path) overriding the key convention, or `nil`.
    public var jsonKey: String?
    /// The name of a transform applied to the JSON value (`percentage`, a date format name, a custom one), or `nil`.
    public var transform: String?
    /// `true` for the JSON column a schema adds to an entity that keeps its unmapped keys
    /// (``UnmappedKeyPolicy/keep``): it has no JSON key of its own and is not written to schema files.
    ///
    /// ```swift
    /// issue.attributes.filter(\.isUnmappedColumn).map(\.name)   // ["unmapped"]
    /// ```
    public internal(set) var isUnmappedColumn = false

    /// Creates an attribute.
    ///
    /// - Parameters:
    ///   - name: The attribute name.
    ///   - type: The value type.
    ///   - nullable: Whether null is allowed; when `nil`, every attribute but the primary key is nullable.
    ///   - default: The value used when an inserted object lacks it.
    ///   - jsonKey: An explicit JSON key or key path.
    ///   - transform: A named transform.
    public init(
        _ name: String,
        _ type: AttributeType,
        nullable: Bool? = nil,
        default defaultValue: AttributeValue? = nil,
        jsonKey: String? = nil,
        transform: String? = nil
    ) {
        self.name = name
        self.type = type
        self.isNullable = nullable ?? true
        self.nullabilityIsImplicit = nullable == nil
        self.defaultValue = defaultValue
        self.jsonKey = jsonKey
        self.transform = transform
    }
}

/// A link from one entity to another.
///
/// A to-one relationship is stored in a foreign-key attribute of its own entity. A to-many
/// relationship is either the inverse of a to-one on the other side (each child has one
/// parent) or, with `through`, a many-to-many link stored in a join table of two key columns
/// (a child such as a label is shared by many parents).
///
/// ```swift
/// Relationship.toOne("author", "User", foreignKey: "userID")
/// Relationship.toMany("posts", "Post", inverse: "author")
/// Relationship.toMany("labels", "Label", through: "issue_labels")   // columns issueID, labelID
/// ```
public struct Relationship: Sendable, Hashable {
    /// To-one or to-many.
    public enum Kind: String, Sendable, Hashable {
        case toOne
        case toMany
    }

    /// The relationship name; also the JSON key of nested objects (through the key convention).
    public var name: String
    /// To-one or to-many.
    public var kind: Kind
    /// The related entity's name.
    public var destination: String
    /// For to-one: the attribute of this entity holding the destination's primary key.
    public var foreignKey: String?
    /// For a one-to-many: the to-one relationship of the destination that points back here.
    public var inverse: String?
    /// For a many-to-many: the join table holding the links.
    public var through: String?
    /// For a many-to-many: the join table's columns, this entity's key first, then the
    /// destination's; `nil` for the defaults (`issueID`, `labelID`: each entity's name in
    /// lower camel case followed by `ID`).
    public var throughKeys: [String]?
    /// An explicit JSON key for nested objects, or `nil`.
    public var jsonKey: String?

    /// A to-one relationship stored in `foreignKey`.
    public static func toOne(_ name: String, _ destination: String, foreignKey: String, jsonKey: String? = nil) -> Relationship {
        Relationship(name: name, kind: .toOne, destination: destination, foreignKey: foreignKey, inverse: nil, jsonKey: jsonKey)
    }

    /// A to-many relationship, the inverse of the destination's to-one `inverse`.
    public static func toMany(_ name: String, _ destination: String, inverse: String, jsonKey: String? = nil) -> Relationship {
        Relationship(name: name, kind: .toMany, destination: destination, foreignKey: nil, inverse: inverse, jsonKey: jsonKey)
    }

    /// A many-to-many relationship whose links are rows of the join table `through`.
    ///
    /// A sync replaces the links of each parent it holds with the children its array lists
    /// (nested objects are upserted, bare keys only linked); links of other parents stay.
    ///
    /// ```swift
    /// Relationship.toMany("labels", "Label", through: "issue_labels")
    /// Relationship.toMany("followers", "User", through: "follows", keys: ["followedID", "followerID"])
    /// ```
    ///
    /// - Parameters:
    ///   - keys: The join table's two columns (this entity's key, then the destination's);
    ///     `nil` for `<entity>ID` of each side.
    public static func toMany(_ name: String, _ destination: String, through: String, keys: [String]? = nil,
                              jsonKey: String? = nil) -> Relationship {
        var relationship = Relationship(name: name, kind: .toMany, destination: destination, foreignKey: nil, inverse: nil,
                                        jsonKey: jsonKey)
        relationship.through = through
        relationship.throughKeys = keys
        return relationship
    }

    public init(name: String, kind: Kind, destination: String, foreignKey: String?, inverse: String?, jsonKey: String? = nil) {
        self.name = name
        self.kind = kind
        self.destination = destination
        self.foreignKey = foreignKey
        self.inverse = inverse
        self.through = nil
        self.throughKeys = nil
        self.jsonKey = jsonKey
    }

    /// Whether the links live in a join table (``through``).
    public var isManyToMany: Bool { kind == .toMany && through != nil }
}

/// The join table of a many-to-many relationship: two key columns, one per entity, the pair
/// its primary key and the second column indexed too, so links are found from either side.
///
/// ```swift
/// let join = issue.relationship(named: "labels").flatMap { schema.joinTable(for: $0, of: issue) }
/// print(join?.name, join?.columns)   // issue_labels ["issueID", "labelID"]
/// ```
public struct JoinTable: Sendable, Hashable {
    /// The table's name.
    public var name: String
    /// The entity owning the first column (the relationship's source) and the one of the second.
    public var entities: [String]
    /// The two key columns, in the order of ``entities``.
    public var columns: [String]
    /// The two columns' types: each entity's primary key type.
    public var types: [AttributeType]

    /// The column holding keys of `entity` (the first one for a self-join).
    public func column(of entity: String) -> String? {
        entities.firstIndex(of: entity).map { columns[$0] }
    }
}

/// A secondary index on one or more attributes.
///
/// ```swift
/// Index(["userID", "createdAt"])
/// Index(["email"], unique: true)
/// ```
public struct Index: Sendable, Hashable {
    /// The index name in SQLite; derived from the table and attributes when not given.
    public var name: String?
    /// The indexed attributes, in order.
    public var attributes: [String]
    /// Whether the combination of values must be unique.
    public var isUnique: Bool

    public init(_ attributes: [String], unique: Bool = false, name: String? = nil) {
        self.name = name
        self.attributes = attributes
        self.isUnique = unique
    }

    /// The database name of this index on `table`: its own name, or `<table>_<attributes>_index`
    /// (`_unique`), shortened to 63 bytes when longer (``Identifier/fitted(_:)``), the same on
    /// every store.
    ///
    /// ```swift
    /// Index(["userID", "createdAt"]).sqlName(table: "posts")   // "posts_userID_createdAt_index"
    /// ```
    public func sqlName(table: String) -> String {
        name ?? Identifier.fitted("\(table)_\(attributes.joined(separator: "_"))_\(isUnique ? "unique" : "index")")
    }
}

/// Names the library makes (index names) fitted to every store's limit.
public enum Identifier {
    /// The longest name every store takes, in UTF-8 bytes (PostgreSQL's 63).
    public static let maximumBytes = 63

    /// `name` when it fits in ``maximumBytes``; else its start cut at a character boundary, `_`
    /// and 8 hexadecimal digits of a hash of the whole name (FNV-1a): the same name every time,
    /// on every store, and two long names that share their start stay apart.
    ///
    /// ```swift
    /// Identifier.fitted(String(repeating: "a", count: 70))   // 54 "a"s, "_", 8 hex digits: 63 bytes
    /// ```
    public static func fitted(_ name: String) -> String {
        let bytes = Array(name.utf8)
        guard bytes.count > maximumBytes else { return name }
        var hash: UInt32 = 2_166_136_261
        for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        var prefix = ""
        var used = 0
        for character in name {
            let size = String(character).utf8.count
            guard used + size <= maximumBytes - 9 else { break }
            prefix.append(character)
            used += size
        }
        let hex = String(hash, radix: 16)
        return prefix + "_" + String(repeating: "0", count: 8 - hex.count) + hex
    }
}
