/// An error answered as an HTTP status with a JSON body; controllers and stores throw it.
///
/// Field errors (422) are answered as `{"errors": {"numberOfKids": ["must be an integer"]}}`; every other
/// status as `{"error": {"status": 404, "code": "notFound", "message": "no people with id 7"}}`.
///
/// ```swift
/// throw MockHTTPError(status: 409, code: "conflict", message: "people 3 already exists")
/// ```
public struct MockHTTPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status code.
    public var status: Int
    /// A short machine-readable code (`notFound`, `invalidJSON`, `validation`…).
    public var code: String
    /// What was wrong and where.
    public var message: String
    /// Field errors (property → messages), in order; non-empty for 422 validation errors.
    public var fieldErrors: [(String, [String])] {
        get { fieldErrorList.map { ($0.field, $0.messages) } }
        set { fieldErrorList = newValue.map { FieldError(field: $0.0, messages: $0.1) } }
    }
    private var fieldErrorList: [FieldError] = []
    /// The methods a 405 names in its `Allow` header.
    public var allow: [String] = []

    /// Whether the answer closes the connection (`Connection: close`): for a request whose body is not
    /// read to its end (413 for a body over the limit, 408 for one too slow).
    var closesConnection = false

    /// The headers the error response carries (`Allow` for 405, `Connection: close`).
    var headers: [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = allow.isEmpty && status != 405 ? [] : [(name: "Allow", value: allow.joined(separator: ", "))]
        if closesConnection { headers.append((name: "Connection", value: "close")) }
        return headers
    }

    private struct FieldError: Sendable, Hashable {
        var field: String
        var messages: [String]
    }

    /// Creates an error.
    ///
    /// ```swift
    /// MockHTTPError(status: 403, code: "forbidden", message: "read-only in this test")
    /// ```
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - code: a short machine-readable code.
    ///   - message: a readable message.
    ///   - fieldErrors: field errors for a 422.
    public init(status: Int, code: String, message: String, fieldErrors: [(String, [String])] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.fieldErrors = fieldErrors
    }

    public var description: String { "HTTP \(status) \(code): \(message)" }

    /// The JSON body of this error.
    public var body: JSONValue {
        if !fieldErrorList.isEmpty {
            return .object(["errors": .object(JSONObject(fieldErrorList.map { ($0.field, .array($0.messages.map(JSONValue.string))) }))])
        }
        return .object(["error": .object(["status": .int(Int64(status)), "code": .string(code), "message": .string(message)])])
    }

    /// 404 for an unknown route, resource or id.
    ///
    /// ```swift
    /// throw MockHTTPError.notFound("no people with id 7")
    /// ```
    /// - Parameters:
    ///   - message: what was not found.
    /// - Returns: the error.
    public static func notFound(_ message: String) -> MockHTTPError {
        MockHTTPError(status: 404, code: "notFound", message: message)
    }

    /// 400 for a request the server cannot read (malformed JSON, bad query parameter).
    ///
    /// ```swift
    /// throw MockHTTPError.badRequest("_limit must be a positive integer")
    /// ```
    /// - Parameters:
    ///   - message: what was wrong.
    ///   - code: the machine-readable code, `badRequest` by default.
    /// - Returns: the error.
    public static func badRequest(_ message: String, code: String = "badRequest") -> MockHTTPError {
        MockHTTPError(status: 400, code: code, message: message)
    }

    /// 422 with field errors.
    ///
    /// ```swift
    /// throw MockHTTPError.unprocessable([("numberOfKids", ["must be an integer"])])
    /// ```
    /// - Parameters:
    ///   - errors: property → messages, in order.
    /// - Returns: the error.
    public static func unprocessable(_ errors: [(String, [String])]) -> MockHTTPError {
        let text = errors.map { "\($0.0) \($0.1.joined(separator: ", "))" }.joined(separator: "; ")
        return MockHTTPError(status: 422, code: "validation", message: text, fieldErrors: errors)
    }

    /// 422 with field errors given as a dictionary literal.
    static func unprocessable(_ errors: KeyValuePairs<String, [String]>) -> MockHTTPError {
        unprocessable(errors.map { ($0.key, $0.value) })
    }

    public static func == (lhs: MockHTTPError, rhs: MockHTTPError) -> Bool {
        lhs.status == rhs.status && lhs.code == rhs.code && lhs.message == rhs.message && lhs.fieldErrorList == rhs.fieldErrorList
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(code)
        hasher.combine(message)
    }
}

/// An error of the mock server itself: it could not start, a resource definition is invalid, a store failed.
///
/// ```swift
/// do { _ = try await MockServer.start(resources: [], options: .init(port: 80)) }
/// catch let error as MockServerError where error.code == .bindFailed { print(error.message) }
/// ```
public struct MockServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        /// Creates a code.
        ///
        /// ```swift
        /// let code = MockServerError.Code(rawValue: "bindFailed")
        /// ```
        /// - Parameters:
        ///   - rawValue: the code's name.
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The server could not bind its address.
        public static let bindFailed = Code(rawValue: "bindFailed")
        /// `start()` on a running server, or an operation that needs a running server on a stopped one.
        public static let invalidState = Code(rawValue: "invalidState")
        /// A resource definition is invalid (empty or duplicate name, unknown parent, bad property name).
        public static let invalidResource = Code(rawValue: "invalidResource")
        /// No resource has that name.
        public static let unknownResource = Code(rawValue: "unknownResource")
        /// The store failed (SQLite error, conflict).
        public static let storeFailed = Code(rawValue: "storeFailed")
        /// Data to load is not JSON of the expected shape.
        public static let invalidData = Code(rawValue: "invalidData")
    }

    /// The kind of failure.
    public let code: Code
    /// What was wrong and where.
    public let message: String

    /// Creates an error.
    ///
    /// ```swift
    /// MockServerError(code: .unknownResource, message: "no resource 'pets'")
    /// ```
    /// - Parameters:
    ///   - code: the kind of failure.
    ///   - message: a readable message.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    /// A store's table for `resource` keyed by other columns than the resource's key (the key renamed,
    /// or made composite, since the table was made): `.storeFailed` naming both keys and the store.
    ///
    /// ```swift
    /// throw MockServerError.keyMismatch(refs, stored: ["id"], in: "mock.sqlite")
    /// ```
    /// - Parameters:
    ///   - resource: the resource.
    ///   - stored: the table's primary-key columns.
    ///   - store: the store's file or database.
    /// - Returns: the error.
    package static func keyMismatch(_ resource: MockResource, stored: [String], in store: String) -> MockServerError {
        MockServerError(code: .storeFailed, message: "\(store): table \(resource.name) is keyed by (\(stored.joined(separator: ", "))), "
                        + "the resource by (\(resource.primaryKey.parts.map(\.name).joined(separator: ", "))): "
                        + "drop the table (MockStore.dropResource(_:) drops it with its objects) or use another store")
    }
}
