import Foundation
import ReplicaCore

extension ReplicaClient {
    /// Calls a typed endpoint: fills its path variables, sends `value` as the endpoint encodes it,
    /// and decodes the response as `Response`. When the path also matches a route of the schema
    /// (the GET route of the path for a method without one), the same response is synced into the
    /// store as well, in one transaction: a GET's response is the whole collection (stale rows are
    /// deleted as the route says), another method's speaks only for its objects, and a DELETE
    /// through a single-object route deletes the row. The response is decoded first: one that
    /// does not decode changes nothing.
    ///
    /// An empty 2xx body (or a 204) gives `nil` when `Response` is optional, ``Nothing`` when it is
    /// `Nothing`, and throws ``ClientError`` `.emptyBody` otherwise.
    ///
    /// ```swift
    /// struct Post: Codable { var id: Int; var title: String }
    /// let find = Endpoint<Nothing, Post?>(.get, "/posts/{id}")
    /// let post = try await client.perform(find, Nothing(), pathVariables: ["id": "7"])   // nil on an empty 200
    /// ```
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - value: The request value (``Nothing`` sends nothing).
    ///   - pathVariables: Values of the path's variables; the configuration's variable providers
    ///     fill the others.
    ///   - files: Files to upload; the request is then `multipart/form-data`, with the value's
    ///     fields beside the files.
    ///   - headers: Headers for this call; they override the endpoint's and the providers'.
    /// - Returns: The decoded response.
    /// - Throws: ``ClientError`` (a status above 299 with its field errors, connection, timeout,
    ///   an empty or undecodable body, a missing variable) or ``SyncError`` when syncing the
    ///   response fails; the store is then unchanged.
    @discardableResult
    public func perform<Request, Response>(_ endpoint: Endpoint<Request, Response>, _ value: Request,
                                           pathVariables: [String: String] = [:], files: [String: FileUpload] = [:],
                                           headers: HeaderFields = HeaderFields()) async throws -> Response {
        var values = pathVariables
        for name in endpoint.variables where values[name] == nil {
            if let provider = configuration.variableProviders[name], let provided = try await provider() {
                values[name] = provided
            }
        }
        let path = try EndpointPath.fill(endpoint.path, values: values)
        var request = try await endpointRequest(endpoint, value: value, path: path, files: files)
        for (name, field) in headers { request.headers[name] = field }
        let (response, bytes) = try await sendCollecting(request)
        let decoded = try Self.decode(Response.self, from: bytes, response: response, request: request, decoder: endpoint.makeDecoder())
        try await syncEndpointResponse(method: endpoint.method, path: path, bytes: bytes, status: response.status)
        return decoded
    }

    /// The request of an endpoint call: URL, headers, and the value as the endpoint encodes it.
    func endpointRequest<Request, Response>(_ endpoint: Endpoint<Request, Response>, value: Request, path: String,
                                            files: [String: FileUpload]) async throws -> ClientRequest {
        var json: JSONValue?
        if !(value is Nothing) {
            do {
                json = try JSONValue(parsing: [UInt8](endpoint.makeEncoder().encode(value)))
            } catch {
                throw ClientError(.invalidRequest, "cannot encode \(Request.self) for \(endpoint.method) \(endpoint.path): \(error)")
            }
        }
        if !configuration.parameterHooks.isEmpty {
            // The hooks see the value as parameters (an object's members, or none for `Nothing`);
            // what they return is sent. A value that is not an object is sent as it is.
            var params: [String: Parameter] = [:]
            var hookable = json == nil
            if case .object(let object)? = json {
                hookable = true
                for (key, member) in object { params[key] = Parameter(json: member) }
            }
            if hookable {
                params = try await applyParameterHooks(method: endpoint.method, path: path, route: endpoint.path, params: params)
                json = params.isEmpty && json == nil ? nil : Parameter.object(params).json
            }
        }
        var fields: [String: Parameter] = [:]
        if let json, endpoint.encoding != .json || !files.isEmpty {
            guard case .object(let object) = json else {
                throw ClientError(.invalidRequest, "\(Request.self) encodes to \(json.serialized().prefix(60)); "
                                  + "\(endpoint.encoding) fields need a JSON object")
            }
            for (key, member) in object { fields[key] = Parameter(json: member) }
        }
        let encoding: Endpoint<Request, Response>.Encoding = files.isEmpty ? endpoint.encoding : .multipart
        let query = encoding == .query ? Parameter.flatten(fields) : []
        var request = ClientRequest(method: endpoint.method, url: try url(for: path, query: query),
                                    timeout: configuration.timeout, route: endpoint.path)
        confine(&request)
        request.headers = try await baseHeaders()
        switch encoding {
        case .query:
            break
        case .json:
            if let json {
                request.body = .bytes(json.serializedBytes())
                request.headers["Content-Type"] = "application/json"
            }
        case .form:
            request.body = .bytes(Array(FormEncoding.query(Parameter.flatten(fields)).utf8))
            request.headers["Content-Type"] = "application/x-www-form-urlencoded"
        case .multipart:
            for (name, file) in files { fields[name] = .file(file) }
            let body = MultipartBody(fields: Parameter.flatten(fields))
            request.body = .multipart(body)
            request.headers["Content-Type"] = body.contentType
        }
        for (name, field) in endpoint.headers { request.headers[name] = field }
        if request.headers["User-Agent"] == nil { request.headers["User-Agent"] = ClientConfiguration.defaultUserAgent }
        return request
    }

    /// Syncs an endpoint's response through the route its path matches, if any.
    func syncEndpointResponse(method: HTTPMethod, path: String, bytes: [UInt8], status: Int) async throws {
        let routePath = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        var syncMethod = method
        var matched = store.routes.match(method, routePath)
        if matched == nil, method != .get {
            matched = store.routes.match(.get, routePath)
            syncMethod = .get
        }
        guard let (entry, _) = matched else { return }
        if method == .delete {
            // Syncing a deleted object's body would bring it back: delete the row instead.
            guard entry.isSingleObject, let entity = entry.entity,
                  let resolution = try? store.routes.resolve(syncMethod, routePath),
                  let key = resolution.scope.primaryKey(of: entity) else { return }
            _ = try await store.delete(entity.name, key: key)
            return
        }
        guard status != 204, status != 304, !bytes.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return }
        // As `call` does: one page; a GET's response is the whole collection (stale rows go),
        // another method's answer speaks only for itself.
        let session = try store.session(syncMethod, routePath, options: SyncOptions())
        defer { session.discard() }
        _ = try await session.stage(body: Data(bytes), source: "\(method) \(path)")
        _ = try await session.commit(complete: method == .get)
    }

    /// A decoding error in a sentence: what failed and where (the coding path).
    static func describe(_ error: any Error) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? "" : " at " + keys.joined(separator: ".")
        }
        switch error as? DecodingError {
        case .typeMismatch(let type, let context)?: return "expected \(type)\(path(context)): \(context.debugDescription)"
        case .valueNotFound(let type, let context)?: return "no \(type) value\(path(context))"
        case .keyNotFound(let key, let context)?: return "missing key '\(key.stringValue)'\(path(context))"
        case .dataCorrupted(let context)?: return "\(context.debugDescription)\(path(context))"
        default: return String(describing: error)
        }
    }
}
