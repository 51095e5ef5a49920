import Foundation
import Hummingbird
import Logging
import NIOCore
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import ServiceLifecycle
import Testing

/// A mock server with the people schema's resources and a client syncing into a fresh store.
struct PeopleAPI {
    let server: MockServer
    let store: Store
    let engine: SQLiteReplica
    let client: ReplicaClient
    let directory: TemporaryDirectory

    /// Starts the server and opens the store; a failure on the way stops what was started.
    static func start(configure: (inout ClientConfiguration) -> Void = { _ in }) async throws -> PeopleAPI {
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json"))
        let server = try await MockServer.start(resources: MockResource.resources(for: schema))
        let directory: TemporaryDirectory
        do {
            directory = try TemporaryDirectory("replica-http")
        } catch {
            await server.stop()
            throw error
        }
        do {
            let store = try Store(path: directory.path("people.sqlite"), schema: schema)
            let engine = try SQLiteReplica(store: store)
            guard let base = URL(string: server.baseURL) else { throw ClientError(.invalidRequest, server.baseURL) }
            var configuration = ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: base])
            configuration.timeout = .seconds(60)  // a hang guard: heads have taken over 10 s in a loaded parallel run
            configure(&configuration)
            return PeopleAPI(server: server, store: store, engine: engine,
                             client: ReplicaClient(engine: engine, configuration: configuration), directory: directory)
        } catch {
            await server.stop()
            directory.remove()
            throw error
        }
    }

    /// Stops the server and removes the store's folder.
    func stop() async {
        await server.stop()
        directory.remove()
    }

    func rows(_ entity: String) throws -> [EntityRow] { try store.rows(entity) }
}

/// A Hummingbird server on 127.0.0.1 and a free port, answering from a router; stopped by `stop()`.
struct StreamingServer {
    let port: Int
    let task: Task<Void, any Error>
    let group: ServiceGroup

    static func start(_ router: Router<BasicRequestContext>) async throws -> StreamingServer {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "test-server")
        logger.logLevel = .critical
        let app = Application(router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        return StreamingServer(port: port, task: task, group: group)
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}
