import AsyncHTTPClient
import Foundation
import NIOCore

/// The page-JSON half of `mock-server` (issue 31): how many rows a second the mock server turns into
/// page JSON for the people shape.
///
/// `Schemas/people.json`'s people (1,000,000, or 100,000 with `--quick`, `sync-pages`' own data) are
/// loaded into the memory store of a server in a child process (`SyncPagesServer`, as `sync-pages`
/// runs it). One client then fetches `GET /people?_page=N&_limit=100000` for every page in turn over
/// loopback, each body read to its end and discarded (only its bytes counted), after one untimed page
/// to warm up. A run is all the pages; the row is the median of the runs' rows/s.
///
/// ```swift
/// let result = try await MockServerPages.measure(context: context, runs: 3)
/// result.rowsPerSecond   // median
/// ```
enum MockServerPages {
    static let pageSize = 100_000
    static let target = 1_000_000.0

    /// What the runs measured.
    struct Result {
        var rows: Int
        var bytesPerRun: Int
        /// rows/s of each run.
        var rates: [Double]
        var problems: [String]

        var rowsPerSecond: Double? { median(rates) }
    }

    /// Starts the server child with the people loaded and fetches every page `runs` times.
    static func measure(context: BenchmarkContext, runs: Int) async throws -> Result {
        let count = context.quick ? 100_000 : 1_000_000
        let directory = (context.scratchDirectory as NSString).appendingPathComponent("mock-server-pages")
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = (directory as NSString).appendingPathComponent("people.json")
        try PeopleData(count: count, revision: 0).writeJSON(to: file)
        let control = (directory as NSString).appendingPathComponent("control")
        try FileManager.default.createDirectory(atPath: control, withIntermediateDirectories: true)
        let request = WorkerRequest(implementation: "people-server", parameters: [
            "control": control, "schema": SyncPagesWorkload.schemaPath, "first": file,
        ])
        context.log("mock-server: page JSON: loading \(Report.formatCount(count)) people into the server child…")
        return try await SyncPagesServer.serving(workload: "mock-server", request: request, context: context) { port in
            try await fetchAll(baseURL: "http://127.0.0.1:\(port)", count: count, runs: runs, context: context)
        }
    }

    private static func fetchAll(baseURL: String, count: Int, runs: Int, context: BenchmarkContext) async throws -> Result {
        let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        do {
            var result = Result(rows: count, bytesPerRun: 0, rates: [], problems: [])
            let pages = (count + pageSize - 1) / pageSize
            _ = try await fetch(http, baseURL, page: 1, expectedTotal: count, into: &result)  // warm-up, untimed
            for run in 1...runs {
                let clock = ContinuousClock()
                let started = clock.now
                var bytes = 0
                var rows = 0
                for page in 1...pages {
                    bytes += try await fetch(http, baseURL, page: page, expectedTotal: count, into: &result)
                    rows += min(pageSize, count - (page - 1) * pageSize)
                }
                let seconds = started.duration(to: clock.now).seconds
                result.rates.append(Double(rows) / seconds)
                result.bytesPerRun = bytes
                context.log(String(format: "mock-server: page JSON run %d/%d: %@ rows in %d pages, %.1f MB, %.3f s, %@ rows/s",
                                   run, runs, Report.formatCount(rows), pages, Double(bytes) / 1e6, seconds,
                                   Report.formatNumber(Double(rows) / seconds)))
            }
            try await http.shutdown()
            return result
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    /// One page, its body read to the end and dropped; the body's bytes.
    private static func fetch(_ http: HTTPClient, _ baseURL: String, page: Int, expectedTotal: Int,
                              into result: inout Result) async throws -> Int {
        let request = HTTPClientRequest(url: "\(baseURL)/people?_page=\(page)&_limit=\(pageSize)")
        let response = try await http.execute(request, timeout: .seconds(120))
        var bytes = 0
        var last: UInt8 = 0
        for try await chunk in response.body {
            bytes += chunk.readableBytes
            if let byte = chunk.readableBytesView.last { last = byte }
        }
        let total = response.headers.first(name: "X-Total-Count").flatMap { Int($0) }
        if response.status != .ok || total != expectedTotal || last != 10 || bytes < 2 {
            result.problems.append("page \(page): status \(response.status.code), X-Total-Count \(total.map(String.init) ?? "none"), "
                                   + "\(bytes) bytes")
        }
        return bytes
    }
}
