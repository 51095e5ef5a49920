/// The keys that wrap every response of an API or a route (ApiModel's root
/// namespace): `data` in `{"data": [...]}`, `data.result` in `{"data": {"result": ...}}`.
///
/// ```swift
/// let envelope = Envelope("JsonResponseEnvelope.SuccessFullJsonResponse")
/// envelope.keys   // ["JsonResponseEnvelope", "SuccessFullJsonResponse"]
/// let (payload, pointer) = try envelope.unwrap(response)
/// // pointer: /JsonResponseEnvelope/SuccessFullJsonResponse
/// ```
public struct Envelope: Sendable, Hashable, CustomStringConvertible {
    /// The keys from the outside in; empty for no envelope. A streaming parser descends these keys.
    public let keys: [String]

    /// No envelope: the response is the payload.
    public static let none = Envelope(keys: [])

    /// An envelope from its dot-separated path; `""` is ``none``. Empty steps (`a..b`) are dropped.
    ///
    /// ```swift
    /// Envelope("data.users").keys   // ["data", "users"]
    /// ```
    ///
    /// - Parameters:
    ///   - path: The dot-separated keys.
    public init(_ path: String) {
        self.keys = path.split(separator: ".").map(String.init)
    }

    /// An envelope from its keys, for keys that contain dots.
    ///
    /// ```swift
    /// Envelope(keys: ["v1.0", "data"])
    /// ```
    ///
    /// - Parameters:
    ///   - keys: The keys from the outside in.
    public init(keys: [String]) {
        self.keys = keys
    }

    /// The envelope of a route's responses: the route's own `envelope` if it has
    /// one (`""` meaning none), else the schema's, else none.
    ///
    /// ```swift
    /// let envelope = Envelope(for: route, in: schema)
    /// ```
    ///
    /// - Parameters:
    ///   - route: The route, or `nil` for the schema's default.
    ///   - schema: The schema.
    public init(for route: Route?, in schema: Schema) {
        self.init(route?.envelope ?? schema.envelope ?? "")
    }

    /// Whether there is no envelope.
    public var isEmpty: Bool { keys.isEmpty }

    /// The pointer to the payload, e.g. `/data/users`.
    public var pointer: JSONPointer { JSONPointer(components: keys.map { .key($0) }) }

    /// The dot-separated path; `""` for none.
    public var description: String { keys.joined(separator: ".") }

    /// The payload inside a response, and where it is.
    ///
    /// ```swift
    /// let (payload, pointer) = try Envelope("data").unwrap(["data": [["id": 1]]])
    /// // payload: [{"id": 1}], pointer: /data
    /// ```
    ///
    /// - Parameters:
    ///   - value: The whole response.
    /// - Returns: The value under the envelope's keys and its pointer.
    /// - Throws: ``MappingError/Code/missingEnvelopeKey`` naming the envelope, the
    ///   missing key and the pointer where it stopped; ``MappingError/Code/notAnObject``
    ///   when a level is not an object.
    public func unwrap(_ value: JSONValue) throws -> (JSONValue, JSONPointer) {
        var current = value
        var pointer = JSONPointer.root
        for key in keys {
            guard case .object(let object) = current else {
                throw MappingError(.notAnObject, "envelope '\(self)' expects an object holding '\(key)', found "
                                   + "\(current.typeName) \(current.excerpt())", pointer: pointer, value: current.excerpt())
            }
            guard let next = object[key] else {
                let found = object.keys.prefix(8).map { "'\($0)'" }.joined(separator: ", ")
                    + (object.count > 8 ? ", …" : "")
                throw MappingError(.missingEnvelopeKey, "envelope '\(self)' stopped here: no key '\(key)' "
                                   + "(found \(object.isEmpty ? "an empty object" : found))", pointer: pointer)
            }
            current = next
            pointer = pointer / key
        }
        return (current, pointer)
    }
}
