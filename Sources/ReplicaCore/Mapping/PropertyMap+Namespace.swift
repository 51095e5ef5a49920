/// An entity's objects found in a response: one object or a collection.
///
/// ```swift
/// switch try posts.payload(in: value, at: pointer) {
/// case .object(let post, let at): _ = try posts.map(post, at: at)
/// case .collection(let items, let at): print(items.count, "posts at", at)
/// }
/// ```
public enum EntityPayload: Sendable, Hashable {
    /// One object, and where it is.
    case object(JSONObject, at: JSONPointer)
    /// An array of objects, and where it is (element `i` is at `pointer / i`).
    case collection([JSONValue], at: JSONPointer)
}

extension PropertyMap {
    /// The keys that wrap this entity's objects in responses (ApiModel's per-model
    /// namespace), for configuring a streaming parser: `post` for one object,
    /// `posts` for a collection, `nil` when the entity declares none.
    ///
    /// ```swift
    /// posts.namespaceKeys   // (object: "post", collection: "posts")
    /// ```
    public var namespaceKeys: (object: String?, collection: String?) {
        (entity.namespace.flatMap { $0.isEmpty ? nil : $0 },
         entity.collectionNamespace.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// Finds this entity's object or objects in an (unwrapped) response.
    ///
    /// ```swift
    /// try posts.payload(in: ["post": ["id": 1]], at: .root)      // .object({"id": 1}, at: /post)
    /// try posts.payload(in: ["posts": [["id": 1]]], at: .root)   // .collection([{"id": 1}], at: /posts)
    /// ```
    ///
    /// When the entity declares a namespace, the value must be an object holding
    /// the single key (`post`, whose value must be an object) or the collection
    /// key (`posts`, whose value must be an array); the single key wins when both
    /// are there. Without a namespace an object is one object and an array is a collection.
    ///
    /// - Parameters:
    ///   - value: The response, after ``Envelope/unwrap(_:)``.
    ///   - pointer: Where `value` is in the response.
    /// - Returns: The object or the collection, with its pointer.
    /// - Throws: ``MappingError/Code/missingNamespace`` naming the expected keys and
    ///   what was found; ``MappingError/Code/notAnObject`` or ``MappingError/Code/notAnArray``
    ///   when a value has the wrong JSON type.
    public func payload(in value: JSONValue, at pointer: JSONPointer) throws -> EntityPayload {
        let (single, collection) = namespaceKeys
        guard single != nil || collection != nil else {
            switch value {
            case .object(let object): return .object(object, at: pointer)
            case .array(let array): return .collection(array, at: pointer)
            default:
                throw MappingError(.notAnObject, "expected an object or an array of objects, found "
                                   + "\(value.typeName) \(value.excerpt())",
                                   entity: entity.name, pointer: pointer, value: value.excerpt())
            }
        }
        let expected = [single, collection].compactMap { $0.map { "'\($0)'" } }.joined(separator: " or ")
        guard case .object(let object) = value else {
            throw MappingError(.missingNamespace, "expected an object with key \(expected), found "
                               + "\(value.typeName) \(value.excerpt())",
                               entity: entity.name, pointer: pointer, value: value.excerpt())
        }
        if let single, let inner = object[single] {
            guard case .object(let one) = inner else {
                throw MappingError(.notAnObject, "expected an object under '\(single)', found "
                                   + "\(inner.typeName) \(inner.excerpt())",
                                   entity: entity.name, pointer: pointer / single, value: inner.excerpt())
            }
            return .object(one, at: pointer / single)
        }
        if let collection, let inner = object[collection] {
            guard case .array(let array) = inner else {
                throw MappingError(.notAnArray, "expected an array under '\(collection)', found "
                                   + "\(inner.typeName) \(inner.excerpt())",
                                   entity: entity.name, pointer: pointer / collection, value: inner.excerpt())
            }
            return .collection(array, at: pointer / collection)
        }
        let found = object.keys.prefix(8).map { "'\($0)'" }.joined(separator: ", ") + (object.count > 8 ? ", …" : "")
        throw MappingError(.missingNamespace, "missing namespace: expected key \(expected), found "
                           + (object.isEmpty ? "an empty object" : found),
                           entity: entity.name, pointer: pointer)
    }
}
