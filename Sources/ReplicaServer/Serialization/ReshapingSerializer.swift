/// A serializer configured with data: renamed keys, hidden keys, computed fields and envelopes, applied
/// to responses and undone on request bodies.
///
/// ```swift
/// var shape = ReshapingSerializer()
/// shape.renames = ["name": "title"]                     // stored "name" is "title" on the wire
/// shape.objectEnvelope = ["data", "post"]                // {"data": {"post": {...}}}
/// shape.collectionEnvelope = ["data", "posts"]           // {"data": {"posts": [...]}}
/// shape.computed = ["slug": { .string(($0["title"]?.stringValue ?? "").lowercased()) }]
/// server.setSerializer(shape, for: "posts")
/// ```
public struct ReshapingSerializer: MockSerializer {
    /// Top-level key → wire key; request bodies are renamed back. A property nested at a dotted name
    /// (`address.city`) is renamed with its whole object, by its first key (`address`).
    public var renames: [String: String]
    /// Top-level keys left out of responses (`address` hides every `address.…` property).
    public var hidden: Set<String>
    /// Wire key → value computed from the renamed object, added to responses (ignored in requests).
    public var computed: [String: @Sendable (JSONObject) -> JSONValue]
    /// Key path wrapping single objects (`["data", "post"]`); request bodies wrapped so are unwrapped.
    public var objectEnvelope: [String]
    /// Key path wrapping collections (`["data", "posts"]`).
    public var collectionEnvelope: [String]
    /// Extra top-level members of collection responses (`["meta": ["version": 2]]`).
    public var collectionExtras: JSONObject

    /// Creates a serializer that changes nothing until configured.
    ///
    /// ```swift
    /// let shape = ReshapingSerializer(renames: ["name": "title"], objectEnvelope: ["post"])
    /// ```
    /// - Parameters:
    ///   - renames: stored name → wire key.
    ///   - hidden: stored properties left out.
    ///   - computed: wire key → computed value.
    ///   - objectEnvelope: key path around single objects.
    ///   - collectionEnvelope: key path around collections.
    ///   - collectionExtras: extra members beside a collection envelope.
    public init(
        renames: [String: String] = [:],
        hidden: Set<String> = [],
        computed: [String: @Sendable (JSONObject) -> JSONValue] = [:],
        objectEnvelope: [String] = [],
        collectionEnvelope: [String] = [],
        collectionExtras: JSONObject = [:]
    ) {
        self.renames = renames
        self.hidden = hidden
        self.computed = computed
        self.objectEnvelope = objectEnvelope
        self.collectionEnvelope = collectionEnvelope
        self.collectionExtras = collectionExtras
    }

    public func serialize(object: JSONObject, of resource: MockResource) -> JSONValue {
        Self.wrap(.object(shape(object)), in: objectEnvelope, extras: [:])
    }

    public func serialize(collection: [JSONObject], of resource: MockResource) -> JSONValue {
        Self.wrap(.array(collection.map { .object(shape($0)) }), in: collectionEnvelope, extras: collectionExtras)
    }

    public func deserialize(parameters: JSONValue, of resource: MockResource) -> JSONValue {
        var value = parameters
        if !objectEnvelope.isEmpty {
            var inner: JSONValue? = parameters
            for key in objectEnvelope { inner = inner?[key] }
            if let inner { value = inner }
        }
        guard case .object(let object) = value else { return value }
        let back = Dictionary(renames.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        var renamed = JSONObject()
        for (key, member) in object where computed[key] == nil {
            renamed[back[key] ?? key] = member
        }
        return .object(renamed)
    }

    private func shape(_ object: JSONObject) -> JSONObject {
        var shaped = JSONObject()
        for (key, value) in object where !hidden.contains(key) {
            shaped[renames[key] ?? key] = value
        }
        for key in computed.keys.sorted() {
            if let compute = computed[key] { shaped[key] = compute(shaped) }
        }
        return shaped
    }

    private static func wrap(_ value: JSONValue, in path: [String], extras: JSONObject) -> JSONValue {
        var wrapped = value
        for key in path.reversed() { wrapped = .object([key: wrapped]) }
        if !extras.isEmpty, case .object(var top) = wrapped {
            for (key, member) in extras { top[key] = member }
            wrapped = .object(top)
        }
        return wrapped
    }
}
