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
public func clientExample(engine: SyncEngine, productionURL: URL, developmentURL: URL,
                          tokens: any TokenSource, currentUserID: String) async throws -> EntityRow? {
    // README: client
    var configuration = ClientConfiguration(transport: HTTPTransport(),
                                            baseURLs: [.production: productionURL,      // https://api.example.com
                                                       .development: developmentURL])  // http://127.0.0.1:8888
    configuration.headerProviders = [.header("Authorization") { "Bearer \(try await tokens.current())" }]
    configuration.variableProviders["userID"] = { currentUserID }
    configuration.interceptors = [LoggingInterceptor(), RetryInterceptor()]
    let client = ReplicaClient(engine: engine, configuration: configuration)

    try await client.call("/users/:userID/posts", params: ["page": 2])           // GET, query string
    try await client.call("/posts", method: .post, params: ["title": "Hello"])    // JSON body
    try await client.call("/people/1", method: .put,
                          params: ["avatar": .file(FileUpload(fileName: "me.png", mimeType: "image/png", path: "me.png"))])
    let saved = try await client.save("Person", ["name": .string("john")])       // POST, or PUT when it has an id
    let task = client.keepSynced("/users", every: .seconds(30)) { print($0) }    // periodic, with backoff
    // README: end
    task.cancel()
    return saved
}
