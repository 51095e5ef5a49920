import Foundation
import ReplicaCore

/// What a response says of the client's rate limit: GitHub's and Twitter's `X-RateLimit-*`
/// (`X-Rate-Limit-*`), GitLab's `RateLimit-*`, and the IETF draft's `RateLimit` field in both
/// of its forms (`limit=100, remaining=0, reset=50` and `"default";r=0;t=50`).
///
/// A reset given as a number of at least 1,000,000,000 is a Unix time (GitHub, GitLab,
/// Twitter); a smaller one is seconds from now (the IETF drafts).
///
/// ```swift
/// let status = RateLimitStatus.read(response.headers)
/// if let status, status.isExhausted, let reset = status.reset { print("wait until", reset) }
/// ```
public struct RateLimitStatus: Sendable, Hashable, CustomStringConvertible {
    /// The requests allowed in the window, when given.
    public var limit: Int?
    /// The requests left in the window.
    public var remaining: Int
    /// When the window resets, when given.
    public var reset: Date?
    /// The header that gave the remaining count (`X-RateLimit-Remaining`, `RateLimit`).
    public var header: String

    /// Whether no request is left until the reset.
    public var isExhausted: Bool { remaining <= 0 }

    /// `X-RateLimit-Remaining: 0, resets at 2026-12-07T06:00:00Z`.
    public var description: String {
        var text = "\(header): \(remaining)"
        if let reset { text += ", resets at " + ISO8601DateFormatter().string(from: reset) }
        return text
    }

    /// The wait until the reset, from `now` (never negative); `nil` without a reset.
    public func wait(from now: Date = Date()) -> Duration? {
        reset.map { Duration.clamped(seconds: max(0, $0.timeIntervalSince(now)), to: .seconds(366 * 86_400)) }
    }

    /// The rate limit `headers` describe, or `nil` when they name none.
    ///
    /// ```swift
    /// RateLimitStatus.read(["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1767225600"])?.reset
    /// ```
    public static func read(_ headers: HeaderFields, now: Date = Date()) -> RateLimitStatus? {
        for prefix in ["X-RateLimit-", "X-Rate-Limit-", "RateLimit-"] {
            guard let text = headers[prefix + "Remaining"], let remaining = integer(text) else { continue }
            return RateLimitStatus(limit: headers[prefix + "Limit"].flatMap(integer), remaining: remaining,
                                   reset: headers[prefix + "Reset"].flatMap { resetDate($0, now: now) }, header: prefix + "Remaining")
        }
        guard let field = headers["RateLimit"] else { return nil }
        return structured(field, now: now)
    }

    /// The IETF field: `limit=100, remaining=0, reset=50` (drafts up to 06), or one item per
    /// policy, `"default";r=0;t=50` (07 on); the item with the fewest requests left counts.
    static func structured(_ field: String, now: Date) -> RateLimitStatus? {
        var flat: [String: String] = [:]
        var best: RateLimitStatus?
        for item in field.split(separator: ",") {
            var parameters: [String: String] = [:]
            for part in item.split(separator: ";") {
                let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2 else { continue }
                parameters[pair[0].lowercased()] = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            flat.merge(parameters) { first, _ in first }
            guard let remaining = parameters["r"].flatMap(integer) else { continue }
            let status = RateLimitStatus(limit: nil, remaining: remaining, reset: parameters["t"].flatMap { resetDate($0, now: now) },
                                         header: "RateLimit")
            if best.map({ remaining < $0.remaining }) ?? true { best = status }
        }
        if let best { return best }
        guard let remaining = flat["remaining"].flatMap(integer) else { return nil }
        return RateLimitStatus(limit: flat["limit"].flatMap(integer), remaining: remaining,
                               reset: flat["reset"].flatMap { resetDate($0, now: now) }, header: "RateLimit")
    }

    static func integer(_ text: String) -> Int? {
        Int(text.trimmingCharacters(in: .whitespaces))
    }

    /// A reset as a Unix time (at least 1,000,000,000) or seconds from `now`.
    static func resetDate(_ text: String, now: Date) -> Date? {
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite, value >= 0 else { return nil }
        return value >= 1_000_000_000 ? Date(timeIntervalSince1970: value) : now.addingTimeInterval(value)
    }
}

extension ClientResponse {
    /// The rate limit this response says is used up: a 403 or 429 whose headers leave no request
    /// (GitHub answers 403 for it); `nil` otherwise.
    var exhaustedRateLimit: RateLimitStatus? {
        guard status == 403 || status == 429, let limit = RateLimitStatus.read(headers), limit.isExhausted else { return nil }
        return limit
    }
}
