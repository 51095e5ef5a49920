import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension MockServer {
    /// What to do with the connection once a request is handled.
    private enum Outcome {
        /// An answer, and the body fault chosen for it (applied only if it has a 2xx JSON body); for a read,
        /// the resource's modification time taken before the store was read.
        case answer(MockResponse, resource: String?, bodyFault: MockFault.Kind? = nil, modified: MockModification? = nil)
        case drop
    }

    /// Answers one request: faults, body, routing, controller, conditional GET, latency, log.
    func respond(to request: Request, channel: any Channel) async -> Response {
        let started = ContinuousClock.now
        let method = request.method.rawValue
        let logPath = request.uri.query.map { request.uri.path + "?" + $0 } ?? request.uri.path
        // The control routes answer whether the API is up or down; while it is down, nothing else does.
        if let control = controlResponse(request) {
            options.requestLog?(MockRequestLogEntry(method: method, path: logPath, status: control.status, duration: started.duration(to: .now)))
            return Self.httpResponse(control, headOnly: method == "HEAD")
        }
        switch outage {
        case .unavailable(let retryAfter)?:
            options.requestLog?(MockRequestLogEntry(method: method, path: logPath, status: 503, duration: started.duration(to: .now)))
            return Self.httpResponse(Self.unavailable(retryAfter: retryAfter), headOnly: method == "HEAD")
        case .dropConnection?:
            options.requestLog?(MockRequestLogEntry(method: method, path: logPath, status: 0, duration: started.duration(to: .now)))
            channel.close(mode: .all, promise: nil)
            return Response(status: .internalServerError)
        case nil:
            break
        }
        if let events = eventStream(request) {
            options.requestLog?(MockRequestLogEntry(method: "GET", path: request.uri.path, status: 200, duration: started.duration(to: .now)))
            return events
        }
        let snapshot = registry.withLock { $0 }
        var rateHeaders: [(name: String, value: String)] = []
        if let rateLimiter {
            switch rateLimiter.take() {
            case .refused(let reset):
                options.requestLog?(MockRequestLogEntry(method: method, path: logPath, status: 429, duration: started.duration(to: .now)))
                return Self.httpResponse(rateLimiter.refusal(reset: reset), headOnly: method == "HEAD")
            case .allowed(let remaining, let reset):
                rateHeaders = rateLimiter.headers(remaining: remaining, reset: reset)
            }
        }
        var outcome = await handle(request, method: method, snapshot: snapshot)
        if case .answer(let response, let resource, _, _) = outcome, let resource, response.status < 400,
           ["POST", "PUT", "PATCH", "DELETE"].contains(method) {
            touch(resource)
            // Nested to-one objects were written to their resources too.
            if method != "DELETE" { for relation in snapshot.resources[resource]?.toOne ?? [] { touch(relation.resource) } }
        }
        if case .answer(let response, let resource, let bodyFault, let modified) = outcome, method == "GET" || method == "HEAD" {
            outcome = .answer(conditional(response, request: request, modified: modified ?? MockModification(time: startedAt)),
                              resource: resource, bodyFault: bodyFault)
        }
        let latency = snapshot.conditions.randomLatency()
        if let latency { try? await Task.sleep(for: latency) }
        let status: Int
        var answer: Response
        switch outcome {
        case .drop:
            status = 0
            channel.close(mode: .all, promise: nil)
            answer = Response(status: .internalServerError)
        case .answer(let response, _, let bodyFault, _):
            status = response.status
            answer = Self.httpResponse(response, headOnly: method == "HEAD")
            if let bodyFault, method != "HEAD", (200..<300).contains(response.status), let body = response.body {
                answer = faulty(answer, body: body, fault: bodyFault, channel: channel)
            }
            for (name, value) in rateHeaders {
                if let field = HTTPField.Name(name) { answer.headers.append(HTTPField(name: field, value: value)) }
            }
            if let latency, let name = HTTPField.Name("X-Mock-Latency") {
                // The delay chosen for this response, in milliseconds, so clients and tests can check it.
                let milliseconds = Double(latency.components.seconds) * 1000 + Double(latency.components.attoseconds) / 1e15
                answer.headers[name] = String(format: "%.3f", milliseconds)
            }
        }
        options.requestLog?(MockRequestLogEntry(method: method, path: logPath, status: status,
                                                duration: started.duration(to: .now)))
        return answer
    }

    private func handle(_ request: Request, method: String, snapshot: Registry) async -> Outcome {
        guard var segments = MockPath.segments(request.uri.path),
              let queryItems = MockPath.queryItems(request.uri.query) else {
            return .answer(Self.error(.badRequest("malformed percent-encoding in \(request.uri)", code: "invalidURI")), resource: nil)
        }
        if let format = options.formatExtension, !format.isEmpty, let last = segments.last,
           last.count > format.count, last.hasSuffix(format) {
            segments[segments.count - 1] = String(last.dropLast(format.count))
        }
        let fault = snapshot.conditions.fault(method: method, segments: segments, queryItems: queryItems)
        switch fault {
        case .status(let code)?:
            let error = MockHTTPError(status: code, code: "injectedFault", message: "fault injected for \(method) \(request.uri.path)")
            return .answer(Self.error(error), resource: nil)
        case .dropConnection?:
            return .drop
        case .stall?:
            await stalls.wait(limit: options.stallLimit)
            return .drop
        case .stallBody?, .truncateBody?, .malformedBody?, nil:
            break  // body faults apply once the answer is known
        }
        var resourceName: String?
        do {
            var body: JSONValue?
            var formFields: JSONObject?
            if ["POST", "PUT", "PATCH"].contains(method) { (body, formFields) = try await readBody(request) }
            let routeMethod = method == "HEAD" ? "GET" : method
            var routed = try route(method: routeMethod, segments: segments, snapshot: snapshot)
            resourceName = routed.resource.name
            // Taken before the store is read, so a write the answer misses is always later than its Last-Modified.
            let modified = routeMethod == "GET" ? beginRead(routed.resource.name) : nil
            if let formFields { body = MockFormBody.typed(formFields, for: routed.resource) }
            if routed.isAPIRoute {
                try await resolveAPIKey(&routed, method: method, body: &body, queryItems: queryItems,
                                        serializer: snapshot.serializers[routed.resource.name] ?? options.defaultSerializer)
            }
            let host = request.head.authority ?? "\(options.host):\(port)"
            var mockRequest = MockRequest(
                method: method, path: "/" + segments.joined(separator: "/"), segments: segments, queryItems: queryItems,
                headers: Dictionary(request.headers.map { ($0.name.canonicalName, $0.value) }, uniquingKeysWith: { a, b in a + ", " + b }),
                body: body, resource: routed.resource, action: routed.action, id: routed.id, parent: routed.parent, keyPrefix: routed.keyPrefix,
                scope: routed.scope, store: recordingStore,
                serializer: snapshot.serializers[routed.resource.name] ?? options.defaultSerializer,
                baseURL: "http://\(host)", memberRoute: routed.memberRoute, envelope: routed.envelope,
                changes: changes, resources: snapshot.resources)
            mockRequest.paging = MockPagingSettings(style: routed.pagination ?? routed.resource.pagination ?? options.pagination,
                                                    pageSize: options.pageSize, maxPageSize: options.maxPageSize)
            let controller = snapshot.controllers[routed.resource.name] ?? options.defaultController
            let bodyFault = fault.flatMap { $0.altersBody ? $0 : nil }
            let prepared = mockRequest
            let action = {
                try await self.act(prepared, controller: controller, bodyFault: bodyFault)
            }
            guard let key = try Self.idempotencyKey(prepared) else {
                return .answer(try await action(), resource: routed.resource.name, bodyFault: bodyFault, modified: modified)
            }
            let path = request.uri.query.map { request.uri.path + "?" + $0 } ?? request.uri.path
            let (response, replayed) = try await idempotent(key, request: prepared, path: path, action)
            // A replay changed nothing: no resource to touch.
            return .answer(response, resource: replayed ? nil : routed.resource.name, bodyFault: bodyFault, modified: modified)
        } catch {
            return .answer(answer(to: error, resource: resourceName), resource: nil)
        }
    }

    /// A routed request's action: `If-Match` checked, the controller's answer (the index rendered straight
    /// from the store when it can be), a create's or update's `ETag`. An update or delete holds its object
    /// throughout, so that no other write to it comes between the check and the write.
    private func act(_ request: MockRequest, controller: any MockController, bodyFault: MockFault.Kind?) async throws -> MockResponse {
        if request.action == .update || request.action == .destroy, let id = request.id {
            return try await objectLocks.withObject(request.resource.name + "/" + id.serialized()) {
                try await checkPrecondition(request)
                return try await runAction(request, controller: controller, bodyFault: bodyFault)
            }
        }
        return try await runAction(request, controller: controller, bodyFault: bodyFault)
    }

    private func runAction(_ request: MockRequest, controller: any MockController, bodyFault: MockFault.Kind?) async throws -> MockResponse {
        if Self.rendersIndex(action: request.action, controller: controller, serializer: request.serializer, bodyFault: bodyFault) {
            return try await MockCRUD.index(request, rendering: true)
        }
        guard let answered = try await controller.respond(request) else {
            throw MockHTTPError.notFound("no route for \(request.method) \(request.path)")
        }
        return Self.taggingWrite(answered, action: request.action)
    }

    /// Whether an answer's page goes from the store's rows straight to bytes (``MockPageRenderer``): only an
    /// index by the default controller (``CRUDController``, which hands the body to no one) through the default
    /// serializer (``PassThroughSerializer``, whose bytes the renderer writes) without a body fault (which
    /// reshapes `body`). Any other controller or serializer sees and may change the `JSONValue` body as before.
    static func rendersIndex(action: MockAction?, controller: any MockController, serializer: any MockSerializer,
                             bodyFault: MockFault.Kind?) -> Bool {
        action == .index && bodyFault == nil && controller is CRUDController && serializer is PassThroughSerializer
    }

    /// The key of the object an API route names other than by key: `GET /user/alice` looks `alice` up
    /// (404 when no object has it), `PUT /pet` reads the key from the body (422 when it has none). An
    /// update without a body takes its fields from the query, as `POST /pet/7?name=doggie&status=sold`
    /// does in OpenAPI's pet store.
    private func resolveAPIKey(_ routed: inout Routed, method: String, body: inout JSONValue?,
                               queryItems: [(name: String, value: String)], serializer: any MockSerializer) async throws {
        let resource = routed.resource
        if routed.action == .update, body == nil {
            var fields = JSONObject()
            for item in queryItems where resource.property(named: item.name) != nil { fields[item.name] = .string(item.value) }
            if !fields.isEmpty { body = MockFormBody.typed(fields, for: resource) }
        }
        if let lookup = routed.lookup {
            var query = MockQuery()
            query.filters = lookup.keys.sorted().compactMap { name in lookup[name].map { MockQuery.Filter(property: name, value: $0) } }
            query.limit = 1
            let described = lookup.keys.sorted().map { "\($0) \(lookup[$0]?.stringValue ?? lookup[$0]?.serialized() ?? "")" }
            guard let object = try await options.store.objects(resource, query: query).objects.first,
                  let id = resource.primaryKey.key(of: object) else {
                throw MockHTTPError.notFound("no \(resource.name) with \(described.joined(separator: ", "))")
            }
            routed.id = id
        }
        if routed.keyInBody {
            guard let body else { throw MockHTTPError.badRequest("empty body", code: "emptyBody") }
            guard case .object(let fields) = serializer.deserialize(parameters: body, of: resource),
                  let id = resource.primaryKey.key(of: fields) else {
                let names = resource.primaryKey.parts.map(\.name)
                throw MockHTTPError.unprocessable(names.map { ($0, ["is required in the body of \(method) to name the object"]) })
            }
            routed.id = id
        }
    }

    /// Reads and parses a body within `maxBodySize` — JSON, or form and multipart fields (typed once
    /// the resource is known). A body over the limit is answered 413: one of a declared length (up to 64
    /// times the limit) once drained, so that the client reads the answer cleanly; a chunked one as soon as
    /// it passes the limit, closing the connection. A body not complete within `bodyTimeout` is answered 408
    /// and closes the connection. A form-typed body that is a JSON object or array
    /// (`curl -d '{"name":"john"}'`) is read as JSON.
    private func readBody(_ request: Request) async throws -> (JSONValue?, JSONObject?) {
        let limit = options.maxBodySize
        let drainLimit = max(limit, 1 << 20) * 64
        let declared = request.headers[.contentLength].flatMap { Int($0) }
        if let declared, declared > drainLimit {
            throw Self.tooLarge(limit, closing: true)
        }
        var collected = ByteBuffer()
        var seen = 0
        do {
            for try await chunk in request.body {
                seen += chunk.readableBytes
                if seen > limit && declared == nil { throw Self.tooLarge(limit, closing: true) }
                if seen > drainLimit { throw Self.tooLarge(limit, closing: true) }
                if seen <= limit { collected.writeImmutableBuffer(chunk) }
            }
        } catch let error as MockHTTPError {
            throw error
        } catch let error as MockBodyTimeout {
            var timeout = MockHTTPError(status: 408, code: "bodyTimeout", message: error.description)
            timeout.closesConnection = true
            throw timeout
        } catch {
            throw MockHTTPError.badRequest("the request body could not be read: \(error)", code: "invalidBody")
        }
        if seen > limit { throw Self.tooLarge(limit) }
        guard collected.readableBytes > 0 else { return (nil, nil) }
        let bytes = Array(buffer: collected)
        let contentType = request.headers[.contentType]
        if let json = MockFormBody.mislabelledJSON(bytes, contentType: contentType) { return (json, nil) }
        if let fields = try MockFormBody.parse(bytes, contentType: contentType) { return (nil, fields) }
        do {
            return (try collected.withUnsafeReadableBytes { try JSONValue(parsing: $0) }, nil)
        } catch let error as JSONParseError {
            throw MockHTTPError.badRequest("malformed JSON: \(error.message) at line \(error.line), column \(error.column)",
                                           code: "invalidJSON")
        }
    }

    private static func tooLarge(_ limit: Int, closing: Bool = false) -> MockHTTPError {
        var error = MockHTTPError(status: 413, code: "bodyTooLarge",
                                  message: "the request body is larger than \(limit) bytes (the body limit, --max-body)")
        error.closesConnection = closing
        return error
    }

    /// Adds `ETag` and `Last-Modified` to a 200 GET and turns it into 304 when the client's copy is current.
    /// `If-Modified-Since` gets 304 only when no write can have followed the copy within its second.
    /// An answer that has its own `ETag` (an object's version, ``MockResource/versionProperty``) keeps it.
    private func conditional(_ response: MockResponse, request: Request, modified: MockModification) -> MockResponse {
        var response = response
        let tag: String
        if response.status == 200, let own = response.headers.first(where: { $0.name.lowercased() == "etag" })?.value {
            tag = own
        } else if response.status == 200, let rendered = response.rendered {
            tag = "\"" + rendered.fingerprint + "\""
        } else if response.status == 200, let bytes = response.bodyBytes() {
            tag = "\"" + Self.fingerprint(bytes) + "\""
        } else {
            return response
        }
        if !response.headers.contains(where: { $0.name.lowercased() == "etag" }) { response.headers.append((name: "ETag", value: tag)) }
        response.headers.append((name: "Last-Modified", value: MockDates.httpDate(modified.second)))
        var notModified = false
        if let match = request.headers[.ifNoneMatch] {
            notModified = match.split(separator: ",").contains { candidate in
                var candidate = candidate.trimmingCharacters(in: .whitespaces)
                if candidate.hasPrefix("W/") { candidate.removeFirst(2) }
                return candidate == tag || candidate == "*"
            }
        } else if let since = request.headers[.ifModifiedSince].flatMap(MockDates.parseHTTPDate) {
            notModified = modified.isUnchanged(since: since)
        }
        if notModified {
            response.status = 304
            response.body = nil
            response.rendered = nil
        }
        return response
    }

    /// The body's ``MockFingerprint``, in hex: the ETag's value.
    static func fingerprint(_ bytes: [UInt8]) -> String {
        var hash = MockFingerprint()
        hash.add(bytes)
        return hash.hex
    }

    static func error(_ error: MockHTTPError) -> MockResponse {
        MockResponse(status: error.status, headers: error.headers, body: error.body)
    }

    static func httpResponse(_ response: MockResponse, headOnly: Bool) -> Response {
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
        }
        let status = HTTPResponse.Status(code: response.status)
        var response = response
        if response.status != 204, response.status != 304, let rendered = response.rendered {
            if fields[.contentType] == nil { fields[.contentType] = "application/json; charset=utf-8" }
            if headOnly {
                fields[.contentLength] = String(rendered.count + 1)
                return Response(status: status, headers: fields)
            }
            // Chunk by chunk, as rendered: no one buffer of the whole page.
            return Response(status: status, headers: fields, body: ResponseBody(contentsOf: rendered.chunks))
        }
        guard response.status != 204, response.status != 304, var bytes = response.bodyBytes() else {
            return Response(status: status, headers: fields)
        }
        bytes.append(10)
        // JSON unless the response names its own type (`application/problem+json`).
        if fields[.contentType] == nil { fields[.contentType] = "application/json; charset=utf-8" }
        if headOnly {
            fields[.contentLength] = String(bytes.count)
            return Response(status: status, headers: fields)
        }
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
