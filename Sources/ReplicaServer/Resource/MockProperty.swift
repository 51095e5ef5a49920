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
}

/// The primary key of a mock resource: a property name and how new keys are made.
///
/// ```swift
/// let key = MockPrimaryKey.string("slug")
/// ```
public struct MockPrimaryKey: Sendable, Hashable {
    /// How keys are typed and assigned.
    public enum Kind: String, Sendable, Hashable {
        /// Integers assigned 1, 2, 3… when a `POST` has none (never reused in the SQLite store).
        case autoIncrement
        /// Strings; a `POST` without one gets a random UUID.
        case string
    }

    /// The property holding the key.
    public var name: String
    /// Integer or string keys.
    public var kind: Kind

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

    /// The default: auto-incrementing integers in `id`.
    public static let `default` = MockPrimaryKey.autoIncrement()

    /// The property type of the key.
    public var type: MockPropertyType { kind == .autoIncrement ? .integer : .string }

    /// Reads a key from a decoded path segment; nil when it cannot be a key of this kind.
    func parse(_ segment: String) -> JSONValue? {
        switch kind {
        case .autoIncrement: return Int64(segment).map(JSONValue.int)
        case .string: return segment.isEmpty ? nil : .string(segment)
        }
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
