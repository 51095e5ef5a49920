import Foundation
import Logging
import MetricsTestKit
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

/// ``ReplicaService`` sending the outbox: local writes made while the API is down reach it once
/// it is up, with the outbox's statuses and metrics telling how it went.
@Suite("ReplicaService: the outbox")
struct ReplicaServiceOutboxTests {
    /// The statuses a service reported, in order.
    final class Statuses: Sendable {
        private let items = Locked<[OutboxStatus]>([])
        func append(_ status: OutboxStatus) { items.withLock { $0.append(status) } }
        var all: [OutboxStatus] { items.withLock { $0 } }
    }

    @Test("a local write made while the API is down: statuses show it pending with the error, then sent once the API is up")
    func sendsWhenUp() async throws {
        let api = try await ReplicaServiceTests.LiveAPI.start()
        let metrics = TestMetrics()
        try await withTeardown {
            try await api.add(#"[{"id": 1, "name": "ann"}]"#)
            var configuration = api.client.configuration
            configuration.metricsFactory = metrics
            let client = ReplicaClient(store: api.client.store, configuration: configuration)
            _ = try await client.call("/people")
            api.server.goDown()
            try await client.store.saveLocally("Person", ["name": .string("bob")])
            let service = try ReplicaService(client: client, syncs: [.init("/people", every: .seconds(600))], push: false,
                                             outbox: .init(every: .milliseconds(20)), closesStore: false,
                                             logger: ReplicaServiceTests.quietLogger())
            let statuses = Statuses()
            let watcher = Task { for await status in service.outboxStatuses() { statuses.append(status) } }
            let running = Task { try await service.run() }
            defer { running.cancel() }
            try await waitUntil("a failed push", timeout: .seconds(30)) { statuses.all.contains { $0.lastError != nil } }
            let failing = try #require(statuses.all.first { $0.lastError != nil })
            #expect(failing.pending == 1 && failing.rejected == 0)
            #expect(failing.lastError?.contains("503") == true)
            #expect(failing.oldestPending != nil)
            #expect(failing.description.hasPrefix("1 pending (oldest "))
            #expect(try metrics.expectGauge(ReplicaMetrics.outboxPending).lastValue == 1)
            // The synced path's status carries the outbox's.
            try await waitUntil("the path's status", timeout: .seconds(30)) { service.currentStatus(of: "/people")?.outbox != nil }
            let synced = try #require(service.currentStatus(of: "/people"))
            #expect(synced.outbox?.pending == 1 && synced.outbox?.lastError?.contains("503") == true)
            #expect(synced.description.contains("; outbox: 1 pending (oldest "))
            #expect(synced.description.hasSuffix(" s), 0 rejected"))
            #expect(try metrics.expectCounter(ReplicaMetrics.outboxMutations, [("entity", "Person"), ("outcome", "failed")]).totalValue >= 1)

            api.server.comeUp()
            try await waitUntil("the push", timeout: .seconds(60)) { statuses.all.last?.pending == 0 }
            #expect(statuses.all.last?.description == "0 pending, 0 rejected")
            try await waitUntil("the path's status", timeout: .seconds(30)) { service.currentStatus(of: "/people")?.outbox?.pending == 0 }
            #expect(service.currentStatus(of: "/people")?.description.contains("outbox") == false)
            #expect(try await client.store.outbox().isEmpty)
            #expect(try await client.store.rows(RowQuery("Person", sort: [.ascending("id")])).map { $0["name"] }
                    == [.string("ann"), .string("bob")])
            #expect(try metrics.expectCounter(ReplicaMetrics.outboxMutations, [("entity", "Person"), ("outcome", "confirmed")]).totalValue == 1)
            #expect(try metrics.expectGauge(ReplicaMetrics.outboxPending).lastValue == 0)
            #expect(try metrics.expectGauge(ReplicaMetrics.outboxOldestPending).lastValue == 0)

            // A write while the service runs is sent at once: the commit wakes the sender.
            try await client.store.saveLocally("Person", ["id": .integer(1), "name": .string("anna")])
            try await waitUntil("the second push", timeout: .seconds(30)) {
                (try? metrics.expectCounter(ReplicaMetrics.outboxMutations, [("entity", "Person"), ("outcome", "confirmed")]).totalValue) == 2
            }
            running.cancel()
            _ = try? await running.value
            await watcher.value
        } teardown: {
            await api.stop()
        }
    }
}
