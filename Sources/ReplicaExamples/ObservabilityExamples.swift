import CoreMetrics
import Foundation
import Replica
import Tracing

/// README "Metrics and tracing": a client and a live result set recording into a metrics factory
/// and a tracer of their own, and a call under the caller's span.
///
/// - Returns: The number of people the live result set shows once the call has returned.
public func observedSyncExample(engine: SQLiteReplica, configuration: ClientConfiguration, metrics: any MetricsFactory,
                                tracer: some Tracer) async throws -> Int {
    var configuration = configuration
    // README: metrics-tracing
    configuration.metricsFactory = metrics                  // this client's own (the default: MetricsSystem.factory)
    configuration.tracer = tracer                           // (the default: InstrumentationSystem.tracer)
    let client = ReplicaClient(engine: engine, configuration: configuration)
    let people = try LiveResultSet(engine: engine, query: LiveQuery("Person", sort: [.ascending("name")]),
                                   metricsFactory: metrics)  // its commit-to-diff latency
    try await tracer.withSpan("refresh") { _ in
        _ = try await client.call("/people")                // replica.call, a child of "refresh"
    }
    // README: end
    defer { people.close() }
    return people.snapshot.count
}
