/// Network conditions a mock server imposes: latency and faults.
///
/// ```swift
/// var conditions = MockConditions(latency: .milliseconds(50) ... .milliseconds(200))
/// conditions.faults.append(MockFault(.status(503), probability: 0.1))
/// conditions.faults.append(MockFault(.dropConnection, method: "POST", path: "/people"))
/// conditions.faults.append(MockFault(.malformedBody, method: "GET", path: "/people", query: ["_page": "3"]))
/// server.setConditions(conditions)
/// ```
public struct MockConditions: Sendable {
    /// Every response waits a random time in this range before it is sent; nil for none.
    public var latency: ClosedRange<Duration>?
    /// Faults, first match wins; each is tried with its probability.
    public var faults: [MockFault]

    /// Creates conditions.
    ///
    /// ```swift
    /// let slow = MockConditions(latency: .milliseconds(100) ... .milliseconds(300))
    /// ```
    /// - Parameters:
    ///   - latency: the latency range, nil for none.
    ///   - faults: faults to inject.
    public init(latency: ClosedRange<Duration>? = nil, faults: [MockFault] = []) {
        self.latency = latency
        self.faults = faults
    }

    /// A random latency in the range.
    func randomLatency() -> Duration? {
        guard let latency else { return nil }
        let low = latency.lowerBound / .nanoseconds(1)
        let high = latency.upperBound / .nanoseconds(1)
        guard high > low else { return latency.lowerBound }
        return .nanoseconds(Int64(Double.random(in: low...high)))
    }

    /// The fault to inject for a request, if any.
    func fault(method: String, segments: [String], queryItems: [(name: String, value: String)]) -> MockFault.Kind? {
        for fault in faults where fault.applies(method: method, segments: segments, queryItems: queryItems) {
            if fault.probability >= 1 || Double.random(in: 0..<1) < fault.probability { return fault.kind }
        }
        return nil
    }
}

/// One injected fault: what happens, how often, and on which routes.
///
/// ```swift
/// MockFault(.status(500), probability: 0.25)                       // global
/// MockFault(.stall, method: "GET", path: "/people/:id")            // one route
/// MockFault(.truncateBody(afterBytes: 100), path: "/people", query: ["_page": "2"])  // one page
/// ```
public struct MockFault: Sendable, Hashable {
    /// What the fault does.
    public enum Kind: Sendable, Hashable {
        /// Answer this status with a JSON error body instead of handling the request.
        case status(Int)
        /// Close the connection without answering.
        case dropConnection
        /// Answer nothing until the client gives up (or the server stops, or `MockServerOptions.stallLimit`
        /// passes), then close the connection.
        case stall
        /// Send the status, the headers and the body's first `afterBytes` bytes, then nothing for
        /// `duration` (at most `MockServerOptions.stallLimit`; cut short when the server stops), then
        /// the rest. The body is chunked, with no Content-Length, so the stall is mid-body.
        ///
        /// Applies only to a 2xx answer with a JSON body (not to HEAD, errors or 304).
        ///
        /// ```swift
        /// MockFault(.stallBody(afterBytes: 64, duration: .seconds(2)), method: "GET", path: "/people")
        /// ```
        case stallBody(afterBytes: Int, duration: Duration)
        /// Send the status, the headers and the body's first `afterBytes` bytes, then close the
        /// connection: the client sees an incomplete body. The body is chunked, so it never looks
        /// complete, even when `afterBytes` covers all of it.
        ///
        /// Applies only to a 2xx answer with a JSON body (not to HEAD, errors or 304).
        ///
        /// ```swift
        /// MockFault(.truncateBody(afterBytes: 100), method: "GET", path: "/people")
        /// ```
        case truncateBody(afterBytes: Int)
        /// Send a body that is invalid JSON only at its end: a `,` before the final `]` or `}`
        /// (`[{"id":1},{"id":2},]`), so a streaming parser accepts every object before it and the whole
        /// response must be rolled back. The headers, ETag included, are those of the intact answer.
        ///
        /// Applies only to a 2xx answer with a JSON body (not to HEAD, errors or 304).
        ///
        /// ```swift
        /// MockFault(.malformedBody, method: "GET", path: "/people", query: ["_page": "3"])
        /// ```
        case malformedBody

        /// Whether the fault changes the body of an answer instead of replacing the answer.
        var altersBody: Bool {
            switch self {
            case .stallBody, .truncateBody, .malformedBody: return true
            case .status, .dropConnection, .stall: return false
            }
        }
    }

    /// What the fault does.
    public var kind: Kind
    /// The chance, 0 to 1, that a matching request gets the fault.
    public var probability: Double
    /// Only requests with this method (`GET`…); nil for all.
    public var method: String?
    /// Only paths matching this pattern (`/people/:id`, `/people/*`); nil for all.
    public var path: String?
    /// Only requests whose query has every one of these items with that value (`["_page": "3"]`,
    /// compared after percent-decoding; other items may be present too); nil for all.
    public var query: [String: String]?

    /// Creates a fault.
    ///
    /// ```swift
    /// MockFault(.status(503), probability: 0.5, path: "/people")
    /// MockFault(.malformedBody, method: "GET", path: "/people", query: ["_page": "3"])
    /// ```
    /// - Parameters:
    ///   - kind: what happens.
    ///   - probability: the chance per matching request, 1 by default.
    ///   - method: only this method; nil for all.
    ///   - path: only paths matching this pattern; nil for all.
    ///   - query: only requests whose query has all these items with these values; nil for all.
    public init(_ kind: Kind, probability: Double = 1, method: String? = nil, path: String? = nil,
                query: [String: String]? = nil) {
        self.kind = kind
        self.probability = probability
        self.method = method?.uppercased()
        self.path = path
        self.query = query
    }

    func applies(method: String, segments: [String], queryItems: [(name: String, value: String)]) -> Bool {
        if let expected = self.method, expected != method { return false }
        if let path, !MockPath.matches(path, segments) { return false }
        if let query {
            for (name, value) in query where !queryItems.contains(where: { $0.name == name && $0.value == value }) {
                return false
            }
        }
        return true
    }
}
