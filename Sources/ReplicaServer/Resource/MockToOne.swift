/// A to-one relationship of a mock resource as it appears in JSON: a nested object of another resource
/// (`"user": {"id": 7, "login": "ann"}`) whose key the resource holds in a foreign-key property
/// (`user_id`), as a Replica schema's to-one relationship maps it.
///
/// The server takes every shape a Replica client accepts: the nested object (upserted into its own
/// resource, the foreign key set to its key), a bare key at the relationship's key (`"user": 7`), `null`,
/// or the foreign key alone (`"user_id": 7`); a foreign key given beside the nested value wins, as it does
/// in the client. It serves the relationship back in the shape it was written: the child object as it was
/// stored then (or the key, or `null`) beside the foreign key; an object written with the foreign key alone
/// is served with the foreign key alone.
///
/// ```swift
/// let users = MockResource("users", properties: [MockProperty("login", .string)])
/// let issues = MockResource("issues", properties: [MockProperty("title", .string)],
///                           toOne: [MockToOne("user", resource: "users", foreignKey: "user_id")])
/// // POST /issues {"title": "t", "user": {"id": 7, "login": "ann"}} stores user 7 and answers
/// // {"id": 1, "title": "t", "user_id": 7, "user": {"id": 7, "login": "ann"}}
/// ```
public struct MockToOne: Sendable, Hashable {
    /// The JSON key of the nested object (`user`).
    public var key: String
    /// The resource the nested object belongs to (`users`).
    public var resource: String
    /// The property holding the nested object's key (`user_id`).
    public var foreignKey: String

    /// Describes a to-one relationship.
    ///
    /// ```swift
    /// MockToOne("category", resource: "categories", foreignKey: "categoryID")
    /// ```
    /// - Parameters:
    ///   - key: the JSON key of the nested object.
    ///   - resource: the nested object's resource.
    ///   - foreignKey: the property holding its key; by default the singular of `resource` plus `_id`.
    public init(_ key: String, resource: String, foreignKey: String? = nil) {
        self.key = key
        self.resource = resource
        self.foreignKey = foreignKey ?? MockInflection.singular(resource) + "_id"
    }
}
