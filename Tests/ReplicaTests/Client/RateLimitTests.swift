import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// Rate-limit headers as APIs document them: GitHub's `X-RateLimit-*` (a Unix reset), Twitter's
/// `x-rate-limit-*`, GitLab's `RateLimit-*` (a Unix reset), and the IETF draft's `RateLimit`
/// fields (seconds); a used-up limit is waited out until its reset, or fails the call naming it.
@Suite("Rate limits")
struct RateLimitTests {
    static let now = Date(timeIntervalSince1970: 1_767_225_600)   // 2026-01-01T00:00:00Z

    @Test("each documented header form reads to its remaining count and reset")
    func forms() throws {
        let table: [(HeaderFields, Int?, Date?, String)] = [
            (["X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
              "X-RateLimit-Reset": "1767225660", "X-RateLimit-Resource": "core"],
             0, Date(timeIntervalSince1970: 1_767_225_660), "X-RateLimit-Remaining: 0, resets at 2026-01-01T00:01:00Z"),
            (["x-rate-limit-limit": "900", "x-rate-limit-remaining": "12", "x-rate-limit-reset": "1767225700"],
             12, Date(timeIntervalSince1970: 1_767_225_700), "X-Rate-Limit-Remaining: 12, resets at 2026-01-01T00:01:40Z"),
            (["RateLimit-Limit": "60", "RateLimit-Remaining": "0", "RateLimit-Reset": "1767225630"],
             0, Date(timeIntervalSince1970: 1_767_225_630), "RateLimit-Remaining: 0, resets at 2026-01-01T00:00:30Z"),
            (["RateLimit-Limit": "100", "RateLimit-Remaining": "0", "RateLimit-Reset": "50"],
             0, Self.now.addingTimeInterval(50), "RateLimit-Remaining: 0, resets at 2026-01-01T00:00:50Z"),
            (["RateLimit": "limit=100, remaining=0, reset=50"], 0, Self.now.addingTimeInterval(50),
             "RateLimit: 0, resets at 2026-01-01T00:00:50Z"),
            (["RateLimit": #""default";r=0;t=30, "daily";r=900;t=3600"#, "RateLimit-Policy": #""default";q=100;w=60"#],
             0, Self.now.addingTimeInterval(30), "RateLimit: 0, resets at 2026-01-01T00:00:30Z"),
            (["RateLimit": #""default";r=42;t=30"#], 42, Self.now.addingTimeInterval(30), "RateLimit: 42, resets at 2026-01-01T00:00:30Z"),
            (["X-RateLimit-Remaining": "0"], 0, nil, "X-RateLimit-Remaining: 0"),
            (["X-RateLimit-Remaining": "none", "X-RateLimit-Reset": "1767225660"], nil, nil, ""),
            (["Retry-After": "5"], nil, nil, ""),
        ]
        for (headers, remaining, reset, description) in table {
            let status = RateLimitStatus.read(headers, now: Self.now)
            #expect(status?.remaining == remaining, "\(headers)")
            #expect(status?.reset == reset, "\(headers)")
            #expect((status?.description ?? "") == description, "\(headers)")
        }
        let github = try #require(RateLimitStatus.read(["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1767225660"], now: Self.now))
        #expect(github.isExhausted)
        #expect(github.wait(from: Self.now) == .seconds(60))
        #expect(github.wait(from: Self.now.addingTimeInterval(120)) == .zero)
    }

    @Test("GitHub's 403 with no request left waits until the reset, then goes through")
    func waitsForReset() async throws {
        let reset = Int(Date().timeIntervalSince1970) + 1
        let transport = ScriptedTransport { _, index in
            index == 1 ? json(403, #"{"message": "API rate limit exceeded for 203.0.113.7.", "documentation_url": "https://docs.github.com/rest"}"#,
                              ["X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": String(reset)])
                : json(200, "[]")
        }
        let retry = RetryInterceptor(maxAttempts: 3, baseDelay: .milliseconds(1), maxRetryAfter: .seconds(30))
        let url = try #require(URL(string: "http://127.0.0.1:9/repos/o/r/issues"))
        let response = try await retry.intercept(ClientRequest(method: .get, url: url)) { try await transport.send($0) }
        #expect(response.status == 200)
        #expect(transport.requests.count == 2)
        // Not before the reset second began (the backoff alone would have waited a millisecond).
        #expect(Date().timeIntervalSince1970 >= Double(reset))
        // A 403 that is not a rate limit is no reason to retry.
        let forbidden = ScriptedTransport { _, _ in json(403, #"{"message": "Must have admin rights to Repository."}"#) }
        let refused = try await retry.intercept(ClientRequest(method: .get, url: url)) { try await forbidden.send($0) }
        #expect(refused.status == 403)
        #expect(forbidden.requests.count == 1)
    }

    @Test("a reset further off than maxRetryAfter fails at once with .rateLimited naming it; the error's retryAfter is the wait")
    func resetTooFar() async throws {
        let reset = Int(Date().timeIntervalSince1970) + 3000
        let transport = ScriptedTransport { _, _ in
            json(429, #"{"message": "Too Many Requests"}"#, ["RateLimit": #""default";r=0;t=3000"#])
        }
        let retry = RetryInterceptor(maxAttempts: 3, maxRetryAfter: .seconds(5))
        let url = try #require(URL(string: "http://127.0.0.1:9/items"))
        let started = ContinuousClock.now
        let error = await #expect(throws: ClientError.self) {
            try await retry.intercept(ClientRequest(method: .get, url: url)) { try await transport.send($0) }
        }
        #expect(started.duration(to: .now) < .seconds(5))
        #expect(transport.requests.count == 1)
        #expect(error?.code == .rateLimited)
        #expect(error?.status == 429)
        let message = error?.message ?? ""
        #expect(message.hasPrefix("HTTP 429: the rate limit is used up (RateLimit: 0, resets at "), "\(message)")
        #expect(message.hasSuffix("), in 3000 s: later than the longest wait of 5 s (RetryInterceptor.maxRetryAfter, replica sync --max-wait)"),
                "\(message)")
        #expect(error?.request == "GET http://127.0.0.1:9/items")
        #expect(error?.serverMessage == "Too Many Requests")
        let wait = try #require(error?.retryAfter)
        #expect(wait > .seconds(2990) && wait <= .seconds(3000))
        // A status error with a used-up limit names it, and its retryAfter waits for the reset.
        let plain = ClientError(status: 403, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": String(reset)], body: [])
        #expect(plain.message.hasPrefix("HTTP 403 (rate limit used up: X-RateLimit-Remaining: 0, resets at "), "\(plain.message)")
        #expect(plain.rateLimit?.isExhausted == true)
        #expect((plain.retryAfter ?? .zero) > .seconds(2990))
        #expect(ClientError(status: 403, body: []).retryAfter == nil)
    }
}
