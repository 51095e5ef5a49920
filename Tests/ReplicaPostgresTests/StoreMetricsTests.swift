import Foundation
import InMemoryTracing
import MetricsTestKit
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing
import Tracing

/// A client's metrics and commit spans on both stores: rows, the time the write lock was held,
/// the live result set's commit-to-diff latency, and the change set's publication as the merge's
/// `replica.notify` span.
@Suite("Client metrics and commit spans on SQLite and PostgreSQL")
struct StoreMetricsTests {
    @Test("rows and write lock per sync, the live diff latency, merge → notify", arguments: StoreKind.allCases)
    func rowsAndWriteLock(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        let server = try await MockServer.start(resources: MockResource.resources(for: try TestStore.schema()))
        let transport = HTTPTransport()
        try await withTeardown {
            let metrics = TestMetrics()
            let tracer = InMemoryTracer()
            var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: try #require(URL(string: server.baseURL))])
            configuration.metricsFactory = metrics
            configuration.tracer = tracer
            let client = ReplicaClient(store: test.store, configuration: configuration)
            let people = try await LiveResultSet(store: test.store, query: LiveQuery("Person", sort: [.ascending("id")]),
                                                 metricsFactory: metrics)
            defer { people.close() }
            var updates = people.updates().makeAsyncIterator()

            _ = try await server.load(json: try JSONValue(parsing: #"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]"#), into: "people")
            _ = try await client.call("/people")
            #expect(try #require(await updates.next()).snapshot.count == 2)
            _ = try await server.load(json: try JSONValue(parsing: #"[{"id": 1, "name": "anne"}]"#), into: "people")
            let resource = try #require(server.resources.first { $0.name == "people" })
            #expect(try await server.options.store.delete(resource, id: .int(2)))
            let changed = try await client.call("/people")
            #expect(changed.changes["Person"]?.description == "0 inserted, 1 updated, 1 deleted")
            #expect(try #require(await updates.next()).snapshot.count == 1)

            let route = [("route", "/people")]
            #expect(metrics.counterTotal(label: ReplicaMetrics.rows, dimensions: route + [("operation", "inserted")]) == 2)
            #expect(metrics.counterTotal(label: ReplicaMetrics.rows, dimensions: route + [("operation", "updated")]) == 1)
            #expect(metrics.counterTotal(label: ReplicaMetrics.rows, dimensions: route + [("operation", "deleted")]) == 1)
            let locks = try metrics.expectTimer(ReplicaMetrics.writeLock, route).values
            #expect(locks.count == 2)
            #expect(locks.allSatisfy { $0 > 0 })
            let latency = try metrics.expectTimer(ReplicaMetrics.liveDiffLatency, [("entity", "Person")]).values
            #expect(latency.count == 2)
            #expect(latency.allSatisfy { $0 > 0 })

            let merges = tracer.finishedSpans.filter { $0.operationName == "replica.merge" }
            let notifies = tracer.finishedSpans.filter { $0.operationName == "replica.notify" }
            #expect(merges.count == 2)
            #expect(notifies.map(\.parentSpanID) == merges.map(\.spanID))
            #expect(notifies.map { $0.attributes.get("replica.observers") } == [.int64(1), .int64(1)])
        } teardown: {
            try? await transport.shutdown()
            await server.stop()
            await test.close()
        }
    }
}
