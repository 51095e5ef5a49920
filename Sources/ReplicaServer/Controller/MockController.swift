/// The actions of a resource: the default CRUD, or your own behaviour beyond it.
///
/// Every requirement has a default that performs RESTEasy's CRUD through `MockCRUD`; a conforming
/// type overrides what it changes and can still call `MockCRUD` for the default behaviour.
///
/// ```swift
/// struct StampingController: MockController {
///     func create(_ request: MockRequest) async throws -> MockResponse {
///         var response = try await MockCRUD.create(request)
///         response.headers.append((name: "X-Stamped", value: "yes"))
///         return response
///     }
///     func custom(_ request: MockRequest) async throws -> MockResponse? {
///         request.segments.last == "ping" ? .json(["pong": true]) : nil
///     }
/// }
/// server.setController(StampingController(), for: "people")
/// ```
public protocol MockController: Sendable {
    /// `GET /people`, `GET /people/:id/cars`.
    ///
    /// ```swift
    /// func index(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.index(request) }
    /// ```
    /// - Parameters:
    ///   - request: the routed request.
    /// - Returns: the response.
    /// - Throws: `MockHTTPError` for an HTTP error response; any other error answers 500.
    func index(_ request: MockRequest) async throws -> MockResponse

    /// `GET /people/:id`.
    ///
    /// ```swift
    /// func show(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.show(request) }
    /// ```
    /// - Parameters:
    ///   - request: the routed request; `id` is set.
    /// - Returns: the response.
    /// - Throws: `MockHTTPError` for an HTTP error response.
    func show(_ request: MockRequest) async throws -> MockResponse

    /// `POST /people`, `POST /people/:id/cars`.
    ///
    /// ```swift
    /// func create(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.create(request) }
    /// ```
    /// - Parameters:
    ///   - request: the routed request.
    /// - Returns: the response.
    /// - Throws: `MockHTTPError` for an HTTP error response.
    func create(_ request: MockRequest) async throws -> MockResponse

    /// `PUT /people/:id` and `PATCH /people/:id`.
    ///
    /// ```swift
    /// func update(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.update(request) }
    /// ```
    /// - Parameters:
    ///   - request: the routed request; `id` is set.
    /// - Returns: the response.
    /// - Throws: `MockHTTPError` for an HTTP error response.
    func update(_ request: MockRequest) async throws -> MockResponse

    /// `DELETE /people/:id`.
    ///
    /// ```swift
    /// func destroy(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.destroy(request) }
    /// ```
    /// - Parameters:
    ///   - request: the routed request; `id` is set.
    /// - Returns: the response.
    /// - Throws: `MockHTTPError` for an HTTP error response.
    func destroy(_ request: MockRequest) async throws -> MockResponse

    /// A route under the resource that is not CRUD (`POST /people/1/promote`); nil answers 404.
    ///
    /// ```swift
    /// func custom(_ request: MockRequest) async throws -> MockResponse? {
    ///     request.segments.last == "count" ? .json(.int(Int64(try await request.store.count(request.resource, query: MockQuery())))) : nil
    /// }
    /// ```
    /// - Parameters:
    ///   - request: the request; `action` is nil, `segments` holds the whole path.
    /// - Returns: the response, or nil for 404.
    /// - Throws: `MockHTTPError` for an HTTP error response.
    func custom(_ request: MockRequest) async throws -> MockResponse?
}

extension MockController {
    public func index(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.index(request) }
    public func show(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.show(request) }
    public func create(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.create(request) }
    public func update(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.update(request) }
    public func destroy(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.destroy(request) }
    public func custom(_ request: MockRequest) async throws -> MockResponse? { nil }

    /// Calls the method for the request's action (or `custom`).
    func respond(_ request: MockRequest) async throws -> MockResponse? {
        switch request.action {
        case .index: return try await index(request)
        case .show: return try await show(request)
        case .create: return try await create(request)
        case .update: return try await update(request)
        case .destroy: return try await destroy(request)
        case nil: return try await custom(request)
        }
    }
}

/// The default controller: RESTEasy's CRUD, nothing else.
///
/// ```swift
/// server.setController(CRUDController(), for: "people")
/// ```
public struct CRUDController: MockController {
    /// Creates the default controller.
    ///
    /// ```swift
    /// let controller = CRUDController()
    /// ```
    public init() {}
}
