import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The client side of `mock-server`: concurrent clients sending a fixed mix of reads and writes to a
/// running mock server for a fixed time, then checking what the server kept.
///
/// No request can race another into a 404: the seeded objects (owner 0) are only ever read, and a
/// client updates and deletes only objects it created itself (the `owner` property holds its number),
/// so every expected status is certain. Every loop is bounded by the deadline and by a request count.
///
/// ```swift
/// let load = MockServerLoad(baseURL: "http://127.0.0.1:\(port)", clients: 100, duration: .seconds(20), seedCount: 1_000)
/// let result = try await load.run()
/// print(result.requestsPerSecond, result.percentile(0.99))
/// ```
struct MockServerLoad: Sendable {
    /// `http://127.0.0.1:PORT`.
    let baseURL: String
    /// Concurrent clients, each with its own connection.
    let clients: Int
    /// How long the timed phase lasts.
    let duration: Duration
    /// Objects created (untimed) before the timed phase; read-only afterwards.
    let seedCount: Int
    /// The `_limit` of list requests.
    var pageSize = 20
    /// A bound on each client's timed requests, whatever the deadline.
    var maxRequestsPerClient = 2_000_000
    /// The longest one request may take before it counts as a transport error.
    var requestTimeout: TimeAmount = .seconds(30)

    /// The kinds of request in the mix.
    enum Operation: String, CaseIterable, Sendable {
        case show = "GET one"
        case list = "GET page"
        case create = "POST"
        case update = "PUT"
        case destroy = "DELETE"

        /// The only status that counts as success.
        var expectedStatus: Int {
            switch self {
            case .show, .list, .update: 200
            case .create: 201
            case .destroy: 204
            }
        }

        /// 50 % GET one, 20 % GET page, 20 % POST, 5 % PUT, 5 % DELETE.
        static func pick(_ roll: UInt64) -> Operation {
            switch roll % 100 {
            case 0..<50: .show
            case 50..<70: .list
            case 70..<90: .create
            case 90..<95: .update
            default: .destroy
            }
        }
    }

    /// What one client did.
    struct ClientResult: Sendable {
        var statuses: [Int: Int] = [:]
        var operations: [String: Int] = [:]
        /// Latency of every timed response, in nanoseconds.
        var latencies: [Int64] = []
        var created = 0
        var updated = 0
        var deleted = 0
        var errorResponses = 0
        var transportErrors = 0
        /// Requests outside the timed phase (the ownership check).
        var untimedRequests = 0
        /// Seconds from the start of the timed phase to this client's last timed response.
        var timedSeconds = 0.0
        /// Whether the server holds exactly this client's objects at their last versions.
        var ownershipMatches = false
        var samples: [String] = []

        mutating func problem(_ text: String) {
            if samples.count < 5 { samples.append(text) }
        }
    }

    /// The whole run.
    struct Result: Sendable {
        var clients: Int
        var elapsed: Double
        var statuses: [Int: Int] = [:]
        var operations: [String: Int] = [:]
        /// Sorted latencies of the timed responses, in nanoseconds.
        var latencies: [Int64] = []
        var seeded = 0
        var created = 0
        var updated = 0
        var deleted = 0
        var errorResponses = 0
        var transportErrors = 0
        /// Every request sent (seeding, timed phase, checks), to compare with the server's own tally.
        var requestsSent = 0
        /// `X-Total-Count` of the collection after the timed phase.
        var finalCount: Int?
        /// Clients whose objects on the server differ from what they wrote.
        var ownershipMismatches = 0
        var samples: [String] = []

        /// Timed responses.
        var requests: Int { latencies.count }
        /// Timed responses per second.
        var requestsPerSecond: Double { elapsed > 0 ? Double(requests) / elapsed : 0 }
        /// What the collection should hold: seeded + created − deleted.
        var expectedCount: Int { seeded + created - deleted }

        /// The latency at quantile `q` (0…1), in milliseconds; `nil` without responses.
        func percentile(_ q: Double) -> Double? {
            guard !latencies.isEmpty else { return nil }
            let rank = Int((Double(latencies.count) * q).rounded(.up)) - 1
            return Double(latencies[min(max(rank, 0), latencies.count - 1)]) / 1e6
        }
    }

    private struct Response {
        var status: Int
        var headers: HTTPHeaders
        var body: ByteBuffer
    }

    private struct Created: Decodable {
        var id: Int
    }

    private struct Owned: Decodable {
        var id: Int
        var version: Int?
    }

    /// Seeds, runs the timed phase and checks the result.
    ///
    /// - Returns: Counts, latencies and the checks' findings.
    /// - Throws: ``BenchmarkError`` when seeding fails (the timed phase then means nothing).
    func run() async throws -> Result {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: clients)
        configuration.timeout = .init(connect: .seconds(10), read: requestTimeout)
        let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        do {
            let result = try await run(with: http)
            try await http.shutdown()
            return result
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    private func run(with http: HTTPClient) async throws -> Result {
        let seedIDs = try await seed(http)
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + duration
        var result = Result(clients: clients, elapsed: 0)
        result.seeded = seedIDs.count
        result.requestsSent = seedIDs.count

        let outcomes = await withTaskGroup(of: ClientResult.self, returning: [ClientResult].self) { group in
            for index in 1...clients {
                group.addTask { await self.runClient(http, owner: index, seedIDs: seedIDs, deadline: deadline) }
            }
            var outcomes: [ClientResult] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        // The slowest client's last timed response ends the timed phase (the ownership checks are not timed).
        result.elapsed = outcomes.map(\.timedSeconds).max() ?? 0

        for outcome in outcomes {
            result.statuses.merge(outcome.statuses, uniquingKeysWith: +)
            result.operations.merge(outcome.operations, uniquingKeysWith: +)
            result.latencies += outcome.latencies
            result.created += outcome.created
            result.updated += outcome.updated
            result.deleted += outcome.deleted
            result.errorResponses += outcome.errorResponses
            result.transportErrors += outcome.transportErrors
            result.requestsSent += outcome.latencies.count + outcome.transportErrors + outcome.untimedRequests
            if !outcome.ownershipMatches { result.ownershipMismatches += 1 }
            for sample in outcome.samples where result.samples.count < 10 { result.samples.append(sample) }
        }
        result.latencies.sort()

        result.requestsSent += 1
        do {
            let response = try await send(http, .GET, "/items?_page=1&_limit=1")
            if response.status == 200 {
                result.finalCount = response.headers.first(name: "X-Total-Count").flatMap { Int($0) }
            } else {
                result.samples.append("final count: status \(response.status)")
            }
        } catch {
            result.samples.append("final count: \(error)")
        }
        return result
    }

    /// Creates `seedCount` read-only objects (owner 0), spread over the clients' connections.
    private func seed(_ http: HTTPClient) async throws -> [Int] {
        try await withThrowingTaskGroup(of: [Int].self, returning: [Int].self) { group in
            for lane in 0..<clients {
                group.addTask {
                    var ids: [Int] = []
                    for number in stride(from: lane, to: seedCount, by: clients) {
                        let body = #"{"name":"seed \#(number)","owner":0,"version":0,"score":\#(number % 100).5,"active":false}"#
                        let response = try await send(http, .POST, "/items", body: body)
                        guard response.status == 201, let id = Self.createdID(response.body) else {
                            throw BenchmarkError("mock-server: seeding got status \(response.status): "
                                                 + String(buffer: response.body).prefix(200))
                        }
                        ids.append(id)
                    }
                    return ids
                }
            }
            var ids: [Int] = []
            for try await lane in group { ids += lane }
            return ids.sorted()
        }
    }

    /// One client: the timed loop, then the check of its own objects.
    private func runClient(_ http: HTTPClient, owner: Int, seedIDs: [Int], deadline: ContinuousClock.Instant) async -> ClientResult {
        var random = SplitMix64(seed: 0x5EED_0000 &+ UInt64(owner) &* 0x9E37_79B9)
        var result = ClientResult()
        var ownIDs: [Int] = []
        var versions: [Int: Int] = [:]
        var knownTotal = seedIDs.count
        var sequence = 0
        let clock = ContinuousClock()

        while clock.now < deadline && result.latencies.count + result.transportErrors < maxRequestsPerClient {
            var operation = Operation.pick(random.next())
            if ownIDs.isEmpty && (operation == .update || operation == .destroy) { operation = .create }
            if seedIDs.isEmpty && ownIDs.isEmpty && operation == .show { operation = .create }
            let started = clock.now
            do {
                let response: Response
                switch operation {
                case .show:
                    let pick = Int(random.next() % UInt64(seedIDs.count + ownIDs.count))
                    let id = pick < seedIDs.count ? seedIDs[pick] : ownIDs[pick - seedIDs.count]
                    response = try await send(http, .GET, "/items/\(id)")
                case .list:
                    let pages = max(1, (knownTotal + pageSize - 1) / pageSize)
                    let page = 1 + Int(random.next() % UInt64(pages))
                    response = try await send(http, .GET, "/items?_page=\(page)&_limit=\(pageSize)")
                    if response.status == 200, let total = response.headers.first(name: "X-Total-Count").flatMap({ Int($0) }) {
                        knownTotal = total
                    }
                case .create:
                    sequence += 1
                    let score = Double(random.next() % 10_000) / 100
                    let body = #"{"name":"client \#(owner) item \#(sequence)","owner":\#(owner),"version":0,"score":\#(score),"active":true}"#
                    response = try await send(http, .POST, "/items", body: body)
                    if response.status == 201 {
                        if let id = Self.createdID(response.body) {
                            ownIDs.append(id)
                            versions[id] = 0
                            result.created += 1
                        } else {
                            result.errorResponses += 1
                            result.problem("POST /items: 201 without an id: \(String(buffer: response.body).prefix(200))")
                        }
                    }
                case .update:
                    let id = ownIDs[Int(random.next() % UInt64(ownIDs.count))]
                    let version = (versions[id] ?? 0) + 1
                    let score = Double(random.next() % 10_000) / 100
                    response = try await send(http, .PUT, "/items/\(id)", body: #"{"version":\#(version),"score":\#(score)}"#)
                    if response.status == 200 {
                        versions[id] = version
                        result.updated += 1
                    }
                case .destroy:
                    let index = Int(random.next() % UInt64(ownIDs.count))
                    let id = ownIDs[index]
                    response = try await send(http, .DELETE, "/items/\(id)")
                    if response.status == 204 {
                        ownIDs.swapAt(index, ownIDs.count - 1)
                        ownIDs.removeLast()
                        versions[id] = nil
                        result.deleted += 1
                    }
                }
                result.latencies.append(Int64((started.duration(to: clock.now) / .nanoseconds(1)).rounded()))
                result.statuses[response.status, default: 0] += 1
                result.operations[operation.rawValue, default: 0] += 1
                if response.status != operation.expectedStatus {
                    result.errorResponses += 1
                    result.problem("\(operation.rawValue): status \(response.status): \(String(buffer: response.body).prefix(200))")
                }
            } catch {
                result.transportErrors += 1
                result.problem("\(operation.rawValue): \(error)")
            }
        }

        result.timedSeconds = (deadline - duration).duration(to: clock.now).seconds

        // The check: the server holds exactly this client's live objects, each at its last version.
        result.untimedRequests += 1
        do {
            let response = try await send(http, .GET, "/items?owner=\(owner)")
            let stored = try JSONDecoder().decode([Owned].self, from: Data(response.body.readableBytesView))
            let server = Dictionary(stored.map { ($0.id, $0.version ?? -1) }, uniquingKeysWith: { first, _ in first })
            result.ownershipMatches = response.status == 200 && stored.count == server.count && server == versions
            if !result.ownershipMatches {
                let missing = versions.keys.filter { server[$0] == nil }.count
                let extra = server.keys.filter { versions[$0] == nil }.count
                let stale = versions.filter { id, version in server[id].map { $0 != version } ?? false }.count
                result.problem("client \(owner): \(missing) objects missing, \(extra) unexpected, \(stale) at an old version")
            }
        } catch {
            result.problem("client \(owner): ownership check failed: \(error)")
        }
        return result
    }

    private func send(_ http: HTTPClient, _ method: HTTPMethod, _ path: String, body: String? = nil) async throws -> Response {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await http.execute(request, timeout: requestTimeout)
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return Response(status: Int(response.status.code), headers: response.headers, body: bytes)
    }

    private static func createdID(_ body: ByteBuffer) -> Int? {
        (try? JSONDecoder().decode(Created.self, from: Data(body.readableBytesView)))?.id
    }
}
