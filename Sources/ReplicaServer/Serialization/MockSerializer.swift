/// Shapes a resource's JSON on the wire: single objects and collections going out, request bodies coming in.
///
/// Objects reach a serializer in their JSON shape, properties with dotted names already nested
/// (`address.city` inside `address`: see ``MockResource/nested(_:)``); what `deserialize` returns is
/// harvested through the same key paths.
///
/// Every method has a pass-through default, so a serializer implements only what it changes.
///
/// ```swift
/// struct Enveloped: MockSerializer {
///     func serialize(collection: [JSONObject], of resource: MockResource) -> JSONValue {
///         ["data": [resource.name: .array(collection.map(JSONValue.object))]]
///     }
/// }
/// server.setSerializer(Enveloped(), for: "posts")
/// ```
public protocol MockSerializer: Sendable {
    /// The body for one object (show, create, update).
    ///
    /// ```swift
    /// func serialize(object: JSONObject, of resource: MockResource) -> JSONValue { ["post": .object(object)] }
    /// ```
    /// - Parameters:
    ///   - object: the stored object in its JSON shape, every property present, dotted ones nested.
    ///   - resource: its resource.
    /// - Returns: the response body.
    func serialize(object: JSONObject, of resource: MockResource) -> JSONValue

    /// The body for a page of a collection (index).
    ///
    /// ```swift
    /// func serialize(collection: [JSONObject], of resource: MockResource) -> JSONValue {
    ///     ["items": .array(collection.map(JSONValue.object))]
    /// }
    /// ```
    /// - Parameters:
    ///   - collection: the objects of the page, in their JSON shape as for `serialize(object:of:)`.
    ///   - resource: their resource.
    /// - Returns: the response body.
    func serialize(collection: [JSONObject], of resource: MockResource) -> JSONValue

    /// The object to harvest from a request body (create, update): unwrap envelopes, rename keys back.
    ///
    /// ```swift
    /// func deserialize(parameters: JSONValue, of resource: MockResource) -> JSONValue { parameters["post"] ?? parameters }
    /// ```
    /// - Parameters:
    ///   - parameters: the parsed request body.
    ///   - resource: the target resource.
    /// - Returns: the value harvested into the resource's properties.
    func deserialize(parameters: JSONValue, of resource: MockResource) -> JSONValue
}

extension MockSerializer {
    public func serialize(object: JSONObject, of resource: MockResource) -> JSONValue { .object(object) }
    public func serialize(collection: [JSONObject], of resource: MockResource) -> JSONValue {
        .array(collection.map { serialize(object: $0, of: resource) })
    }
    public func deserialize(parameters: JSONValue, of resource: MockResource) -> JSONValue { parameters }
}

/// The default serializer: objects as stored, collections as arrays, bodies as sent.
///
/// ```swift
/// server.setSerializer(PassThroughSerializer(), for: "people")
/// ```
public struct PassThroughSerializer: MockSerializer {
    /// Creates the pass-through serializer.
    ///
    /// ```swift
    /// let serializer = PassThroughSerializer()
    /// ```
    public init() {}
}

/// Every object inside its resource's singular name and every collection inside the resource's
/// name, as Rails-style APIs (and ApiModel) answer: `{"person": {...}}`, `{"people": [...]}`;
/// request bodies so wrapped are unwrapped, bare ones taken as they are.
///
/// ```swift
/// var options = MockServerOptions()
/// options.defaultSerializer = NamespacedSerializer()     // every resource; `replica serve --serializer namespaced`
/// ```
public struct NamespacedSerializer: MockSerializer {
    /// Creates the serializer.
    ///
    /// ```swift
    /// server.setSerializer(NamespacedSerializer(), for: "people")
    /// ```
    public init() {}

    public func serialize(object: JSONObject, of resource: MockResource) -> JSONValue {
        .object([MockInflection.singular(resource.name): .object(object)])
    }

    public func serialize(collection: [JSONObject], of resource: MockResource) -> JSONValue {
        .object([resource.name: .array(collection.map(JSONValue.object))])
    }

    public func deserialize(parameters: JSONValue, of resource: MockResource) -> JSONValue {
        guard case .object(let object) = parameters, object.keys == [MockInflection.singular(resource.name)],
              let inner = object[MockInflection.singular(resource.name)] else { return parameters }
        return inner
    }
}
