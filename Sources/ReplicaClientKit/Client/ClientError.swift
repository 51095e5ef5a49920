import ReplicaCore

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
public struct ClientError: Error, SourceError, Sendable, CustomStringConvertible {
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
        /// A next page link or a redirect leads to another origin than the request's, one
        /// ``ClientConfiguration/allowedHosts`` does not admit: it was not followed.
        public static let crossOrigin = Code(rawValue: "crossOrigin")
        /// Redirects that loop, or more of them than ``ClientConfiguration/maxRedirects``.
        public static let redirect = Code(rawValue: "redirect")
        /// The last page a sync read says the collection goes on (`"has_more": true`, a next
        /// cursor, a `links.next`, a total above what was read), but the route's pagination found
        /// no page after it: nothing was written (``ClientConfiguration/unfollowedPages``).
        public static let unfollowedPages = Code(rawValue: "unfollowedPages")
        /// The API's rate limit is used up (a 403 or 429 whose rate-limit headers leave no
        /// request) until a reset further off than ``RetryInterceptor/maxRetryAfter`` allows
        /// waiting; the message names when it resets and ``ClientError/retryAfter`` the wait.
        public static let rateLimited = Code(rawValue: "rateLimited")
        /// The server's answer is not what the call needs: a body that is not JSON (an HTML
        /// page; its content type is named), a body that does not decode, a 304 for a page
        /// never recorded, or page links that lead back to a page already fetched.
        public static let invalidResponse = Code(rawValue: "invalidResponse")
    }

    public var code: Code
    /// What failed: `HTTP 422` for a status, or a sentence for other codes.
    public var message: String
    /// The HTTP status, for `.status`.
    public var status: Int?
    /// The response headers, when there was a response.
    public var headers: HeaderFields
    /// The response body (up to 1 MiB), when there was one.
    public var body: [UInt8]
    /// Field validation errors, field → messages in the server's order: from `{"errors": {...}}`,
    /// `{"post": {"errors": {...}}}`, and the `field` (or `pointer`) entries of an `errors` array
    /// (a GitHub entry with only a `code` gives the code).
    public var fieldErrors: [String: [String]]
    /// The message of the error body: `message`, RFC 9457's `title` and `detail`, or
    /// `error.message`; `nil` when the body has none.
    public var serverMessage: String?
    /// The entries of the error body's `errors`, in the server's order (fields, codes, resources and
    /// messages that ``fieldErrors`` flattens).
    public var details: [Detail]
    /// The method and URL of the request.
    public var request: String?

    /// One entry of an error body's `errors`: a field the server refused, or a problem of its own.
    ///
    /// ```swift
    /// // {"message": "Validation Failed", "errors": [{"resource": "Label", "field": "color", "code": "invalid"}]}
    /// error.details.first?.description   // "color invalid (Label)"
    /// ```
    public struct Detail: Sendable, Hashable, CustomStringConvertible {
        /// The field (`field`, `name`, a `pointer` without its leading `#/`, or `parameter`).
        public var field: String?
        /// The message (`message` or `detail`).
        public var message: String?
        /// The machine-readable code (GitHub's `missing_field`, `invalid`, `custom`).
        public var code: String?
        /// The resource the field belongs to (GitHub's `resource`).
        public var resource: String?

        /// Creates an entry.
        ///
        /// ```swift
        /// ClientError.Detail(field: "title", code: "missing_field", resource: "Issue")
        /// ```
        public init(field: String? = nil, message: String? = nil, code: String? = nil, resource: String? = nil) {
            self.field = field
            self.message = message
            self.code = code
            self.resource = resource
        }

        /// The field, then the message (or else the code), then the resource: `title missing_field (Issue)`;
        /// the field is left out when the message starts with it (`title is too long`).
        public var description: String { Self.describe([self]) }

        /// Entries of one field and resource as one phrase: `name can't be blank, is too short`.
        static func describe(_ entries: [Detail]) -> String {
            guard let first = entries.first else { return "" }
            let texts = entries.compactMap { $0.message ?? $0.code }
            var parts: [String] = []
            if let field = first.field, !(texts.count == 1 && texts[0].lowercased().hasPrefix(field.lowercased() + " ")) {
                parts.append(field)
            }
            if !texts.isEmpty { parts.append(texts.joined(separator: ", ")) }
            if let resource = first.resource { parts.append("(\(resource))") }
            return parts.joined(separator: " ")
        }

        /// `details` as phrases, consecutive entries of the same field and resource together.
        static func phrases(_ details: [Detail]) -> [String] {
            var groups: [[Detail]] = []
            for detail in details {
                if let last = groups.last?.last, detail.field != nil, last.field == detail.field, last.resource == detail.resource {
                    groups[groups.count - 1].append(detail)
                } else {
                    groups.append([detail])
                }
            }
            return groups.map(describe)
        }
    }

    public init(_ code: Code, _ message: String, status: Int? = nil, headers: HeaderFields = HeaderFields(),
                body: [UInt8] = [], fieldErrors: [String: [String]] = [:], request: String? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.headers = headers
        self.body = body
        self.fieldErrors = fieldErrors
        self.serverMessage = nil
        self.details = []
        self.request = request
    }

    /// The error of a response with a status above 299, with the message and field errors of its
    /// body when it has a known shape: a top-level `message` with an `errors` array of objects
    /// (`field`, `code`, `message`: GitHub's), `{"errors": {"field": ["message"]}}` (Rails,
    /// ApiModel, also inside an entity namespace), RFC 9457 problem details (`title`, `detail`,
    /// `errors` of `detail` and `pointer`), `{"error": {"message": ...}}`, `{"errors": ["message"]}`.
    ///
    /// ```swift
    /// let error = ClientError(status: 422, body: Array(#"{"errors": {"name": ["can't be blank"]}}"#.utf8))
    /// error.description   // "HTTP 422: name can't be blank"
    /// ```
    ///
    /// - Parameters:
    ///   - status: The HTTP status.
    ///   - headers: The response headers.
    ///   - body: The response body (the first MiB).
    ///   - request: The method and URL of the request.
    public init(status: Int, headers: HeaderFields = HeaderFields(), body: [UInt8], request: String? = nil) {
        // A used-up rate limit says until when (GitHub answers 403 for it).
        let limit = ClientResponse(status: status, headers: headers).exhaustedRateLimit
        self.init(.status, "HTTP \(status)" + (limit.map { " (rate limit used up: \($0))" } ?? ""), status: status, headers: headers,
                  body: body, request: request)
        if let parsed = ErrorBody(parsing: body) {
            serverMessage = parsed.message
            details = parsed.details
            fieldErrors = parsed.fieldErrors
        }
    }

    /// How long the server asked the client to wait before trying again: a 429's or 503's
    /// `Retry-After` (seconds or an HTTP-date), at most an hour; `nil` without one.
    ///
    /// ```swift
    /// if let wait = error.retryAfter { try await Task.sleep(for: wait) }
    /// ```
    public var retryAfter: Duration? {
        guard code == .status || code == .rateLimited, let status else { return nil }
        if let value = headers["Retry-After"] { return RetryAfter.delay(value, maximum: .seconds(3600)) }
        // A used-up rate limit: not before its reset.
        guard let limit = ClientResponse(status: status, headers: headers).exhaustedRateLimit, let wait = limit.wait() else { return nil }
        return min(wait, .seconds(3600))
    }

    /// The rate limit the response's headers say is used up (a 403 or 429 leaving no request), or `nil`.
    ///
    /// ```swift
    /// if let limit = error.rateLimit { print("rate limited until", limit.reset ?? Date()) }
    /// ```
    public var rateLimit: RateLimitStatus? {
        guard let status else { return nil }
        return ClientResponse(status: status, headers: headers).exhaustedRateLimit
    }

    /// A call given up because its rate limit resets later than `waitAllowed` from now.
    static func rateLimited(_ limit: RateLimitStatus, waitAllowed: Duration, status: Int, headers: HeaderFields,
                            body: [UInt8], request: String) -> ClientError {
        let seconds = limit.wait().map { Int(($0 / .seconds(1)).rounded(.up)) } ?? 0
        let allowed = waitAllowed / .seconds(1)
        let allowedText = allowed == allowed.rounded() ? String(Int(allowed)) : String(allowed)
        var error = ClientError(.rateLimited, "HTTP \(status): the rate limit is used up (\(limit)), in \(seconds) s: later than "
                                + "the longest wait of \(allowedText) s (RetryInterceptor.maxRetryAfter, replica sync --max-wait)",
                                status: status, headers: headers, body: body, request: request)
        error.serverMessage = ErrorBody(parsing: body)?.message
        return error
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

    /// The request, what failed, and for a status the server's message and field errors (at most
    /// ten), or else the body's first 500 bytes:
    /// `GET https://api.github.com/repos/o/r/labels: HTTP 422 Validation Failed: color invalid (Label)`.
    public var description: String {
        var text = request.map { "\($0): " } ?? ""
        text += message
        // An entry that only repeats the message (Stripe's one error, with its field) is not listed again.
        var entries = Detail.phrases(details.filter { $0.message == nil || $0.message != serverMessage })
        if details.isEmpty {
            entries = fieldErrors.keys.sorted().map { "\($0) \(fieldErrors[$0]?.joined(separator: ", ") ?? "")" }
        }
        if entries.count > 10 { entries = entries.prefix(10) + ["and \(entries.count - 10) more"] }
        let list = ErrorBody.printable(entries.joined(separator: "; "))
        if var summary = serverMessage.map(ErrorBody.printable), !summary.isEmpty {
            if !list.isEmpty {
                if summary.hasSuffix(".") { summary.removeLast() }
                summary += ": " + list
            }
            return text + " " + summary
        }
        if !list.isEmpty { return text + ": " + list }
        guard code == .status else { return text }
        let excerpt = ErrorBody.excerpt(body)
        return excerpt.isEmpty ? text : text + ": " + excerpt
    }
}
