import Foundation
import Logging
import ReplicaCore

/// Logs each request and its outcome through swift-log: method, URL, status and duration at
/// `info` (failures at `warning`); at `debug`, also the request's headers and body and the
/// response's headers and body (bodies up to ``bodyLimit`` bytes; the `Authorization` header's
/// value is not logged). The response body is logged as it streams to its reader, never buffered.
///
/// ```swift
/// var logger = Logger(label: "api")
/// logger.logLevel = .debug                                   // headers and bodies too
/// configuration.interceptors.append(LoggingInterceptor(logger: logger))
/// ```
public struct LoggingInterceptor: Interceptor {
    let logger: Logger
    /// The most bytes of a body logged at `debug`.
    public var bodyLimit: Int

    public init(logger: Logger = Logger(label: "Replica.client"), bodyLimit: Int = 2_048) {
        self.logger = logger
        self.bodyLimit = bodyLimit
    }

    public func intercept(_ request: ClientRequest, next: Next) async throws -> ClientResponse {
        let started = ContinuousClock.now
        let what = "\(request.method) \(request.url.absoluteString)"
        let debug = logger.logLevel <= .debug
        if debug {
            logger.debug("\(what) request headers: \(Self.describe(request.headers))")
            logger.debug("\(what) request body: \(describe(request.body))")
        }
        do {
            var response = try await next(request)
            logger.info("\(what) → \(response.status) in \(started.duration(to: .now))")
            if debug {
                logger.debug("\(what) response headers: \(Self.describe(response.headers))")
                let (logger, limit) = (self.logger, bodyLimit)
                response.body = ResponseBody(LoggedBody(body: response.body, limit: limit) { text in
                    logger.debug("\(what) response body: \(text)")
                })
            }
            return response
        } catch {
            logger.warning("\(what) failed after \(started.duration(to: .now)): \(error)")
            throw error
        }
    }

    /// Headers as `Name: value` pairs, the `Authorization` value hidden.
    static func describe(_ headers: HeaderFields) -> String {
        headers.fields.map { field in
            "\(field.name): \(field.name.lowercased() == "authorization" ? "(hidden)" : field.value)"
        }.joined(separator: ", ")
    }

    /// A request body as logged: its text up to the limit, or what it is.
    func describe(_ body: RequestBody) -> String {
        switch body {
        case .none: return "(none)"
        case .bytes(let bytes): return LoggedBody.text(bytes, limit: bodyLimit, total: bytes.count)
        case .file(let path): return "(the file \(path))"
        case .multipart(let multipart):
            return "(multipart: " + multipart.parts.map { part in
                part.fileName.map { "\(part.name) = file \($0)" } ?? part.name
            }.joined(separator: ", ") + ")"
        }
    }
}

/// A response body that passes its chunks through and, when it ends, hands the first bytes it
/// saw to `log`.
struct LoggedBody: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    let body: ResponseBody
    let limit: Int
    let log: @Sendable (String) -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: ResponseBody.AsyncIterator
        let limit: Int
        let log: @Sendable (String) -> Void
        var seen: [UInt8] = []
        var total = 0
        var logged = false

        mutating func next() async throws -> [UInt8]? {
            guard let chunk = try await base.next() else {
                if !logged {
                    logged = true
                    log(LoggedBody.text(seen, limit: limit, total: total))
                }
                return nil
            }
            total += chunk.count
            if seen.count < limit { seen += chunk.prefix(limit - seen.count) }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: body.makeAsyncIterator(), limit: limit, log: log)
    }

    /// Body bytes as text, cut at `limit` with the total beside.
    static func text(_ bytes: [UInt8], limit: Int, total: Int) -> String {
        if total == 0 { return "(empty)" }
        let text = String(decoding: bytes.prefix(limit), as: UTF8.self)
        return total > limit ? "\(text)… (\(total) bytes)" : text
    }
}

/// Sets headers on every request that does not already carry them.
///
/// ```swift
/// HeaderInterceptor(["X-API-Version": "2"])
/// ```
public struct HeaderInterceptor: Interceptor {
    let headers: HeaderFields

    public init(_ headers: HeaderFields) { self.headers = headers }

    public func intercept(_ request: ClientRequest, next: Next) async throws -> ClientResponse {
        var request = request
        for (name, value) in headers where request.headers[name] == nil { request.headers[name] = value }
        return try await next(request)
    }
}

/// Retries idempotent requests (GET, HEAD, OPTIONS, PUT, DELETE) after connection errors,
/// timeouts, 429 and 503, with exponential backoff and jitter, honoring `Retry-After` in both
/// of its forms (delta-seconds or an HTTP-date), at most `maxRetryAfter`. A 403 or 429 whose
/// rate-limit headers leave no request (GitHub's `X-RateLimit-Remaining: 0` with
/// `X-RateLimit-Reset`, the IETF `RateLimit` fields; ``RateLimitStatus``) waits until the reset
/// instead; a reset further off than `maxRetryAfter` is not waited for: the call fails at once
/// with ``ClientError/Code/rateLimited`` naming it. Each retry of a client's sync is counted
/// (``ReplicaMetrics/retries``) and noted on its page's span.
///
/// ```swift
/// RetryInterceptor(maxAttempts: 4, baseDelay: .milliseconds(200), maxRetryAfter: .seconds(30))
/// ```
public struct RetryInterceptor: Interceptor {
    public var maxAttempts: Int
    public var baseDelay: Duration
    /// The longest backoff between attempts when the server sent no usable `Retry-After`.
    public var maxDelay: Duration
    /// Statuses worth retrying.
    public var statuses: Set<Int>
    /// The longest wait a server's `Retry-After` can ask for; longer (or infinite) waits are
    /// cut to this. Two minutes by default.
    public var maxRetryAfter: Duration
    /// Whether a connection that failed or timed out before its response is tried again (`true`
    /// by default); `false` retries statuses alone.
    ///
    /// ```swift
    /// var retry = RetryInterceptor(maxAttempts: 4)
    /// retry.retriesFailedConnections = false
    /// ```
    public var retriesFailedConnections = true

    /// Creates a retry interceptor.
    ///
    /// ```swift
    /// RetryInterceptor(maxAttempts: 5, statuses: [429, 502, 503, 504])
    /// ```
    /// - Parameters:
    ///   - maxAttempts: the attempts in all, the first included; at least 1.
    ///   - baseDelay: the backoff before the second attempt; it doubles for each one after.
    ///   - maxDelay: the longest backoff.
    ///   - statuses: the response statuses that are retried.
    ///   - maxRetryAfter: the longest wait honored from a `Retry-After` header (a longer one is
    ///     cut to it) or until a rate limit's reset (a later reset fails the call with `.rateLimited`).
    public init(maxAttempts: Int = 3, baseDelay: Duration = .milliseconds(250), maxDelay: Duration = .seconds(30),
                statuses: Set<Int> = [429, 503], maxRetryAfter: Duration = .seconds(120)) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.statuses = statuses
        self.maxRetryAfter = maxRetryAfter
    }

    /// The wait before attempt `attempt + 1`: `Retry-After` when the server sent a parseable one
    /// (in `0...maxRetryAfter`), else `baseDelay × 2^(attempt-1)` scaled by a random factor in
    /// 0.5…1.5, in `0...maxDelay`. Never traps, whatever the header or the attempt count.
    func delay(after attempt: Int, retryAfter: String?, now: Date = Date()) -> Duration {
        if let retryAfter, let wait = RetryAfter.delay(retryAfter, now: now, maximum: maxRetryAfter) {
            return wait
        }
        // 2^62 × any Duration's seconds stays far inside Double's range; the clamp does the rest.
        let exponent = attempt > 1 ? min(attempt - 1, 62) : 0
        let seconds = baseDelay / .seconds(1) * pow(2, Double(exponent)) * Double.random(in: 0.5...1.5)
        return Duration.clamped(seconds: seconds, to: maxDelay)
    }

    public func intercept(_ request: ClientRequest, next: Next) async throws -> ClientResponse {
        guard request.isIdempotent else { return try await next(request) }
        var attempt = 1
        while true {
            do {
                let response = try await next(request)
                let limited = response.exhaustedRateLimit
                guard statuses.contains(response.status) || limited != nil, attempt < maxAttempts else { return response }
                let body = (try? await response.body.collect(upTo: 1 << 20)) ?? []
                let wait: Duration
                if let limited, response.headers["Retry-After"] == nil, let untilReset = limited.wait() {
                    // Used up until the reset: wait for it, unless it is further off than allowed.
                    guard untilReset <= maxRetryAfter else {
                        throw ClientError.rateLimited(limited, waitAllowed: maxRetryAfter, status: response.status,
                                                      headers: response.headers, body: body,
                                                      request: "\(request.method) \(request.url.absoluteString)")
                    }
                    wait = untilReset
                } else {
                    wait = delay(after: attempt, retryAfter: response.headers["Retry-After"])
                }
                try await Task.sleep(for: wait)
                PageTelemetry.current?.retrying(attempt: attempt + 1, status: response.status)
            } catch let error as ClientError where (error.code == .connection || error.code == .timeout) && retriesFailedConnections
                        && attempt < maxAttempts {
                try await Task.sleep(for: delay(after: attempt, retryAfter: nil))
                PageTelemetry.current?.retrying(attempt: attempt + 1, status: nil)
            }
            attempt += 1
        }
    }
}
