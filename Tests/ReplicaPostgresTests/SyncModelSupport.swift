import Foundation
import Replica
import ReplicaHTTP
import ReplicaServer

/// One step of a randomized sync model (``SyncSessionModelTests``, ``CompositeKeyModelTests``):
/// its page cap and, one step in four, a fault on one page of the synced collection.
struct SyncModelStep {
    /// The collection's pages and the step's cap on them (1000: none).
    let pages: Int
    let maxPages: Int
    let faults: [MockFault]
    /// Whether the fault stalls a page longer than the step's client waits.
    let stallsPastTimeout: Bool

    /// Whether the cap cuts the collection short.
    var truncated: Bool { maxPages < pages }

    /// Draws a step for `objects` objects served `pageSize` a page at `path`; `stalls` adds
    /// stalled bodies to the faults drawn.
    init(_ random: inout SeededRandom, objects: Int, pageSize: Int, path: String, stalls: Bool) {
        pages = max(1, (objects + pageSize - 1) / pageSize)
        maxPages = random.below(6) == 0 ? 1 + random.below(pages) : 1000
        var faults: [MockFault] = []
        var stallsPastTimeout = false
        if random.below(4) == 0 {
            let page = String(1 + random.below(pages))
            let kind: MockFault.Kind
            switch random.below(stalls ? 6 : 5) {
            case 0: kind = .status(500)
            case 1: kind = .dropConnection
            case 2: kind = .truncateBody(afterBytes: 1 + random.below(60))
            case 3: kind = .malformedBody
            case 4 where stalls: kind = .stallBody(afterBytes: random.below(40), duration: .milliseconds(30))
            default:
                stallsPastTimeout = stalls && random.below(3) == 0
                kind = stallsPastTimeout ? .stallBody(afterBytes: 10, duration: .milliseconds(2500)) : .status(503)
            }
            faults.append(MockFault(kind, method: "GET", path: path, query: ["_page": page]))
        }
        self.faults = faults
        self.stallsPastTimeout = stallsPastTimeout
    }

    /// The step's client: its page cap, and a timeout of 1 s when a page stalls past it; every
    /// other step waits as long as a loaded machine (the whole suite runs in parallel in CI) may
    /// need, so a slow answer is never mistaken for a failure the step did not inject.
    func client(_ store: any ReplicaStore, transport: HTTPTransport, base: URL) -> ReplicaClient {
        var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: base])
        configuration.maxPages = maxPages
        configuration.timeout = stallsPastTimeout ? .milliseconds(1000) : .seconds(30)
        return ReplicaClient(store: store, configuration: configuration)
    }
}

/// What a model's steps did, for the check that the run exercised every outcome.
struct SyncModelOutcomes {
    private(set) var counts: [String: Int] = [:]

    /// A sync that succeeded.
    mutating func record(_ result: CallResult, truncated: Bool) {
        counts[result.notModified ? "not modified" : truncated ? "truncated" : "synced", default: 0] += 1
        if result.unchangedPages > 0 { counts["with 304 pages", default: 0] += 1 }
    }

    /// A sync that failed (on an injected fault).
    mutating func recordFailure() { counts["failed", default: 0] += 1 }

    /// The outcomes the run never had, each a `no '…' step` message.
    var missing: [String] {
        ["synced", "not modified", "truncated", "with 304 pages", "failed"].filter { (counts[$0] ?? 0) == 0 }
            .map { "no '\($0)' step in \(counts)" }
    }
}
