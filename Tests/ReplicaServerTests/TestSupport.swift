import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ReplicaServer
import ReplicaServerPostgres
import ReplicaTestSupport
import Testing

/// One HTTP exchange's result.
struct Reply {
    var status: Int
    var headers: HTTPHeaders
    var bytes: [UInt8]

    var text: String { String(decoding: bytes, as: UTF8.self) }
    var json: JSONValue? { try? JSONValue(parsing: bytes) }
    func header(_ name: String) -> String? { headers.first(name: name) }
}

/// An AsyncHTTPClient bound to one server's base URL.
struct Client {
    let base: String

    init(_ server: MockServer) { base = server.baseURL }
    init(base: String) { self.base = base }

    func send(
        _ method: NIOHTTP1.HTTPMethod, _ path: String, body: String? = nil, bytes: [UInt8]? = nil,
        headers: [(String, String)] = [], timeout: TimeAmount = .seconds(20)
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        } else if let bytes {
            request.body = .bytes(ByteBuffer(bytes: bytes))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let buffer = try await response.body.collect(upTo: 64 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, bytes: Array(buffer.readableBytesView))
    }

    func get(_ path: String, headers: [(String, String)] = []) async throws -> Reply { try await send(.GET, path, headers: headers) }
    func post(_ path: String, _ body: String) async throws -> Reply { try await send(.POST, path, body: body) }
    func put(_ path: String, _ body: String) async throws -> Reply { try await send(.PUT, path, body: body) }
    func patch(_ path: String, _ body: String) async throws -> Reply { try await send(.PATCH, path, body: body) }
    func delete(_ path: String) async throws -> Reply { try await send(.DELETE, path) }
}

/// Fixtures shared by the suites.
enum Fixture {
    /// Starts a server on a port outside the kernel's ephemeral range (32768–60999 on Linux), so
    /// that a test restarting it on the same port does not race other tests binding port 0.
    static func startOnQuietPort(resources: [MockResource], store: any MockStore) async throws -> MockServer {
        var lastError: (any Error)?
        for _ in 0..<20 {
            do {
                return try await MockServer.start(resources: resources,
                                                  options: MockServerOptions(port: Int.random(in: 20_000..<30_000), store: store))
            } catch {
                lastError = error
            }
        }
        throw lastError ?? MockServerError(code: .bindFailed, message: "no free port")
    }

    static var peopleSchema: Schema {
        get throws { try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json")) }
    }

    static var peopleResources: [MockResource] {
        get throws { MockResource.resources(for: try peopleSchema) }
    }

    /// The folder of this process's SQLite mock stores, made on first use and removed when the
    /// process exits (`atexit`): the servers keep their stores open past the tests' last lines.
    static let storeFolder: Result<TemporaryDirectory, any Error> = {
        let folder = Result { try TemporaryDirectory("replica-server-stores") }
        atexit { if case .success(let folder) = Fixture.storeFolder { folder.remove() } }
        return folder
    }()

    /// A fresh store by name, for parameterized tests: `memory`, `sqlite` (a new file) or
    /// `postgres` (a new database of the test cluster).
    static func store(_ kind: String) async throws -> any MockStore {
        switch kind {
        // The file outlives the test (the store is handed to a server and never closed): it goes
        // with the process's folder at exit.
        case "sqlite": return try SQLiteMockStore(path: try storeFolder.get().path("mock-\(UUID().uuidString).sqlite"))
        case "postgres": return try PostgresMockStore(url: try await PostgresCluster.start().makeDatabase())
        default: return MemoryMockStore()
        }
    }
}

/// Starts a server, runs `body`, stops the server even when `body` throws.
func withServer(
    _ resources: [MockResource], routes: [MockRoute] = [], options: MockServerOptions = MockServerOptions(),
    _ body: (MockServer, Client) async throws -> Void
) async throws {
    let server = try await MockServer.start(resources: resources, routes: routes, options: options)
    do {
        try await body(server, Client(server))
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}

extension JSONValue {
    /// Parses a literal in a test.
    static func parse(_ text: String) -> JSONValue {
        (try? JSONValue(parsing: text)) ?? .string("unparseable: \(text)")
    }
}
