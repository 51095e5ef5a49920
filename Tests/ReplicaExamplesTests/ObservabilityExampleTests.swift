import Foundation
import InMemoryTracing
import MetricsTestKit
import Replica
import ReplicaExamples
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

@Suite("README metrics and tracing example")
struct ObservabilityExampleTests {
    @Test("the example's sync is counted in its own factory and traced under its span")
    func observedSync() async throws {
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json"))
        let server = try await MockServer.start(resources: MockResource.resources(for: schema))
        try await withTeardown {
            _ = try await server.load(json: try JSONValue(parsing: #"{"people": [{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]}"#))
            let engine = try SQLiteReplica(store: Store.inMemory(schema: schema))
            let metrics = TestMetrics()
            let tracer = InMemoryTracer()
            let configuration = ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: try #require(URL(string: server.baseURL))])
            let shown = try await observedSyncExample(engine: engine, configuration: configuration, metrics: metrics, tracer: tracer)
            #expect(shown == 2)
            #expect(metrics.counterTotal(label: ReplicaMetrics.rows, dimensions: [("route", "/people"), ("operation", "inserted")]) == 2)
            #expect(try metrics.expectTimer(ReplicaMetrics.liveDiffLatency, [("entity", "Person")]).values.count == 1)
            let refresh = try #require(tracer.finishedSpans.first { $0.operationName == "refresh" })
            let call = try #require(tracer.finishedSpans.first { $0.operationName == "replica.call" })
            #expect(call.parentSpanID == refresh.spanID)
        } teardown: {
            await server.stop()
        }
    }
}
