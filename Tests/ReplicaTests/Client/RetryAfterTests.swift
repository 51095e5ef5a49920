import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Retry-After")
struct RetryAfterTests {
    /// `Sun, 06 Nov 1994 08:49:37 GMT`, the RFC's example date.
    static let example = 784_111_777.0
    /// Thirty seconds before the example date.
    static let now = Date(timeIntervalSince1970: example - 30)

    /// A header value and the exact wait it must give with `maxRetryAfter` 120 s at `now`;
    /// nil when it is unparseable and the interceptor falls back to its backoff.
    static let table: [(String, Duration?)] = [
        ("inf", .seconds(120)),
        ("-inf", .zero),
        ("Infinity", .seconds(120)),
        ("nan", nil),
        ("-nan", nil),
        ("-5", .zero),
        ("-0", .zero),
        ("0", .zero),
        ("1e20", .seconds(120)),
        ("1e308", .seconds(120)),
        ("1e400", .seconds(120)),
        ("99999999999999999999", .seconds(120)),
        ("", nil),
        ("   ", nil),
        ("abc", nil),
        ("0x10", nil),
        ("1e", nil),
        ("12abc", nil),
        ("1 2", nil),
        (" 3 ", .seconds(3)),
        ("\t7\r\n", .seconds(7)),
        ("1.5", .milliseconds(1500)),
        ("0.25", .milliseconds(250)),
        ("120", .seconds(120)),
        ("121", .seconds(120)),
        ("Sun, 06 Nov 1994 08:49:37 GMT", .seconds(30)),
        ("  Sun, 06 Nov 1994 08:49:37 GMT ", .seconds(30)),
        ("Sun, 06 Nov 1994 08:48:37 GMT", .zero),
        ("Sat, 01 Jan 1994 00:00:00 GMT", .zero),
        ("Sunday, 06-Nov-94 08:49:37 GMT", .seconds(30)),
        ("Sun Nov  6 08:49:37 1994", .seconds(30)),
        ("Sun Nov 06 08:49:37 1994", .seconds(30)),
        ("sun, 06 nov 1994 08:50:07 gmt", .seconds(60)),
        ("Fri, 31 Dec 9999 23:59:59 GMT", .seconds(120)),
        ("Sun, 06 Nov 1994 08:49:37 UTC", nil),
        ("Sun, 31 Feb 1994 08:49:37 GMT", nil),
        ("Sun, 06 Nov 1994 24:49:37 GMT", nil),
        ("Sun, 06 Foo 1994 08:49:37 GMT", nil),
        ("Sunday, 06 Nov 1994 08:49:37 GMT", nil),
        ("Sun, 06 Nov 1994 08:49:37 GMT trailing", nil),
    ]

    @Test("each hostile or ordinary value gives its exact wait, clamped to maxRetryAfter, or falls back to the backoff",
          arguments: table)
    func values(value: String, expected: Duration?) {
        let retry = RetryInterceptor(baseDelay: .milliseconds(100), maxDelay: .seconds(30), maxRetryAfter: .seconds(120))
        #expect(RetryAfter.delay(value, now: Self.now, maximum: retry.maxRetryAfter) == expected, "\(value)")
        let delay = retry.delay(after: 1, retryAfter: value, now: Self.now)
        if let expected {
            #expect(delay == expected, "\(value)")
        } else {
            // The backoff for the first retry: 100 ms scaled by 0.5…1.5.
            #expect(delay >= .milliseconds(50) && delay <= .milliseconds(150), "\(value): \(delay)")
        }
    }

    @Test("the three HTTP-date forms name the same instant; a two-digit year is at most 50 years ahead")
    func dateForms() {
        for text in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            #expect(RetryAfter.httpDate(text, now: Self.now) == Self.example, "\(text)")
        }
        // Seen from 2025, `30` means 2030 and `94` means 1994.
        let later = Date(timeIntervalSince1970: 1_750_000_000)
        #expect(RetryAfter.httpDate("Tuesday, 01-Jan-30 00:00:00 GMT", now: later) == 1_893_456_000)
        #expect(RetryAfter.httpDate("Sunday, 06-Nov-94 08:49:37 GMT", now: later) == Self.example)
    }

    @Test("a date's wait keeps its fraction of a second from now, and a smaller maximum clamps it")
    func fractionalNow() {
        let now = Date(timeIntervalSince1970: Self.example - 29.75)
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", now: now, maximum: .seconds(60)) == .milliseconds(29_750))
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", now: now, maximum: .seconds(10)) == .seconds(10))
        #expect(RetryAfter.delay("5", now: now, maximum: .zero) == .zero)
        #expect(RetryAfter.delay("5", now: now, maximum: .seconds(-1)) == .zero)
    }

    @Test("the backoff never traps and stays within 0…maxDelay for any attempt or base delay")
    func backoffBounds() {
        let retry = RetryInterceptor(baseDelay: .milliseconds(250), maxDelay: .seconds(30))
        #expect(retry.delay(after: 10_000, retryAfter: nil) <= .seconds(30))
        #expect(retry.delay(after: 10_000, retryAfter: nil) >= .seconds(30))  // 2^62 × 250 ms × 0.5 is far past the cap
        for attempt in [Int.min, -1, 0, 1, 2, 63, 64, 65, 1_000, Int.max] {
            let delay = retry.delay(after: attempt, retryAfter: nil)
            #expect(delay >= .zero && delay <= .seconds(30), "attempt \(attempt): \(delay)")
        }
        #expect(retry.delay(after: 1, retryAfter: nil) <= .milliseconds(375))
        #expect(retry.delay(after: 3, retryAfter: nil) >= .milliseconds(500))
        let huge = RetryInterceptor(baseDelay: .seconds(Int64.max), maxDelay: .seconds(Int64.max))
        #expect(huge.delay(after: Int.max, retryAfter: nil) == .seconds(Int64.max))
        let negative = RetryInterceptor(baseDelay: .seconds(-5), maxDelay: .seconds(1))
        #expect(negative.delay(after: 4, retryAfter: nil) == .zero)
    }

    @Test("a 503 asking for Retry-After: 1e300 is retried after maxRetryAfter, not after 1e300 seconds")
    func interceptorClampsRetryAfter() async throws {
        let transport = ScriptedTransport { _, index in
            index == 1 ? json(503, #"{"error": "busy"}"#, ["Retry-After": "1e300"]) : json(200, #"{"posts": []}"#)
        }
        let retry = RetryInterceptor(maxAttempts: 3, maxRetryAfter: .milliseconds(10))
        let url = try #require(URL(string: "http://127.0.0.1:9/posts"))
        let started = ContinuousClock.now
        let response = try await retry.intercept(ClientRequest(method: .get, url: url)) { try await transport.send($0) }
        let elapsed = started.duration(to: .now)
        #expect(response.status == 200)
        #expect(transport.requests.count == 2)
        #expect(elapsed >= .milliseconds(10))
        // Without the clamp the wait would be 1e300 s (or maxRetryAfter's default, 120 s); the bound
        // leaves room for a machine loaded by the rest of the suite (21 s seen once under a full run).
        #expect(elapsed < .seconds(60), "\(elapsed)")
    }
}
