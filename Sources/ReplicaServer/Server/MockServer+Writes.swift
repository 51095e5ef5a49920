import Foundation

/// What a mock server does around a routed request's action for clients that write: `Idempotency-Key`
/// (Stripe's idempotent requests) and `If-Match` against each object's `ETag`.
///
/// - A `POST`, `PUT`, `PATCH` or `DELETE` with `Idempotency-Key` runs its action once: the first response
///   (status, headers, body) is kept for ``MockServerOptions/idempotencyRetention`` and answered again,
///   with `Idempotent-Replayed: true`, to a repeat with the same method, path and body; the key with
///   another method, path or body answers 422; a repeat while the first is being handled answers 409.
///   Answers that never reached the action (injected faults, 429s, an outage, a route not found, an
///   unreadable body) are not kept.
/// - Every object's `ETag` is the hash of its `GET`'s body: `GET` answers it, a create or update answers
///   the new one; `PUT`, `PATCH` or `DELETE` with an `If-Match` naming none of the object's current tag
///   (`*` matches any object) answers 412 and changes nothing, as it does for a missing object. Updates and
///   deletes of one object take turns, so that no write comes between another's check and its write.
extension MockServer {
    /// The `Idempotency-Key` of a write, nil for none.
    /// - Throws: 400 for a key longer than 255 characters (Stripe's limit).
    static func idempotencyKey(_ request: MockRequest) throws -> String? {
        guard ["POST", "PUT", "PATCH", "DELETE"].contains(request.method),
              let key = request.header("Idempotency-Key"), !key.isEmpty else { return nil }
        guard key.count <= 255 else {
            throw MockHTTPError.badRequest("Idempotency-Key is longer than 255 characters", code: "invalidIdempotencyKey")
        }
        return key
    }

    /// Runs `action` once per `Idempotency-Key`: the first response is kept and answered to repeats.
    /// - Returns: the response and whether it is a replay.
    func idempotent(_ key: String, request: MockRequest, path: String,
                    _ action: () async throws -> MockResponse) async throws -> (MockResponse, replayed: Bool) {
        let fingerprint = MockIdempotencyCache.Fingerprint(method: request.method, path: path,
                                                           body: request.body?.serialized() ?? "")
        switch idempotency.begin(key, fingerprint) {
        case .replay(var kept):
            kept.headers.append((name: "Idempotent-Replayed", value: "true"))
            return (kept, true)
        case .reused(let first):
            let message = "Keys for idempotent requests can only be used with the same parameters they were first used with: "
                + "Idempotency-Key '\(key)' was used for \(first.method) \(first.path)"
                + (first.method == request.method && first.path == path ? " with another body" : "")
            let style = options.validationErrors
            let error = MockHTTPError(status: 422, code: "idempotencyKeyReused", message: message, fieldErrors: [("base", [message])])
            return (MockValidationErrors(status: 422, namespaced: style.namespaced, shape: style.shape)
                .answer(error, resource: request.resource.name), false)
        case .inFlight:
            throw MockHTTPError(status: 409, code: "idempotencyKeyInUse",
                                message: "a request with Idempotency-Key '\(key)' is still being handled; retry once it is answered")
        case .proceed:
            break
        }
        let response: MockResponse
        do {
            response = try await action()
        } catch {
            guard !Task.isCancelled else {
                idempotency.abandon(key)
                throw error
            }
            response = answer(to: error, resource: request.resource.name)
        }
        idempotency.finish(key, with: response)
        return (response, false)
    }

    /// An error thrown while handling a request, as its answer: field errors in the configured style
    /// (``MockServerOptions/validationErrors``), other HTTP errors as they are, anything else a 500.
    func answer(to error: any Error, resource: String?) -> MockResponse {
        switch error {
        case let error as MockHTTPError:
            return options.validationErrors.answer(error, resource: resource)
        case let error as MockServerError:
            return Self.error(MockHTTPError(status: 500, code: error.code.rawValue, message: error.message))
        default:
            return Self.error(MockHTTPError(status: 500, code: "internalError", message: String(describing: error)))
        }
    }

    /// The `ETag` of an object: its version, quoted, for a resource that numbers them
    /// (``MockResource/versionProperty``); else the hash of the body a `GET` of it answers, quoted.
    static func tag(of object: JSONObject, _ request: MockRequest) -> String {
        if let property = request.resource.versionProperty, let version = object[property], !version.isNull {
            return "\"" + (version.stringValue ?? version.serialized()) + "\""
        }
        let body = request.serializer.serialize(object: request.resource.wire(object), of: request.resource)
        return "\"" + fingerprint(body.serializedBytes()) + "\""
    }

    /// Checks an update's or delete's `If-Match` against the object's current `ETag`.
    /// - Throws: 412 when the object is missing or its tag is not among those named (`*` names any).
    func checkPrecondition(_ request: MockRequest) async throws {
        guard request.action == .update || request.action == .destroy, let condition = request.header("If-Match"),
              let id = request.id else { return }
        let described = "\(request.resource.name) \(id.stringValue ?? id.serialized())"
        guard let current = try await options.store.object(request.resource, id: id) else {
            throw MockHTTPError(status: 412, code: "preconditionFailed", message: "If-Match: no \(described) to match")
        }
        let tag = Self.tag(of: current, request)
        let named = condition.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard named.contains("*") || named.contains(tag) else {
            throw MockHTTPError(status: 412, code: "preconditionFailed",
                                message: "If-Match \(condition) does not match \(described), whose ETag is \(tag)")
        }
    }

    /// A create's or update's answer with the new object's `ETag` (the hash of its body), unless it has one
    /// (a resource that numbers versions answers its version, ``MockCRUD``).
    static func taggingWrite(_ response: MockResponse, action: MockAction?) -> MockResponse {
        guard action == .create || action == .update, response.status == 200 || response.status == 201,
              !response.headers.contains(where: { $0.name.lowercased() == "etag" }) else { return response }
        var response = response
        if let bytes = response.bodyBytes() {
            response.headers.append((name: "ETag", value: "\"" + fingerprint(bytes) + "\""))
        }
        return response
    }
}
