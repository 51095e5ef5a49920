import Foundation
import Replica
import ReplicaCore
import ReplicaHTTP
import ReplicaPostgres
import ReplicaServer
import ReplicaTestSupport
import Testing

/// Two services sharing one store (a PostgreSQL database, or an SQLite file) push its outbox at
/// the same time: one sends, the other is told so, and every mutation reaches the API once.
@Suite("Outbox: services sharing a store send each mutation once")
struct OutboxSharedSendingTests {
    @Test("two replicas of one store push at once: ten creates, ten POSTs", arguments: StoreKind.allCases)
    func onceAcrossServices(kind: StoreKind) async throws {
        let schema = try TestStore.schema()
        let posts = Locked(0)
        var options = MockServerOptions()
        options.requestLog = { entry in if entry.method == "POST" { posts.withLock { $0 += 1 } } }
        let server = try await MockServer.start(resources: MockResource.resources(for: schema), options: options)
        // Slow enough answers that the two pushes overlap.
        server.setConditions(MockConditions(latency: .milliseconds(20)...(.milliseconds(30))))
        let test = try await TestStore.make(kind, schema: schema)
        let transport = HTTPTransport()
        let second: any ReplicaStore
        let directory = try TemporaryDirectory("replica-shared-outbox")
        switch kind {
        case .sqlite:
            // A second store on the first one's file: another process's, as far as `flock` can tell.
            let path = try #require(((test.store as? SQLiteReplica)?.store.path))
            second = try SQLiteReplica(store: Store(path: path))
        case .postgres:
            second = try await PostgresReplica.open(url: try #require(test.url))
        }
        try await withTeardown {
            let base = try #require(URL(string: server.baseURL))
            let first = ReplicaClient(store: test.store, configuration: ClientConfiguration(transport: transport, baseURLs: [.production: base]))
            let other = ReplicaClient(store: second, configuration: ClientConfiguration(transport: transport, baseURLs: [.production: base]))
            for index in 0..<10 { try await test.store.saveLocally("Person", ["name": .string("p\(index)")]) }
            async let one = first.push(concurrency: 2)
            async let two = other.push(concurrency: 2)
            let results = try await [one, two]
            #expect(results.reduce(0) { $0 + $1.confirmed.count } == 10)
            #expect(posts.withLock { $0 } == 10)
            #expect(try await test.store.outbox().isEmpty)
            let remote = try await server.options.store.objects(try #require(server.resources.first { $0.name == "people" }),
                                                               query: MockQuery())
            #expect(remote.objects.count == 10)
            // Whichever came second found the first sending, or nothing left to send.
            #expect(results.contains { $0.sentElsewhere } || results.contains { $0.confirmed.isEmpty })
        } teardown: {
            try? await transport.shutdown()
            await server.stop()
            await second.close()
            await test.close()
            directory.remove()
        }
    }
}
