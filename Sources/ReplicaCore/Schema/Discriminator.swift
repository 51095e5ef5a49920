/// How a route routes the objects of one response to several entities by a key each object
/// carries: the `"discriminator"` of a route in a schema file, and ``Route/discriminator`` in Swift.
///
/// Two layouts:
/// - ``Layout/plain``: each object is an ordinary object of its entity, plus the discriminator
///   key (`{"kind": "photo", "id": 3, "url": "…"}`). The key is dropped before mapping unless the
///   entity maps it to an attribute.
/// - ``Layout/jsonAPI``: each object is a JSON:API resource object,
///   `{"type": "articles", "id": "1", "attributes": {…}, "relationships": {"author": {"data": {"type": "people", "id": "9"}}}}`.
///   `id` is the entity's key, `attributes` its attributes, and each relationship's
///   `data` a reference: a to-one's `{type, id}` fills its foreign key (`null` clears it), a
///   to-many's `[{type, id}, …]` replaces a many-to-many relationship's links. A relationship
///   without `data` (links only) leaves the stored value alone. `links` and `meta` are not stored.
///
/// Objects in the route's collection (the envelope) are the response's own: the route's target
/// entity among them is what a complete collection can make stale. Objects at ``included``
/// (JSON:API's compound documents: `/included`) are stored as well, and are never stale because
/// of this response (they are a sample, not a collection). Objects of two types that share an
/// id are different rows of different entities. An object whose discriminator names no entity
/// is not stored: it counts as an ignored key (`type 'tags'`) with its pointer, a warning under
/// the schema's `unmappedKeys`, an error under `strictKeys`.
///
/// In a schema file:
///
/// ```json
/// "discriminator": {"format": "jsonapi", "entities": {"articles": "Article", "people": "Person", "comments": "Comment"}}
/// "discriminator": {"key": "kind", "entities": {"photo": "Photo", "video": "Video"}}
/// ```
///
/// In Swift:
///
/// ```swift
/// Route(.get, "/articles", target: .entity("Article"), stale: .delete, pagination: .jsonAPI,
///       discriminator: .jsonAPI(["articles": "Article", "people": "Person", "comments": "Comment"]))
/// Route(.get, "/feed", target: .entity("Photo"), envelope: "items",
///       discriminator: Discriminator(key: "kind", entities: ["photo": "Photo", "video": "Video"]))
/// ```
public struct Discriminator: Sendable, Hashable {
    /// How each object is laid out.
    public enum Layout: String, Sendable, Hashable, CaseIterable {
        /// An ordinary object of its entity, with the discriminator key among its keys.
        case plain
        /// A JSON:API resource object: `type`, `id`, `attributes`, `relationships`.
        case jsonAPI = "jsonapi"
    }

    /// The key whose value names each object's type (`type`).
    public var key: String
    /// The entity of each type, by the discriminator's value (`"articles": "Article"`).
    public var entities: [String: String]
    /// How each object is laid out.
    public var layout: Layout
    /// Where the document holds other objects to store beside its collection (JSON:API's
    /// `/included`), or `nil`.
    public var included: JSONPointer?

    /// Creates a discriminator.
    ///
    /// ```swift
    /// Discriminator(key: "kind", entities: ["photo": "Photo", "video": "Video"])
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key naming each object's type.
    ///   - entities: The entity of each type.
    ///   - layout: How each object is laid out.
    ///   - included: Where other objects to store are, or `nil`.
    public init(key: String = "type", entities: [String: String], layout: Layout = .plain, included: JSONPointer? = nil) {
        self.key = key
        self.entities = entities
        self.layout = layout
        self.included = included
    }

    /// JSON:API: resource objects keyed by `type`, a compound document's `included` stored too
    /// (the route's envelope is `data` unless it names another).
    ///
    /// ```swift
    /// Discriminator.jsonAPI(["articles": "Article", "people": "Person"])
    /// ```
    public static func jsonAPI(_ entities: [String: String]) -> Discriminator {
        Discriminator(key: "type", entities: entities, layout: .jsonAPI, included: JSONPointer(components: [.key("included")]))
    }

    /// The type values naming `entity`, sorted.
    public func types(of entity: String) -> [String] {
        entities.filter { $0.value == entity }.map(\.key).sorted()
    }

    /// For messages: `jsonapi by type (articles → Article, people → Person)`.
    public var summary: String {
        let pairs = entities.sorted { $0.key < $1.key }.map { "\($0.key) → \($0.value)" }.joined(separator: ", ")
        return "\(layout == .jsonAPI ? "jsonapi " : "")by \(key) (\(pairs))"
    }
}

extension Discriminator {
    /// The schema file's `"discriminator"` object; defaults are left out.
    var fileJSON: JSONValue {
        var object = JSONObject()
        if layout != .plain { object["format"] = .string(layout.rawValue) }
        if key != "type" { object["key"] = .string(key) }
        object["entities"] = .object(JSONObject(entities.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))
        let defaultIncluded: JSONPointer? = layout == .jsonAPI ? JSONPointer(components: [.key("included")]) : nil
        if included != defaultIncluded { object["included"] = included.map { .string($0.description) } ?? .null }
        return .object(object)
    }
}
