import Foundation
import Replica
import ReplicaHTTP
import ReplicaServer

/// `outbox-push`: local writes confirmed per second by the API, against the ideal.
///
/// 2,000 people (400 with `--quick`) are saved locally into an SQLite store (`Schemas/people.json`),
/// then `ReplicaClient.push(concurrency:)` sends them to the mock server (in process, memory store),
/// which answers every request after 20 ms. Each create is one `POST` with its `Idempotency-Key`, then
/// one transaction that writes the API's answer, gives the row the API's key and takes the mutation
/// out of the outbox. With `concurrency` rows in flight and nothing but the latency in the way, the
/// API confirms `concurrency ÷ 20 ms` mutations a second: that ideal is the baseline, and the row's
/// ratio says how much of it the sender reaches (the transactions, the HTTP client and the mock server
/// share the machine's cores). Target: at least half the ideal.
struct OutboxPushWorkload: Workload {
    let name = "outbox-push"
    let summary = "local writes pushed to the mock API at 20 ms latency: mutations confirmed per second vs the ideal concurrency ÷ latency"

    static let latency = Duration.milliseconds(20)
    static let concurrencies = [4, 16]

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        let count = context.quick ? 400 : 2_000
        let runs = context.runs ?? 3
        let schema = try Schema(contentsOf: URL(fileURLWithPath: SyncPagesWorkload.schemaPath))
        var rows: [ResultRow] = []
        for concurrency in Self.concurrencies {
            var rates: [Double] = []
            var problems: [String] = []
            for run in 1...runs {
                let server = try await MockServer.start(resources: MockResource.resources(for: schema))
                server.setConditions(MockConditions(latency: Self.latency...Self.latency))
                let path = (context.scratchDirectory as NSString).appendingPathComponent("outbox-\(concurrency)-\(run).sqlite")
                let transport = HTTPTransport()
                do {
                    let store = try SQLiteReplica(store: Store(path: path, schema: schema))
                    for index in 0..<count {
                        try await store.saveLocally("Person", ["name": .string("p\(index)"), "numberOfKids": .integer(Int64(index % 4))])
                    }
                    guard let base = URL(string: server.baseURL) else { throw BenchmarkError("outbox-push: bad URL \(server.baseURL)") }
                    let client = ReplicaClient(store: store, configuration: ClientConfiguration(transport: transport, baseURLs: [.production: base]))
                    let clock = ContinuousClock()
                    let start = clock.now
                    let result = try await client.push(concurrency: concurrency)
                    let elapsed = start.duration(to: clock.now)
                    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                    if result.confirmed.count != count || result.outbox.pending != 0 {
                        problems.append("run \(run): \(result)")
                    }
                    let remote = try await server.options.store.count(try server.resources.first { $0.name == "people" }
                                                                        .orThrow("outbox-push: no people resource"), query: MockQuery())
                    if remote != count { problems.append("run \(run): the API holds \(remote) people, not \(count)") }
                    rates.append(Double(result.confirmed.count) / seconds)
                    context.log(String(format: "outbox-push: concurrency %d, run %d: %d confirmed in %.2f s", concurrency, run,
                                       result.confirmed.count, seconds))
                } catch {
                    try? await transport.shutdown()
                    await server.stop()
                    throw error
                }
                try? await transport.shutdown()
                await server.stop()
            }
            let ideal = Double(concurrency) / (Double(Self.latency.components.attoseconds) / 1e18 + Double(Self.latency.components.seconds))
            let median = rates.sorted()[rates.count / 2]
            var row = ResultRow(workload: "outbox-push, \(count) creates, concurrency \(concurrency), 20 ms latency", unit: "mutations/s",
                                replica: Cell(median))
            row.baselines = [BaselineCell(name: "ideal: concurrency ÷ latency", cell: Cell(ideal), minimumRatio: 0.5)]
            row.notes = ["median of \(runs) runs: " + rates.map { String(format: "%.0f", $0) }.joined(separator: ", ")] + problems
            rows.append(row)
        }
        return rows
    }
}

extension Optional {
    /// The value, or `error` thrown.
    func orThrow(_ message: String) throws -> Wrapped {
        guard let value = self else { throw BenchmarkError(message) }
        return value
    }
}
