import Foundation
import Hummingbird
import MetricsTestKit
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

/// The client's metrics (``ReplicaMetrics``) recorded into a factory of the test's own, so that
/// suites running in parallel in this process never see each other's values.
@Suite("Client metrics: syncs, pages, rows, write lock, retries and failures by route")
struct ClientMetricsTests {
    static let cars = "/people/:personID/cars"

    /// The values of timer `label` with `dimensions`, in nanoseconds (none when it recorded nothing).
    static func durations(_ metrics: TestMetrics, _ label: String, _ dimensions: [(String, String)]) -> [Int64] {
        (try? metrics.expectTimer(label, dimensions).values) ?? []
    }

    /// The total of counter `label` with `dimensions` (0 when it counted nothing).
    static func total(_ metrics: TestMetrics, _ label: String, _ dimensions: [(String, String)]) -> Int64 {
        metrics.counterTotal(label: label, dimensions: dimensions)
    }

    @Test("a sync, a conditional 304 and a sync of changes: exact pages, rows and durations under the route's pattern")
    func syncOutcomes() async throws {
        let metrics = TestMetrics()
        let api = try await PeopleAPI.start { $0.metricsFactory = metrics }
        try await withTeardown {
            _ = try await api.server.load(json: try JSONValue(parsing: """
                {"people": [{"id": 1, "name": "ann"}],
                 "cars": [{"id": 1, "name": "beetle", "person_id": 1}, {"id": 2, "name": "mini", "person_id": 1}]}
                """))
            let first = try await api.client.call("/people/1/cars")
            #expect(first.changes["Car"]?.inserted.count == 2)
            let again = try await api.client.call("/people/1/cars")
            #expect(again.notModified)
            // The API changes: one car renamed, one sold, one bought.
            let cars = try #require(api.server.resources.first { $0.name == "cars" })
            _ = try await api.server.load(json: try JSONValue(parsing: """
                [{"id": 1, "name": "beetle 1303", "person_id": 1}, {"id": 3, "name": "fiat", "person_id": 1}]
                """), into: "cars")
            #expect(try await api.server.options.store.delete(cars, id: .int(2)))
            let third = try await api.client.call("/people/1/cars")
            #expect(third.changes["Car"]?.description == "1 inserted, 1 updated, 1 deleted")

            let route = [("route", Self.cars)]
            #expect(Self.total(metrics, ReplicaMetrics.pages, route) == 3)
            #expect(Self.total(metrics, ReplicaMetrics.notModifiedPages, route) == 1)
            #expect(Self.total(metrics, ReplicaMetrics.rows, route + [("operation", "inserted")]) == 3)
            #expect(Self.total(metrics, ReplicaMetrics.rows, route + [("operation", "updated")]) == 1)
            #expect(Self.total(metrics, ReplicaMetrics.rows, route + [("operation", "deleted")]) == 1)
            #expect(Self.durations(metrics, ReplicaMetrics.syncDuration, route + [("outcome", "success")]).count == 2)
            #expect(Self.durations(metrics, ReplicaMetrics.syncDuration, route + [("outcome", "not_modified")]).count == 1)
            #expect(Self.durations(metrics, ReplicaMetrics.syncDuration, route + [("outcome", "failure")]).isEmpty)
            // The two commits held the write lock; the 304 wrote nothing.
            let locks = Self.durations(metrics, ReplicaMetrics.writeLock, route)
            #expect(locks.count == 2)
            #expect(locks.allSatisfy { $0 > 0 })
            #expect(Self.total(metrics, ReplicaMetrics.failures, route + [("error", "status")]) == 0)
            // Never a concrete path as a label.
            #expect(metrics.counters.allSatisfy { counter in counter.dimensions.allSatisfy { $0.1 != "/people/1/cars" } })
        } teardown: {
            await api.stop()
        }
    }

    @Test("paged: each page counted, and each 304 of the revalidation")
    func pagedNotModified() async throws {
        let issues = GitHubIssues(1...5)
        let metrics = TestMetrics()
        try await PagedNotModifiedTests.withAPI(issues, configure: { $0.metricsFactory = metrics }) { client, _ in
            let first = try await client.call("/issues", params: ["per_page": 2])
            #expect(first.pages == 3)
            let again = try await client.call("/issues", params: ["per_page": 2])
            #expect(again.notModified && again.pages == 3 && again.unchangedPages == 3)
            let route = [("route", "/issues")]
            #expect(Self.total(metrics, ReplicaMetrics.pages, route) == 6)
            #expect(Self.total(metrics, ReplicaMetrics.notModifiedPages, route) == 3)
            #expect(Self.total(metrics, ReplicaMetrics.rows, route + [("operation", "inserted")]) == 5)
        }
    }

    @Test("an HTTP error is a failure of the route, labelled with its code; the store is untouched")
    func failure() async throws {
        let metrics = TestMetrics()
        let api = try await PeopleAPI.start { $0.metricsFactory = metrics }
        try await withTeardown {
            api.server.setConditions(MockConditions(faults: [MockFault(.status(500), path: "/people/:id")]))
            let error = await #expect(throws: ClientError.self) { try await api.client.call("/people/7") }
            #expect(error?.status == 500)
            let route = [("route", "/people/:id")]
            #expect(Self.total(metrics, ReplicaMetrics.failures, route + [("error", "status")]) == 1)
            #expect(Self.durations(metrics, ReplicaMetrics.syncDuration, route + [("outcome", "failure")]).count == 1)
            #expect(Self.total(metrics, ReplicaMetrics.pages, route) == 1)
            #expect(Self.durations(metrics, ReplicaMetrics.writeLock, route).isEmpty)
            let stored = try api.store.count("Person")
            #expect(stored == 0)
        } teardown: {
            await api.stop()
        }
    }

    @Test("RetryInterceptor's retries are counted for the route: 503, 503, then 200 is one page and two retries")
    func retries() async throws {
        let metrics = TestMetrics()
        let api = try await PeopleAPI.start {
            $0.metricsFactory = metrics
            $0.interceptors = [RetryInterceptor(maxAttempts: 4, baseDelay: .milliseconds(1))]
        }
        try await withTeardown {
            let failures = FailFirst(count: 2)
            api.server.setController(failures, for: "people")
            let result = try await api.client.call("/people")
            #expect(result.status == 200)
            #expect(failures.calls == 3)
            let route = [("route", "/people")]
            #expect(Self.total(metrics, ReplicaMetrics.retries, route) == 2)
            #expect(Self.total(metrics, ReplicaMetrics.pages, route) == 1)
            #expect(Self.durations(metrics, ReplicaMetrics.syncDuration, route + [("outcome", "success")]).count == 1)
            #expect(Self.total(metrics, ReplicaMetrics.failures, route + [("error", "status")]) == 0)
        } teardown: {
            await api.stop()
        }
    }
}
