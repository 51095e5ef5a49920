import Foundation
import Replica
import ReplicaHTTP
import ReplicaServer

/// README "Mock server": a server for a schema file, started and stopped.
public func mockServerForSchema() async throws {
    // README: mock-server
    let schema = try Schema(contentsOf: URL(fileURLWithPath: "Schemas/people.json"))
    let server = try await MockServer.start(resources: MockResource.resources(for: schema))   // 127.0.0.1, free port
    print(server.baseURL)                       // http://127.0.0.1:40123
    // … point a client at it …
    await server.stop()                         // graceful; `try await server.start()` serves again on the same port
    // README: end
}

/// README "Mock server": resources declared by hand, a SQLite store, a resource added while running.
///
/// - Returns: The running server; stop it when done.
public func mockServerByHand(tags: MockResource) async throws -> MockServer {
    // README: mock-resources
    let people = MockResource("people", properties: [MockProperty("name", .string), MockProperty("numberOfKids", .integer)])
    let cars = MockResource("cars", properties: [MockProperty("color", .string)], actions: [.index, .show, .create],
                            parents: [MockParent("people")])          // parent key "person_id"
    let server = try await MockServer.start(resources: [people, cars],
                                            options: MockServerOptions(port: 8888, store: try SQLiteMockStore(path: "mock.sqlite")))
    try await server.addResource(tags)                                // while running; removeResource(named:) too
    // README: end
    return server
}

/// README "Latency and faults".
public func mockServerConditions(server: MockServer) {
    // README: mock-conditions
    server.setConditions(MockConditions(
        latency: .milliseconds(50) ... .milliseconds(200),            // every response waits a random time in range
        faults: [
            MockFault(.status(503), probability: 0.1),                  // global
            MockFault(.dropConnection, method: "POST", path: "/people"),// close without answering
            MockFault(.stall, path: "/people/:id"),                     // answer nothing until the client times out
            MockFault(.stallBody(afterBytes: 4000, duration: .seconds(5)), path: "/people"), // a slow body
            MockFault(.truncateBody(afterBytes: 100), path: "/people", query: ["_page": "2"]), // page 2 only
            MockFault(.malformedBody, method: "GET", path: "/cars"),  // invalid JSON near the end
        ]))
    // README: end
}

/// README "Mock server": ApiModel-style validation errors, and what the client makes of them.
///
/// - Returns: The error messages the client read.
public func validationErrorsExample(schema: Schema, engine: SQLiteReplica) async throws -> [String] {
    var messages: [String] = []
    // README: validation-errors
    var options = MockServerOptions()
    options.validationErrors = .apiModel                   // 422 {"person": {"errors": {...}}}
    let server = try await MockServer.start(resources: MockResource.resources(for: schema), options: options)
    let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(
        transport: HTTPTransport(), baseURLs: [.production: URL(string: server.baseURL) ?? URL(fileURLWithPath: "/")]))
    do {
        try await client.save("Person", ["name": .string("john"), "numberOfKids": .string("one")])
    } catch let error as ClientError where error.hasErrors {
        messages = error.errorMessages                     // ["numberOfKids must be an integer"]
    }
    await server.stop()
    // README: end
    return messages
}

/// README "Mock server": server-wide defaults and a schema's actions mask.
///
/// - Returns: The running server; stop it when done.
public func mockServerDefaults(schema: Schema, controller: any MockController) async throws -> MockServer {
    // README: mock-defaults
    var options = MockServerOptions()
    options.defaultSerializer = NamespacedSerializer()      // {"person": {...}}, {"people": [...]} for every resource
    options.defaultController = controller                  // every resource without a controller of its own
    // In the schema file: "Tag": {"actions": ["index", "show"], ...} makes /tags read-only (405 for the rest).
    let server = try await MockServer.start(resources: MockResource.resources(for: schema), options: options)
    // README: end
    return server
}

/// README "Pagination styles": a server-wide style, a resource's and a route's, and the page sizes.
///
/// - Returns: The running server; stop it when done.
public func mockServerPagination() async throws -> MockServer {
    // README: mock-pagination
    var options = MockServerOptions()
    options.pagination = .stripe                                  // every collection
    options.pageSize = 2
    options.maxPageSize = 100
    var people = MockResource("people", properties: [MockProperty("name", .string)])
    people.pagination = .cursor                                   // this resource
    let routes = [MockRoute("GET", "/v1/customers", resource: "people", pagination: .jira)]   // this route
    let server = try await MockServer.start(resources: [people], routes: routes, options: options)
    // README: end
    return server
}
