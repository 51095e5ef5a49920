/// A call that failed: an HTTP status above 299, a network failure, a body that is not what the
/// route needs. A failed call never changes the store.
///
/// ```swift
/// do {
///     try await client.call("/posts", method: .post, params: ["title": ""])
/// } catch let error as ClientError where error.code == .status {
///     print(error.status ?? 0, error.fieldErrors["title"] ?? [])   // 422 ["can't be blank"]
/// }
/// ```
public struct ClientError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let rawValue: String
        public var description: String { rawValue }

        /// The server answered with a status above 299.
        public static let status = Code(rawValue: "status")
        /// The connection failed (refused, reset, dropped).
        public static let connection = Code(rawValue: "connection")
        /// The request took longer than its timeout.
        public static let timeout = Code(rawValue: "timeout")
        /// The route needs a body and the response had none.
        public static let emptyBody = Code(rawValue: "emptyBody")
        /// The body was larger than allowed.
        public static let bodyTooLarge = Code(rawValue: "bodyTooLarge")
        /// No route, a missing path variable, a bad parameter or base URL.
        public static let invalidRequest = Code(rawValue: "invalidRequest")
        /// The call was cancelled.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The server's answers cannot make a consistent sync: a 304 for a page never
        /// recorded, or page links that lead back to a page already fetched.
        public static let invalidResponse = Code(rawValue: "invalidResponse")
    }

    public var code: Code
    public var message: String
    /// The HTTP status, for `.status`.
    public var status: Int?
    /// The response headers, when there was a response.
    public var headers: HeaderFields
    /// The response body (up to 1 MiB), when there was one.
    public var body: [UInt8]
    /// Field validation errors from `{"errors": {...}}` or `{"post": {"errors": {...}}}`.
    public var fieldErrors: [String: [String]]
    /// The method and URL of the request.
    public var request: String?

    public init(_ code: Code, _ message: String, status: Int? = nil, headers: HeaderFields = HeaderFields(),
                body: [UInt8] = [], fieldErrors: [String: [String]] = [:], request: String? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.headers = headers
        self.body = body
        self.fieldErrors = fieldErrors
        self.request = request
    }

    /// The body as text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// `true` when the server named fields it refused (ApiModel's `hasErrors`).
    ///
    /// ```swift
    /// if error.hasErrors { form.show(error.errorMessages) }
    /// ```
    public var hasErrors: Bool { !fieldErrors.isEmpty }

    /// Every field error as a sentence, field name first, fields in alphabetical order and each
    /// field's messages in the server's order (ApiModel's `errorMessages`): `["title can't be blank"]`.
    ///
    /// ```swift
    /// print(error.errorMessages.joined(separator: "\n"))
    /// ```
    public var errorMessages: [String] {
        fieldErrors.keys.sorted().flatMap { field in (fieldErrors[field] ?? []).map { "\(field) \($0)" } }
    }

    /// The messages of one field (empty when it has none).
    ///
    /// ```swift
    /// let titleErrors = error.errorMessages(for: "title")   // ["can't be blank"]
    /// ```
    ///
    /// - Parameter field: The field's JSON key.
    /// - Returns: Its messages, in the server's order.
    public func errorMessages(for field: String) -> [String] { fieldErrors[field] ?? [] }

    public var description: String {
        var text = request.map { "\($0): " } ?? ""
        text += message
        if !fieldErrors.isEmpty {
            text += " (" + fieldErrors.keys.sorted().map { "\($0): \(fieldErrors[$0]?.joined(separator: ", ") ?? "")" }
                .joined(separator: "; ") + ")"
        }
        return text
    }

    /// Reads field errors from a JSON error body: `{"errors": {"field": ["message"]}}`, or the same
    /// inside an entity namespace (`{"post": {"errors": {...}}}`); a single string per field is accepted.
    static func fieldErrors(in body: [UInt8]) -> [String: [String]] {
        guard let json = try? JSONValue(parsing: body), case .object(let root) = json else { return [:] }
        var candidates: [JSONValue] = []
        if let errors = root["errors"] { candidates.append(errors) }
        for (_, value) in root { if let errors = value["errors"] { candidates.append(errors) } }
        for candidate in candidates {
            guard case .object(let fields) = candidate else { continue }
            var result: [String: [String]] = [:]
            for (field, messages) in fields {
                switch messages {
                case .array(let items): result[field] = items.compactMap(\.stringValue)
                case .string(let message): result[field] = [message]
                default: continue
                }
            }
            if !result.isEmpty { return result }
        }
        return [:]
    }
}
