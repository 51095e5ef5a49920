import Foundation
import Replica
import ReplicaHTTP

/// Where the client example gets its bearer tokens.
public protocol TokenSource: Sendable {
    /// The current access token.
    func current() async throws -> String
}

/// README "The client": configuration, calls, model operations and a periodic sync.
///
/// - Returns: The row `save` stored.
public func clientExample(engine: SQLiteReplica, productionURL: URL, developmentURL: URL,
                          tokens: any TokenSource, currentUserID: String) async throws -> EntityRow? {
    // README: client
    var configuration = ClientConfiguration(transport: HTTPTransport(),
                                            baseURLs: [.production: productionURL,      // https://api.example.com
                                                       .development: developmentURL])  // http://127.0.0.1:8888
    configuration.headerProviders = [.header("Authorization") { "Bearer \(try await tokens.current())" }]
    configuration.variableProviders["userID"] = { currentUserID }
    configuration.interceptors = [LoggingInterceptor(), RetryInterceptor()]
    configuration.parameterHooks = [{ $0.params["locale"] = "en" }]             // before encoding (ApiModel's access_token)
    configuration.timeZone = .current                                            // dates save sends: 2024-05-01T14:34:56+02:00
    let client = ReplicaClient(engine: engine, configuration: configuration)

    try await client.call("/users/:userID/posts", params: ["page": 2])           // GET, query string
    try await client.call("/posts", method: .post, params: ["title": "Hello"])    // JSON body
    try await client.call("/people/1", method: .put,
                          params: ["avatar": .file(FileUpload(fileName: "me.png", mimeType: "image/png", path: "me.png"))])
    let saved = try await client.save("Person", ["name": .string("john")])       // POST, or PUT when it has an id
    let johns = try await client.findAll("Person", params: ["name": "john"])    // the rows of that answer, in order
    try await client.save("Person", ["name": .string("ann")],                   // multipart: fields and a file streamed
                         files: ["avatar": FileUpload(path: "ann.png", mimeType: "image/png")])   // from disk, with back-pressure
    try client.use(.development)                                                 // switch environments at run time
    try await client.call("/users", headers: ["X-Trace": "1"], timeout: .seconds(5))   // per call (routes: in the schema)
    let task = client.keepSynced("/users", every: .seconds(30)) { print($0) }    // periodic, with backoff
    // README: end
    task.cancel()
    print(johns.count, "johns")
    return saved
}

/// README "The client": typed endpoints. Returns the person created and found, and whether a
/// missing person's optional endpoint gave nil.
public func typedEndpointExample(client: ReplicaClient) async throws -> (created: String, found: String, deleted: Bool) {
    // README: endpoints
    struct NewPerson: Encodable { var name: String; var numberOfKids: Int }
    struct Person: Codable { var id: Int; var name: String; var numberOfKids: Int? }
    let create = Endpoint<NewPerson, Person>(.post, "/people")                 // JSON body
    let find = Endpoint<Nothing, Person>(.get, "/people/{{person-id}}")        // :id, {id} and {{id}} all work
    let remove = Endpoint<Nothing, Person?>(.delete, "/people/:id")            // nil for an empty 2xx body
    let john = try await client.perform(create, NewPerson(name: "john", numberOfKids: 1))
    let found = try await client.perform(find, Nothing(), pathVariables: ["person-id": String(john.id)])
    let gone = try await client.perform(remove, Nothing(), pathVariables: ["id": String(john.id)])
    // README: end
    return (john.name, found.name, gone == nil)
}

/// README "The client": an ad-hoc call (a path no route matches). Returns the number of JSON
/// elements received and of cars decoded.
public func adHocExample(client: ReplicaClient) async throws -> (json: Int, decoded: Int) {
    // README: ad-hoc
    struct Car: Decodable { var id: Int; var name: String }
    let result = try await client.call("/cars")                 // no route: nothing synced, the JSON returned
    if case .array(let cars)? = result.data { print(cars.count, "cars") }
    let cars = try await client.call("/cars", as: [Car].self)   // or decoded (a routed path is synced too)
    // README: end
    guard case .array(let items)? = result.data else { return (0, cars.count) }
    return (items.count, cars.count)
}

/// README "Routes": ApiModel's format-extension and singleton routes. Returns the post's title
/// and the signed-in user's name.
public func apiModelRoutesExample(client: ReplicaClient) async throws -> (post: AttributeValue?, user: AttributeValue?) {
    // README: apimodel-routes
    let post = try await client.find("Post", id: .integer(7))   // GET /posts/7.json (route "/posts/:id.json")
    let me = try await client.find("User")                      // GET /user.json (a route with "singleton": true)
    // README: end
    return (post?["title"], me?["name"])
}
