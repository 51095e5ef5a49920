import Foundation
import ReplicaCore

/// A typed endpoint (RestingKit's `Endpoint`): a method, a path template and how the request
/// body is sent, with the request and response types it speaks.
///
/// Path variables may be written `:name`, `{name}` or RestingKit's `{{name}}`; names may hold
/// letters, digits, `_` and `-`. ``ReplicaClient/perform(_:_:pathVariables:headers:)`` fills
/// them, sends the body, decodes the response, and when the path matches a route of the schema,
/// syncs the same response into the store in the same call.
///
/// ```swift
/// struct NewPost: Encodable { var title: String }
/// struct Post: Codable { var id: Int; var title: String }
/// let create = Endpoint<NewPost, Post>(.post, "/users/{{user-id}}/posts")
/// let post = try await client.perform(create, NewPost(title: "Hello"), pathVariables: ["user-id": "3"])
/// ```
public struct Endpoint<Request: Encodable & Sendable, Response: Decodable & Sendable>: Sendable {
    /// How the request value is sent.
    public enum Encoding: Sendable, Hashable {
        /// As a JSON body (`application/json`).
        case json
        /// As query parameters (nested values as `user[name]`, `tags[]`); no body.
        case query
        /// As `application/x-www-form-urlencoded` fields.
        case form
        /// As `multipart/form-data` fields, with the call's files.
        case multipart
    }

    /// The HTTP method.
    public var method: HTTPMethod
    /// The path template, relative to the configuration's base URL.
    public var path: String
    /// How the request value is sent (JSON by default; query for GET, HEAD and DELETE).
    public var encoding: Encoding
    /// Headers every call of this endpoint sends (a call's own headers override them).
    public var headers: HeaderFields
    /// Makes the encoder of request values (dates in ISO 8601 by default).
    public var makeEncoder: @Sendable () -> JSONEncoder
    /// Makes the decoder of responses (dates in ISO 8601 by default).
    public var makeDecoder: @Sendable () -> JSONDecoder

    /// Creates an endpoint.
    ///
    /// ```swift
    /// let list = Endpoint<Nothing, [Post]>(.get, "/users/:userID/posts")
    /// ```
    ///
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - path: The path template (`:name`, `{name}` or `{{name}}` variables).
    ///   - encoding: How the request value is sent; by default query parameters for GET, HEAD
    ///     and DELETE, JSON otherwise.
    ///   - headers: Headers sent with every call.
    public init(_ method: HTTPMethod, _ path: String, encoding: Encoding? = nil, headers: HeaderFields = HeaderFields()) {
        self.method = method
        self.path = path
        switch method {
        case .get, .head, .delete: self.encoding = encoding ?? .query
        default: self.encoding = encoding ?? .json
        }
        self.headers = headers
        self.makeEncoder = {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            return encoder
        }
        self.makeDecoder = {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return decoder
        }
    }

    /// The variable names of ``path``, in order.
    ///
    /// ```swift
    /// Endpoint<Nothing, Nothing>(.get, "/users/{{user-id}}/posts/:postID").variables   // ["user-id", "postID"]
    /// ```
    public var variables: [String] { EndpointPath.parse(path).compactMap(\.variable) }
}

/// "No value": the request of an endpoint that sends nothing, or the response of one that
/// answers nothing (RestingKit's `Nothing`). Decoding it accepts any body, or none.
///
/// ```swift
/// let delete = Endpoint<Nothing, Nothing>(.delete, "/posts/:id")
/// try await client.perform(delete, Nothing(), pathVariables: ["id": "7"])
/// ```
public struct Nothing: Codable, Sendable, Hashable {
    public init() {}
    public init(from decoder: any Decoder) throws {}
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encodeNil()
    }
}

/// A response type with a value for an empty 2xx body: `Optional` (nil) and ``Nothing``.
public protocol EmptyBodyResponse {
    /// The value an empty body decodes to.
    static var emptyBodyValue: Self { get }
}

extension Optional: EmptyBodyResponse {
    public static var emptyBodyValue: Wrapped? { nil }
}

extension Nothing: EmptyBodyResponse {
    public static var emptyBodyValue: Nothing { Nothing() }
}

/// The parts of an endpoint's path template.
enum EndpointPath {
    enum Part: Equatable {
        case text(String)
        case variable(String)

        var variable: String? {
            if case .variable(let name) = self { return name }
            return nil
        }
    }

    static func isNameCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_" || character == "-"
    }

    /// Splits `path` into text and variables: `{{name}}`, `{name}`, and `:name` after a `/`.
    static func parse(_ path: String) -> [Part] {
        var parts: [Part] = []
        var text = ""
        var index = path.startIndex
        func flush() {
            if !text.isEmpty { parts.append(.text(text)) }
            text = ""
        }
        while index < path.endIndex {
            let character = path[index]
            if character == "{" {
                let double = path[index...].hasPrefix("{{")
                let nameStart = path.index(index, offsetBy: double ? 2 : 1)
                var nameEnd = nameStart
                while nameEnd < path.endIndex, isNameCharacter(path[nameEnd]) { nameEnd = path.index(after: nameEnd) }
                let close = double ? "}}" : "}"
                if nameEnd > nameStart, path[nameEnd...].hasPrefix(close) {
                    flush()
                    parts.append(.variable(String(path[nameStart ..< nameEnd])))
                    index = path.index(nameEnd, offsetBy: close.count)
                    continue
                }
            } else if character == ":", index == path.startIndex || path[path.index(before: index)] == "/" {
                let nameStart = path.index(after: index)
                var nameEnd = nameStart
                while nameEnd < path.endIndex, isNameCharacter(path[nameEnd]) { nameEnd = path.index(after: nameEnd) }
                if nameEnd > nameStart {
                    flush()
                    parts.append(.variable(String(path[nameStart ..< nameEnd])))
                    index = nameEnd
                    continue
                }
            }
            text.append(character)
            index = path.index(after: index)
        }
        flush()
        return parts
    }

    /// The path with every variable replaced by its value, percent-encoded as a path segment.
    static func fill(_ path: String, values: [String: String]) throws -> String {
        var result = ""
        for part in parse(path) {
            switch part {
            case .text(let text): result += text
            case .variable(let name):
                guard let value = values[name] else {
                    throw ClientError(.invalidRequest, "missing value for variable '\(name)' of \(path)")
                }
                PercentEncoding.encode(value, allowed: .pathSegment, into: &result)
            }
        }
        return result
    }
}

extension Parameter {
    /// A parameter holding a JSON value, objects and arrays as nested parameters (for form,
    /// query and multipart encodings).
    init(json: JSONValue) {
        switch json {
        case .array(let items): self = .array(items.map(Parameter.init(json:)))
        case .object(let object): self = .object(Dictionary(object.map { ($0.key, Parameter(json: $0.value)) }, uniquingKeysWith: { $1 }))
        default: self = .value(json)
        }
    }
}
