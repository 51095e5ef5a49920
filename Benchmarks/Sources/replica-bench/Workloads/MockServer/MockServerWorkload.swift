import Dispatch
import Foundation
import NIOConcurrencyHelpers

/// `mock-server`: throughput and latency of the embedded mock server (`ReplicaServer`) with the SQLite
/// store under concurrent mixed reads and writes, and whether it stays correct (issue 6's acceptance).
///
/// The server runs in a child process (`replica-bench worker mock-server server`), so the runner can
/// read its peak memory from `wait4`; it binds 127.0.0.1 port 0 and hands the port back in a file.
/// The runner then drives it with ``MockServerLoad``: 100 clients for 20 seconds (20 clients for 3
/// seconds with `--quick`) over one `AsyncHTTPClient` with a connection per client, 1,000 seeded objects
/// (200 quick), a mix of 50 % GET one, 20 % GET a page of 20, 20 % POST, 5 % PUT and 5 % DELETE.
///
/// Two checks decide pass or fail:
/// - **no error responses**: every response had its action's status (200, 201, 204), no request failed
///   in transport, and the server's own tally has the same number of requests and none at 400 or above;
/// - **no lost writes**: the collection's `X-Total-Count` and the row count in the SQLite file both equal
///   seeded + created − deleted, and every client finds exactly its live objects at their last versions.
///
/// The table gets three rows: requests/s (with the server's peak memory and the checks), p99 latency
/// in milliseconds (p50 beside it), and page JSON throughput in rows/s (``MockServerPages``: the
/// people shape in the memory store, pages of 100,000 over loopback, median of 3 runs; target
/// ≥ 1,000,000 rows/s).
struct MockServerWorkload: Workload {
    let name = "mock-server"
    let summary = "embedded mock server, SQLite store, concurrent mixed CRUD over loopback: requests/s, p99, no errors, no lost writes; "
        + "page JSON of the people shape: rows/s"

    /// The sizes of one run.
    struct Plan: Sendable {
        var clients: Int
        var duration: Duration
        var seedCount: Int
    }

    /// What one run measured.
    private struct Measurement {
        var load: MockServerLoad.Result
        var server: WorkerReply
        var peakMemory: Int

        var serverRequests: Int { server.counts["requests"] ?? -1 }
        var serverErrors: Int {
            server.counts.filter { key, _ in
                key.hasPrefix("status.") && (Int(key.dropFirst("status.".count)).map { $0 >= 400 || $0 == 0 } ?? true)
            }.values.reduce(0, +)
        }
        var storedRows: Int { server.counts["rows"] ?? -1 }

        var noErrors: Bool {
            load.errorResponses == 0 && load.transportErrors == 0 && serverErrors == 0
                && serverRequests == load.requestsSent && server.counts["timedOut"] == 0
        }
        var noLostWrites: Bool {
            load.finalCount == load.expectedCount && storedRows == load.expectedCount && load.ownershipMismatches == 0
        }
    }

    func plan(quick: Bool) -> Plan {
        quick ? Plan(clients: 20, duration: .seconds(3), seedCount: 200)
              : Plan(clients: 100, duration: .seconds(20), seedCount: 1_000)
    }

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        let plan = plan(quick: context.quick)
        let runs = context.runs ?? 1
        var measurements: [Measurement] = []
        for run in 1...runs {
            context.log("mock-server: run \(run)/\(runs): \(plan.clients) clients for \(plan.duration)…")
            let measurement = try await measure(plan, run: run, context: context)
            let load = measurement.load
            context.log(String(format: "mock-server: %@ requests in %.1f s, %@ req/s, p50 %.2f ms, p99 %.2f ms, server peak %@",
                               Report.formatCount(load.requests), load.elapsed, Report.formatNumber(load.requestsPerSecond),
                               load.percentile(0.5) ?? 0, load.percentile(0.99) ?? 0, Report.formatBytes(measurement.peakMemory)))
            load.samples.forEach { context.log("mock-server: PROBLEM: \($0)") }
            measurements.append(measurement)
        }

        let noErrors = measurements.allSatisfy(\.noErrors)
        let noLostWrites = measurements.allSatisfy(\.noLostWrites)
        let p50 = median(measurements.compactMap { $0.load.percentile(0.5) })
        let p99 = median(measurements.compactMap { $0.load.percentile(0.99) })
        let mix = MockServerLoad.Operation.allCases.map { "\($0.rawValue) \(Self.share($0)) %" }.joined(separator: ", ")
        var notes = [
            "mock-server: \(plan.clients) clients for \(plan.duration.components.seconds) s (one AsyncHTTPClient, a connection each) "
            + "against `MockServer` with the SQLite store on 127.0.0.1, the server in a child process (its peak RSS shown); "
            + "\(Report.formatCount(plan.seedCount)) read-only objects seeded first; mix \(mix) "
            + "(PUT and DELETE on the client's own objects, so no 404 race); "
            + (runs > 1 ? "median of \(runs) runs." : "one run."),
        ]
        for (index, measurement) in measurements.enumerated() {
            notes.append(Self.describe(measurement, run: runs > 1 ? index + 1 : nil))
        }
        let pages = try await MockServerPages.measure(context: context, runs: context.runs ?? 3)
        pages.problems.forEach { context.log("mock-server: PROBLEM: page JSON: \($0)") }
        let pageRate = pages.rowsPerSecond
        let pageNotes = [
            String(format: "mock-server, page JSON: %@ people (`Schemas/people.json`) in the memory store of a server in a child "
                   + "process; one client fetches `GET /people?_page=N&_limit=%@` for every page in turn over loopback "
                   + "(%.1f MB of JSON a run), each body read to its end and discarded, after one untimed page; "
                   + "median of %d runs (%@ rows/s).",
                   Report.formatCount(pages.rows), Report.formatCount(MockServerPages.pageSize), Double(pages.bytesPerRun) / 1e6,
                   pages.rates.count, pages.rates.map { Report.formatNumber($0) }.joined(separator: ", ")),
        ] + pages.problems.map { "mock-server, page JSON: PROBLEM: \($0)" }
        return [
            ResultRow(
                workload: name,
                unit: "req/s",
                replica: Cell(median(measurements.map(\.load.requestsPerSecond))),
                peakMemory: [MemoryReading(name: "server", bytes: measurements.map(\.peakMemory).max() ?? 0)],
                targets: [
                    Target(description: "no error responses", met: noErrors),
                    Target(description: "no lost writes", met: noLostWrites),
                ],
                notes: notes
            ),
            ResultRow(
                workload: "\(name), p99 latency",
                unit: "ms",
                replica: Cell(p99, note: p50.map { String(format: "p50 %.2f ms", $0) })
            ),
            ResultRow(
                workload: "\(name), page JSON (people, pages of \(Report.formatCount(MockServerPages.pageSize)))",
                unit: "rows/s",
                replica: Cell(pageRate),
                targets: [
                    Target(description: "≥ 1 M rows/s", met: pageRate.map { $0 >= MockServerPages.target && pages.problems.isEmpty }),
                ],
                notes: pageNotes
            ),
        ]
    }

    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        // The people server of the page-JSON measurement: `sync-pages`' server child, the first file loaded.
        if request.implementation == "people-server" { return try await SyncPagesServer.run(request) }
        guard request.implementation == "server" else {
            throw BenchmarkError("unknown mock-server implementation '\(request.implementation)'")
        }
        guard let lifetime = Int(try request.require("lifetime")) else { throw BenchmarkError("bad lifetime") }
        return try await MockServerHost.run(directory: try request.require("directory"),
                                            portFile: try request.require("portFile"),
                                            stopFile: try request.require("stopFile"),
                                            lifetime: .seconds(lifetime))
    }

    /// Starts the server child, drives it, stops it and collects both sides.
    private func measure(_ plan: Plan, run: Int, context: BenchmarkContext) async throws -> Measurement {
        let directory = (context.scratchDirectory as NSString).appendingPathComponent("mock-server-\(run)")
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let portFile = (directory as NSString).appendingPathComponent("port")
        let stopFile = (directory as NSString).appendingPathComponent("stop")
        let lifetime = Int(plan.duration.seconds.rounded(.up)) + 120
        let request = WorkerRequest(implementation: "server", parameters: [
            "directory": (directory as NSString).appendingPathComponent("store"),
            "portFile": portFile,
            "stopFile": stopFile,
            "lifetime": String(lifetime),
        ])

        let exited = NIOLockedValueBox(false)
        let child = Task { try await Self.runWorkerOffPool(request, context: context, exited: exited) }
        var load: MockServerLoad.Result?
        var failure: (any Error)?
        do {
            let port = try await Self.waitForPort(portFile, exited: exited)
            let driver = MockServerLoad(baseURL: "http://127.0.0.1:\(port)", clients: plan.clients,
                                        duration: plan.duration, seedCount: plan.seedCount)
            load = try await driver.run()
        } catch {
            failure = error
        }
        if !FileManager.default.createFile(atPath: stopFile, contents: nil) {
            context.log("mock-server: cannot create \(stopFile); the server stops at its time limit (\(lifetime) s)")
        }
        let childResult = await child.result
        if let failure { throw failure }
        let (reply, peak) = try childResult.get()
        guard let load else { throw BenchmarkError("mock-server: no load result") }
        return Measurement(load: load, server: reply, peakMemory: peak)
    }

    /// Runs the blocking `runWorker` on a dispatch thread, keeping the cooperative pool free for the clients.
    private static func runWorkerOffPool(_ request: WorkerRequest, context: BenchmarkContext,
                                         exited: NIOLockedValueBox<Bool>) async throws -> (reply: WorkerReply, peakMemory: Int) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                let result = Result { try context.runWorker(workload: "mock-server", request: request) }
                exited.withLockedValue { $0 = true }
                continuation.resume(with: result)
            }
        }
    }

    /// Waits (at most a minute) for the child to write its port.
    private static func waitForPort(_ path: String, exited: NIOLockedValueBox<Bool>) async throws -> Int {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while clock.now < deadline {
            if let text = try? String(contentsOfFile: path, encoding: .utf8),
               let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), port > 0 {
                return port
            }
            if exited.withLockedValue({ $0 }) { throw BenchmarkError("mock-server: the server exited before listening") }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchmarkError("mock-server: the server did not report a port within 60 s")
    }

    private static func share(_ operation: MockServerLoad.Operation) -> Int {
        (0..<100).filter { MockServerLoad.Operation.pick(UInt64($0)) == operation }.count
    }

    /// One run's counts and checks as a footnote.
    private static func describe(_ measurement: Measurement, run: Int?) -> String {
        let load = measurement.load
        let statuses = load.statuses.keys.sorted().map { "\($0) × \(Report.formatCount(load.statuses[$0] ?? 0))" }
        let operations = MockServerLoad.Operation.allCases.map {
            "\($0.rawValue) \(Report.formatCount(load.operations[$0.rawValue] ?? 0))"
        }
        var text = "mock-server\(run.map { " run \($0)" } ?? ""): "
        text += String(format: "%@ requests in %.1f s (%@); statuses %@; ",
                       Report.formatCount(load.requests), load.elapsed, operations.joined(separator: ", "),
                       statuses.joined(separator: ", "))
        text += "\(load.errorResponses) error responses, \(load.transportErrors) transport errors; "
        text += "the server answered \(Report.formatCount(measurement.serverRequests)) requests "
            + "(\(Report.formatCount(load.requestsSent)) sent, seeding and checks included), "
            + "\(measurement.serverErrors) at 400 or above; "
        let final = load.finalCount.map { Report.formatCount($0) } ?? "unknown"
        text += "final count \(final) (rows in the file: \(Report.formatCount(measurement.storedRows))), expected "
            + "\(Report.formatCount(load.seeded)) seeded + \(Report.formatCount(load.created)) created − "
            + "\(Report.formatCount(load.deleted)) deleted = \(Report.formatCount(load.expectedCount)); "
        text += load.ownershipMismatches == 0
            ? "all \(load.clients) clients found their objects at their last versions (\(Report.formatCount(load.updated)) updates)."
            : "\(load.ownershipMismatches) of \(load.clients) clients found their objects differ."
        text += " No error responses: \(measurement.noErrors ? "pass" : "FAIL"); no lost writes: \(measurement.noLostWrites ? "pass" : "FAIL")."
        return text
    }
}
