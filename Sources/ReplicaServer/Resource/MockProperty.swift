/// One typed property of a mock resource, named as it appears in JSON.
///
/// ```swift
/// let name = MockProperty("name", .string)
/// ```
public struct MockProperty: Sendable, Hashable {
    /// The JSON key (and the SQLite column name).
    public var name: String
    /// The type every written value must have.
    public var type: MockPropertyType

    /// Creates a property.
    ///
    /// ```swift
    /// MockProperty("kilometersWalked", .double)
    /// ```
    /// - Parameters:
    ///   - name: the JSON key.
    ///   - type: the value type.
    public init(_ name: String, _ type: MockPropertyType) {
        self.name = name
        self.type = type
    }

    /// The property a Replica schema attribute is on the wire: named by the JSON key the client
    /// maps the attribute from (its `jsonKey`, else the schema's key convention: the core's rule,
    /// ``PropertyMap``'s), typed by ``MockPropertyType/init(_:)``. A one-column primary key keeps
    /// this name too, where the client reads the entity's `jsonIdKey` (the mock server has always
    /// served keys under the attribute's own key).
    ///
    /// ```swift
    /// let user = try schema.requireEntity("User")   // snake_case
    /// MockProperty(user.primaryKeyAttribute, in: schema)   // MockProperty("user_id", .integer)
    /// MockProperty(Attribute("avatarSm", .string), in: schema)   // MockProperty("avatar_sm", .string)
    /// ```
    /// - Parameters:
    ///   - attribute: an attribute of one of the schema's entities.
    ///   - schema: the schema holding it (for its key convention).
    public init(_ attribute: Attribute, in schema: Schema) {
        self.init(PropertyMap.jsonKey(of: attribute, convention: schema.keyConvention), MockPropertyType(attribute.type))
    }
}

/// The primary key of a mock resource: one property (integers assigned by the store, or strings)
/// or several together (a composite key, given by every object).
///
/// ```swift
/// let key = MockPrimaryKey.string("slug")
/// let refKey = MockPrimaryKey.composite([MockProperty("owner", .string), MockProperty("repo", .string),
///                                        MockProperty("ref", .string)])
/// ```
public struct MockPrimaryKey: Sendable, Hashable {
    /// How keys are typed and assigned.
    public enum Kind: String, Sendable, Hashable {
        /// Integers assigned 1, 2, 3… when a `POST` has none (never reused in the SQLite store).
        case autoIncrement
        /// Strings; a `POST` without one gets a random UUID.
        case string
        /// Several properties together (``parts``), each an integer or a string; every object gives
        /// all of them, and the server addresses it by them in order: `/refs/:owner/:repo/:ref`.
        case composite
    }

    /// The property holding the key; for a composite key, its parts' names joined by commas
    /// (`owner,repo,ref`), which names no property.
    public private(set) var name: String
    /// Integer, string or composite keys.
    public private(set) var kind: Kind
    /// The parts of a composite key; empty for a one-property key.
    private var compositeParts: [MockProperty] = []

    private init(name: String, kind: Kind, parts: [MockProperty] = []) {
        self.name = name
        self.kind = kind
        compositeParts = parts
    }

    /// Auto-incrementing integer keys in the property `name`.
    ///
    /// ```swift
    /// MockPrimaryKey.autoIncrement("id")
    /// ```
    /// - Parameters:
    ///   - name: the key property, `id` by default.
    /// - Returns: the key description.
    public static func autoIncrement(_ name: String = "id") -> MockPrimaryKey { MockPrimaryKey(name: name, kind: .autoIncrement) }

    /// String keys in the property `name`.
    ///
    /// ```swift
    /// MockPrimaryKey.string("slug")
    /// ```
    /// - Parameters:
    ///   - name: the key property.
    /// - Returns: the key description.
    public static func string(_ name: String = "id") -> MockPrimaryKey { MockPrimaryKey(name: name, kind: .string) }

    /// A key made of several properties together, in path order: a git ref is one of a repository
    /// (`owner`, `repo`) and has its own name (`ref`). Objects are created with every part (a
    /// `POST` lacking one is a 422) and addressed by all of them (`GET /refs/octocat/Hello-World/refs%2Fheads%2Fmain`);
    /// a path with the leading parts only lists or creates within them (`GET /refs/octocat/Hello-World`).
    ///
    /// ```swift
    /// let key = MockPrimaryKey.composite([MockProperty("owner", .string), MockProperty("repo", .string),
    ///                                     MockProperty("ref", .string)])
    /// ```
    /// - Parameters:
    ///   - parts: the key's properties, each `.integer` or `.string` (another type is read as `.string`),
    ///     names distinct. With one part the key is that part's ``autoIncrement(_:)`` or ``string(_:)``
    ///     key; with none, ``default``.
    /// - Returns: the key description.
    public static func composite(_ parts: [MockProperty]) -> MockPrimaryKey {
        var seen = Set<String>()
        let parts = parts.filter { seen.insert($0.name).inserted }
            .map { MockProperty($0.name, $0.type == .integer ? .integer : .string) }
        switch parts.count {
        case 0: return .default
        case 1: return parts[0].type == .integer ? .autoIncrement(parts[0].name) : .string(parts[0].name)
        default: return MockPrimaryKey(name: parts.map(\.name).joined(separator: ","), kind: .composite, parts: parts)
        }
    }

    /// The default: auto-incrementing integers in `id`.
    public static let `default` = MockPrimaryKey.autoIncrement()

    /// The property type of a one-property key; `.json` for a composite key (see ``parts``).
    public var type: MockPropertyType {
        switch kind {
        case .autoIncrement: return .integer
        case .string: return .string
        case .composite: return .json
        }
    }

    /// The key's properties in order: one for a one-property key, two or more for a composite one.
    ///
    /// ```swift
    /// MockPrimaryKey.autoIncrement().parts   // [MockProperty("id", .integer)]
    /// ```
    public var parts: [MockProperty] {
        kind == .composite ? compositeParts : [MockProperty(name, type)]
    }

    /// Whether the property `property` is (part of) the key.
    ///
    /// ```swift
    /// refKey.contains("repo")   // true
    /// ```
    /// - Parameters:
    ///   - property: a property name.
    /// - Returns: whether it is a key property.
    public func contains(_ property: String) -> Bool {
        kind == .composite ? compositeParts.contains { $0.name == property } : property == name
    }

    /// The key of an object: its key property's value, or for a composite key an array of its
    /// parts' values in order; nil when the object lacks the key (or a part), or holds null.
    ///
    /// ```swift
    /// refKey.key(of: ["owner": "octocat", "repo": "Hello-World", "ref": "refs/heads/main"])
    /// // ["octocat", "Hello-World", "refs/heads/main"]
    /// ```
    /// - Parameters:
    ///   - values: an object's values, keyed by property name.
    /// - Returns: the key, or nil.
    public func key(of values: JSONObject) -> JSONValue? {
        guard kind == .composite else {
            guard let value = values[name], !value.isNull else { return nil }
            return value
        }
        var parts: [JSONValue] = []
        for part in compositeParts {
            guard let value = values[part.name], !value.isNull else { return nil }
            parts.append(value)
        }
        return .array(parts)
    }

    /// A key's values by part, as stores compare them: `[(id, 5)]` for `5`, `[(owner, "octocat"), …]`
    /// for a composite key's array; nil for a value that is no key of this shape (an array of
    /// another length, a scalar for a composite key).
    ///
    /// ```swift
    /// refKey.values(of: ["octocat", "Hello-World", "refs/heads/main"])?.map(\.property.name) // owner, repo, ref
    /// ```
    /// - Parameters:
    ///   - key: a key, as ``key(of:)`` gives it.
    /// - Returns: each part and its value, in order.
    public func values(of key: JSONValue) -> [(property: MockProperty, value: JSONValue)]? {
        guard kind == .composite else { return [(property: MockProperty(name, type), value: key)] }
        guard case .array(let values) = key, values.count == compositeParts.count else { return nil }
        return Array(zip(compositeParts, values)).map { (property: $0.0, value: $0.1) }
    }

    /// The parts a key lacks in `values` (null counts as lacking): a composite key's missing parts;
    /// always empty for a one-property key, which the store assigns.
    func missingParts(in values: JSONObject) -> [String] {
        guard kind == .composite else { return [] }
        return compositeParts.filter { values[$0.name].map(\.isNull) ?? true }.map(\.name)
    }

    /// Reads one part's value from a decoded path segment; nil when it cannot be a value of that part.
    static func parse(_ segment: String, as property: MockProperty) -> JSONValue? {
        switch property.type {
        case .integer: return Int64(segment).map(JSONValue.int)
        default: return segment.isEmpty ? nil : .string(segment)
        }
    }

    /// Reads a one-property key from a decoded path segment; nil when it cannot be a key of this kind
    /// (and always for a composite key, which takes one segment per part).
    func parse(_ segment: String) -> JSONValue? {
        kind == .composite ? nil : Self.parse(segment, as: MockProperty(name, type))
    }

    /// A key as path segments, each percent-encoded: `5`, or `octocat/Hello-World/refs%2Fheads%2Fmain`.
    func path(of key: JSONValue) -> String {
        let parts = values(of: key)?.map(\.value) ?? [key]
        return parts.map { PercentEncoding.encode($0.stringValue ?? $0.serialized(), allowed: .unreserved) }.joined(separator: "/")
    }
}

/// A parent of a resource: nests its routes (`/people/:id/cars`) and names the child's key to the parent.
///
/// ```swift
/// let owner = MockParent("people", key: "person_id")
/// ```
public struct MockParent: Sendable, Hashable {
    /// The parent resource's name (its path).
    public var resource: String
    /// The child's property that holds the parent's primary key.
    public var key: String

    /// Names a parent and the child's property holding its key.
    ///
    /// ```swift
    /// MockParent("people")  // key "person_id"
    /// ```
    /// - Parameters:
    ///   - resource: the parent resource's name.
    ///   - key: the child's parent-key property; by default the singular of the parent's name plus `_id`
    ///     (`people` → `person_id`, `categories` → `category_id`).
    public init(_ resource: String, key: String? = nil) {
        self.resource = resource
        self.key = key ?? MockInflection.singular(resource) + "_id"
    }
}

/// English singulars for default parent keys.
enum MockInflection {
    static func singular(_ word: String) -> String {
        let irregular = ["people": "person", "children": "child", "men": "man", "women": "woman", "mice": "mouse"]
        if let known = irregular[word.lowercased()] { return known }
        if word.hasSuffix("ies"), word.count > 3 { return String(word.dropLast(3)) + "y" }
        for suffix in ["sses", "shes", "ches", "xes", "zes"] where word.hasSuffix(suffix) {
            return String(word.dropLast(2))
        }
        if word.hasSuffix("s"), !word.hasSuffix("ss"), word.count > 1 { return String(word.dropLast()) }
        return word
    }
}
