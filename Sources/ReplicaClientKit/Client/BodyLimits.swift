import Foundation
import ReplicaCore

/// The limits of one response body: how long it may go without a byte, how long the whole
/// exchange may take, and how many bytes it may hold (counted after gzip or deflate
/// decompression, so that a small compressed bomb is stopped as soon as it has inflated past the
/// limit, while a page that compresses well arrives whatever its ratio). The request's
/// ``ClientRequest/timeout`` counts to the response head; these count from there on.
///
/// Each failure names its limit, the URL and how much had arrived: ``ClientError/Code/timeout``
/// for the two times, ``ClientError/Code/bodyTooLarge`` for the size. A sync that fails so
/// writes nothing.
///
/// ```swift
/// configuration.bodyLimits = BodyLimits(idleTimeout: .seconds(300), deadline: .seconds(4 * 3600),
///                                       maxBytes: 8 << 30)   // a slow API with 8 GiB exports
/// ```
public struct BodyLimits: Sendable, Hashable {
    /// The longest wait for the next byte of a body while the client wants it: 60 s by default.
    /// Time the client spends writing what it read does not count.
    public var idleTimeout: Duration
    /// The longest a whole exchange may take, head and body: 30 minutes by default (for an
    /// upload, counted from the response head).
    public var deadline: Duration
    /// The most bytes one response body may hold, decompressed: 1 GiB by default.
    public var maxBytes: Int64

    /// Limits with the defaults a user would pick: idle 60 s, deadline 30 minutes, 1 GiB.
    ///
    /// ```swift
    /// let limits = BodyLimits(maxBytes: 64 << 20)   // 64 MiB, the other defaults
    /// ```
    public init(idleTimeout: Duration = .seconds(60), deadline: Duration = .seconds(30 * 60), maxBytes: Int64 = 1 << 30) {
        self.idleTimeout = idleTimeout
        self.deadline = deadline
        self.maxBytes = maxBytes
    }

    /// The error of a body that went `idleTimeout` without a byte, after `received` bytes.
    ///
    /// ```swift
    /// throw limits.idleError(request: "GET https://api.example.com/people", received: 1_024)
    /// ```
    public func idleError(request: String, received: Int64) -> ClientError {
        ClientError(.timeout, "the response body sent no byte for \(Self.describe(idleTimeout)) (the idle timeout; "
                    + "raise it with bodyLimits.idleTimeout or --idle-timeout) after \(Self.describe(bytes: received))",
                    request: request)
    }

    /// The error of an exchange still under way after `deadline`, after `received` bytes of its body.
    ///
    /// ```swift
    /// throw limits.deadlineError(request: "GET https://api.example.com/people", received: 1_024)
    /// ```
    public func deadlineError(request: String, received: Int64) -> ClientError {
        ClientError(.timeout, "the response body did not end within \(Self.describe(deadline)) (the body deadline; "
                    + "raise it with bodyLimits.deadline or --body-timeout); \(Self.describe(bytes: received)) had arrived",
                    request: request)
    }

    /// The error of a body past `maxBytes`, after `received` bytes; `encoding` is its
    /// `Content-Encoding` when it was decompressed.
    ///
    /// ```swift
    /// throw limits.tooLargeError(request: "GET https://api.example.com/people", received: 1 << 30, encoding: "gzip")
    /// ```
    public func tooLargeError(request: String, received: Int64, encoding: String? = nil) -> ClientError {
        let inflated = encoding.map { " once decompressed (Content-Encoding: \($0))" } ?? ""
        return ClientError(.bodyTooLarge, "the response body is larger than \(Self.describe(bytes: maxBytes))\(inflated) "
                           + "(the maximum body size; raise it with bodyLimits.maxBytes or --max-body); "
                           + "\(Self.describe(bytes: received)) had arrived and the rest was not read", request: request)
    }

    /// `60 s`, `1.5 s`, `30 min`.
    static func describe(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        if seconds >= 120, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60)) min" }
        if seconds == seconds.rounded() { return "\(Int(seconds)) s" }
        return String(format: "%.3g s", seconds)
    }

    /// `1 GiB (1,073,741,824 bytes)`, `512 bytes`.
    static func describe(bytes: Int64) -> String {
        ByteCount.describe(bytes)
    }
}

/// A response body that fails past ``BodyLimits/maxBytes``: the client's own check, whatever
/// the transport (``HTTPTransport`` checks too, and stops reading there).
struct LimitedBody: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    let body: ResponseBody
    let limits: BodyLimits
    let request: String
    let encoding: String?

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: ResponseBody.AsyncIterator
        let limits: BodyLimits
        let request: String
        let encoding: String?
        var received: Int64 = 0

        mutating func next() async throws -> [UInt8]? {
            guard let chunk = try await base.next() else { return nil }
            received += Int64(chunk.count)
            if received > limits.maxBytes {
                throw limits.tooLargeError(request: request, received: received, encoding: encoding)
            }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: body.makeAsyncIterator(), limits: limits, request: request, encoding: encoding)
    }
}
