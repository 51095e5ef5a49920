import Foundation
import ReplicaCore

/// A server-wide rate limit: at most ``requests`` requests in each window of ``window``
/// (`replica serve --rate-limit 5/1`, ``MockServerOptions/rateLimit``).
///
/// The window is fixed: it starts with the first request after the previous one ended. A request over
/// the limit is answered `429` with `Retry-After` (whole seconds until the window ends, at least 1),
/// `X-RateLimit-Limit`, `X-RateLimit-Remaining: 0`, `X-RateLimit-Reset` (the window's end, Unix epoch
/// seconds) and `{"error": {"status": 429, "code": "rateLimited", "message": …}}`; it does not count.
/// Answers under the limit carry `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`.
/// The event stream (`/events`) is not limited.
///
/// ```swift
/// var options = MockServerOptions()
/// options.rateLimit = MockRateLimit(requests: 5, per: .seconds(1))   // or MockRateLimit("5/1")
/// ```
public struct MockRateLimit: Sendable, Hashable, CustomStringConvertible {
    /// The requests allowed in one window (at least 1).
    public var requests: Int
    /// The window's length (more than zero).
    public var window: Duration

    /// Creates a limit.
    ///
    /// ```swift
    /// MockRateLimit(requests: 100, per: .seconds(60))
    /// ```
    /// - Parameters:
    ///   - requests: the requests allowed in one window; less than 1 counts as 1.
    ///   - window: the window's length; zero or less counts as one second.
    public init(requests: Int, per window: Duration) {
        self.requests = max(1, requests)
        self.window = window > .zero ? window : .seconds(1)
    }

    /// A limit written `N/SECONDS` (`5/1`, `100/60`, `10/0.5`); nil for anything else (a count below 1,
    /// seconds not above zero or over a day).
    ///
    /// ```swift
    /// MockRateLimit("5/1")   // 5 requests per second
    /// ```
    /// - Parameters:
    ///   - text: the limit.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = Int(parts[0]), count >= 1, count <= 1_000_000_000,
              let seconds = Double(parts[1]), seconds.isFinite, seconds > 0, seconds <= 86_400 else { return nil }
        self.init(requests: count, per: .milliseconds(Int64((seconds * 1000).rounded(.up))))
    }

    /// `5/1`.
    public var description: String {
        let milliseconds = window / .milliseconds(1)
        let seconds = milliseconds.truncatingRemainder(dividingBy: 1000) == 0 ? String(Int(milliseconds / 1000))
            : String(milliseconds / 1000)
        return "\(requests)/\(seconds)"
    }
}

/// The count of a server's current rate-limit window, under a lock (requests are answered on many tasks).
final class MockRateLimiter: Sendable {
    /// What one request may do.
    enum Decision {
        /// Answer it; `remaining` requests are left in the window, which ends in `reset`.
        case allowed(remaining: Int, reset: Duration)
        /// Refuse it; the window ends in `reset`.
        case refused(reset: Duration)
    }

    private struct Window {
        var start: ContinuousClock.Instant
        var count: Int
    }

    let limit: MockRateLimit
    private let state = Locked<Window?>(nil)

    init(_ limit: MockRateLimit) {
        self.limit = limit
    }

    /// Counts one request at `now` if the window has room.
    func take(now: ContinuousClock.Instant = .now) -> Decision {
        state.withLock { window in
            if window == nil || now >= (window?.start ?? now) + limit.window {
                window = Window(start: now, count: 0)
            }
            let start = window?.start ?? now
            let count = window?.count ?? 0
            let reset = start + limit.window - now
            guard count < limit.requests else { return .refused(reset: reset) }
            window?.count = count + 1
            return .allowed(remaining: limit.requests - count - 1, reset: reset)
        }
    }

    /// The headers of an answer under the limit.
    func headers(remaining: Int, reset: Duration) -> [(name: String, value: String)] {
        [(name: "X-RateLimit-Limit", value: String(limit.requests)),
         (name: "X-RateLimit-Remaining", value: String(remaining)),
         (name: "X-RateLimit-Reset", value: String(Self.epoch(after: reset)))]
    }

    /// The 429 answer of a request over the limit.
    func refusal(reset: Duration) -> MockResponse {
        let seconds = max(1, Int((Double(reset / .milliseconds(1)) / 1000).rounded(.up)))
        let error = MockHTTPError(status: 429, code: "rateLimited",
                                  message: "rate limit of \(limit.requests) request\(limit.requests == 1 ? "" : "s") per \(Self.seconds(limit.window)) s reached "
                                      + "(--rate-limit \(limit)); retry after \(seconds) s")
        return MockResponse(status: 429, headers: [
            (name: "Retry-After", value: String(seconds)),
            (name: "X-RateLimit-Limit", value: String(limit.requests)),
            (name: "X-RateLimit-Remaining", value: "0"),
            (name: "X-RateLimit-Reset", value: String(Self.epoch(after: reset))),
        ], body: error.body)
    }

    /// The Unix time, in whole seconds rounded up, `reset` from now.
    private static func epoch(after reset: Duration) -> Int {
        Int((Date().timeIntervalSince1970 + Double(reset / .milliseconds(1)) / 1000).rounded(.up))
    }

    private static func seconds(_ window: Duration) -> String {
        MockRateLimit(requests: 1, per: window).description.split(separator: "/").last.map(String.init) ?? "?"
    }
}
