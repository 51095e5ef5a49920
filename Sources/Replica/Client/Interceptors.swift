import Foundation
import Logging

/// Logs each request and its outcome through swift-log: method, URL, status, duration.
///
/// ```swift
/// configuration.interceptors.append(LoggingInterceptor(logger: Logger(label: "api")))
/// ```
public struct LoggingInterceptor: Interceptor {
    let logger: Logger

    public init(logger: Logger = Logger(label: "Replica.client")) {
        self.logger = logger
    }

    public func intercept(_ request: ClientRequest, next: Next) async throws -> ClientResponse {
        let started = ContinuousClock.now
        do {
            let response = try await next(request)
            logger.info("\(request.method) \(request.url.absoluteString) → \(response.status) in \(started.duration(to: .now))")
            return response
        } catch {
            logger.warning("\(request.method) \(request.url.absoluteString) failed after \(started.duration(to: .now)): \(error)")
            throw error
        }
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
/// timeouts, 429 and 503, with exponential backoff and jitter, honoring `Retry-After` (seconds).
///
/// ```swift
/// RetryInterceptor(maxAttempts: 4, baseDelay: .milliseconds(200))
/// ```
public struct RetryInterceptor: Interceptor {
    public var maxAttempts: Int
    public var baseDelay: Duration
    public var maxDelay: Duration
    /// Statuses worth retrying.
    public var statuses: Set<Int>

    public init(maxAttempts: Int = 3, baseDelay: Duration = .milliseconds(250), maxDelay: Duration = .seconds(30),
                statuses: Set<Int> = [429, 503]) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.statuses = statuses
    }

    /// The wait before attempt `attempt + 1`: `Retry-After` when the server sent one, else
    /// `baseDelay × 2^(attempt-1)` scaled by a random factor in 0.5…1.5, at most `maxDelay`.
    func delay(after attempt: Int, retryAfter: String?) -> Duration {
        if let retryAfter, let seconds = Double(retryAfter.trimmingCharacters(in: .whitespaces)), seconds >= 0 {
            return min(maxDelay, .milliseconds(Int(seconds * 1000)))
        }
        let exponential = baseDelay * Int(pow(2, Double(max(0, attempt - 1))))
        return min(maxDelay, exponential * Double.random(in: 0.5...1.5))
    }

    public func intercept(_ request: ClientRequest, next: Next) async throws -> ClientResponse {
        guard request.isIdempotent else { return try await next(request) }
        var attempt = 1
        while true {
            do {
                let response = try await next(request)
                guard statuses.contains(response.status), attempt < maxAttempts else { return response }
                _ = try? await response.body.collect(upTo: 1 << 20)
                try await Task.sleep(for: delay(after: attempt, retryAfter: response.headers["Retry-After"]))
            } catch let error as ClientError where (error.code == .connection || error.code == .timeout) && attempt < maxAttempts {
                try await Task.sleep(for: delay(after: attempt, retryAfter: nil))
            }
            attempt += 1
        }
    }
}
