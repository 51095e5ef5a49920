import Foundation
import ReplicaCore

/// The origin of a URL (RFC 6454): scheme, host and port. Credentials belong to one origin: the
/// client sends its configured headers only to the origin of the request they were set for.
///
/// ```swift
/// Origin(URL(string: "https://api.example.com/people?page=2")!)?.description   // "https://api.example.com"
/// Origin(URL(string: "http://127.0.0.1:8080/")!)?.port                         // 8080
/// ```
public struct Origin: Sendable, Hashable, CustomStringConvertible {
    /// The scheme, lowercased (`https`).
    public let scheme: String
    /// The host, lowercased (`api.example.com`, `127.0.0.1`).
    public let host: String
    /// The port, the scheme's default when the URL names none (443 for https, 80 for http).
    public let port: Int

    /// The origin of `url`; `nil` for a URL without a scheme or host.
    public init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? Self.defaultPort(scheme) ?? 0
    }

    /// `https://api.example.com`, `http://127.0.0.1:8080` (the port only when it is not the scheme's default).
    public var description: String {
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return port == Self.defaultPort(scheme) ? "\(scheme)://\(shownHost)" : "\(scheme)://\(shownHost):\(port)"
    }

    static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "https": return 443
        case "http": return 80
        default: return nil
        }
    }

    /// Whether one of `allowedHosts` (see ``ClientConfiguration/allowedHosts``) admits this
    /// origin for requests whose headers were configured for `configured`.
    ///
    /// An entry is `*` (any origin), an origin (`https://cdn.example.com`, `http://127.0.0.1:8081`:
    /// exactly that one), `host:port` (that host and port, any scheme), `host` (any port) or
    /// `*.example.com` (its subdomains). Only an entry naming the `http` scheme admits a move from
    /// https to http.
    ///
    /// ```swift
    /// let api = Origin(URL(string: "https://api.example.com")!)!
    /// Origin(URL(string: "https://cdn.example.com/p2")!)!.isAllowed(by: ["cdn.example.com"], from: api)   // true
    /// Origin(URL(string: "http://cdn.example.com/p2")!)!.isAllowed(by: ["cdn.example.com"], from: api)    // false: https → http
    /// ```
    public func isAllowed(by allowedHosts: [String], from configured: Origin) -> Bool {
        let downgrade = configured.scheme == "https" && scheme == "http"
        for raw in allowedHosts {
            let entry = raw.trimmingCharacters(in: .whitespaces).lowercased()
            if entry == "*" { return true }
            if entry.contains("://") {
                if let url = URL(string: entry), let origin = Origin(url), origin == self { return true }
                continue
            }
            if downgrade { continue }
            let (entryHost, entryPort) = Self.split(entry)
            if let entryPort, entryPort != port { continue }
            if entryHost.hasPrefix("*.") {
                if host.hasSuffix(String(entryHost.dropFirst())) { return true }
            } else if entryHost == host || "[\(host)]" == entryHost {
                return true
            }
        }
        return false
    }

    /// `host` and the port of a `host[:port]` entry (`[::1]:8080` too).
    static func split(_ entry: String) -> (host: String, port: Int?) {
        if entry.hasPrefix("["), let close = entry.firstIndex(of: "]") {
            let host = String(entry[entry.index(after: entry.startIndex)..<close])
            let rest = entry[entry.index(after: close)...]
            return (host, rest.hasPrefix(":") ? Int(rest.dropFirst()) : nil)
        }
        let parts = entry.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2, let port = Int(parts[1]) { return (String(parts[0]), port) }
        return (entry, nil)
    }
}

extension ClientRequest {
    /// The headers a request keeps when it goes to an origin its headers were not configured
    /// for (an allowed host a next link or a redirect leads to): they say what the client accepts
    /// and what it is, never who the user is. Every other header (`Authorization`, `Cookie`,
    /// `X-Api-Key`, a header provider's) stays with its origin.
    public static let headersSentToOtherOrigins: Set<String> = [
        "accept", "accept-encoding", "accept-language", "user-agent", "content-type", "content-length",
        "traceparent", "tracestate", "baggage",
    ]

    /// The origin the request's headers were configured for: ``configuredOrigin`` when set, else the URL's.
    public var headersOrigin: Origin? { configuredOrigin ?? Origin(url) }

    /// This request sent to `url` instead: with its headers when `url` is on the origin they
    /// were configured for, else with only ``headersSentToOtherOrigins``.
    ///
    /// ```swift
    /// let next = request.moved(to: URL(string: "https://cdn.example.com/people?page=2")!)
    /// next.headers["Authorization"]   // nil: configured for https://api.example.com
    /// ```
    public func moved(to url: URL) -> ClientRequest {
        var moved = self
        moved.configuredOrigin = headersOrigin
        moved.url = url
        if let configured = moved.configuredOrigin, Origin(url) != configured {
            moved.headers = HeaderFields(headers.fields.filter { Self.headersSentToOtherOrigins.contains($0.name.lowercased()) }
                .map { ($0.name, $0.value) })
        }
        return moved
    }

    /// The request a redirect answer (`status`, `Location` resolved to `url`) asks for, as
    /// browsers and AsyncHTTPClient make it: 303 (and 301 or 302 after a POST) becomes a GET
    /// without a body; the headers go as ``moved(to:)`` says, computed from `original`'s (the
    /// first request of the chain), so that a chain back to the configured origin has them again.
    ///
    /// ```swift
    /// let next = request.redirected(status: 303, to: location, original: request)   // a GET
    /// ```
    public func redirected(status: Int, to url: URL, original: ClientRequest) -> ClientRequest {
        var next = original.moved(to: url)
        next.method = method
        next.body = body
        let toGet = (status == 303 && method != .head) || ((status == 301 || status == 302) && method == .post)
        if toGet {
            next.method = .get
            next.body = .none
            next.headers["Content-Type"] = nil
            next.headers["Content-Length"] = nil
        }
        return next
    }

    /// The error for a move (a next link, a redirect) to an origin ``mayFollow(to:)`` refuses:
    /// ``ClientError/Code/crossOrigin``, naming both origins and how to allow the other.
    ///
    /// ```swift
    /// guard request.mayFollow(to: location) else { throw request.crossOriginError(to: location, what: "a redirect") }
    /// ```
    ///
    /// - Parameters:
    ///   - url: Where the move leads.
    ///   - what: What leads there, for the message: `"the next page link"`, `"a redirect"`.
    /// - Returns: The error to throw.
    public func crossOriginError(to url: URL, what: String) -> ClientError {
        let from = headersOrigin?.description ?? url.absoluteString
        let to = Origin(url)?.description ?? url.absoluteString
        let allow = Origin(url).map { $0.port == Origin.defaultPort($0.scheme) ? $0.host : "\($0.host):\($0.port)" } ?? to
        return ClientError(.crossOrigin, "\(what) leads to \(to), another origin than \(from) the request was made for "
                           + "(\(url.absoluteString)); it is not followed, so that no credentials go there: "
                           + "allow it with allowedHosts / --allow-host \(allow) (it then gets no configured headers)",
                           request: "\(method) \(self.url.absoluteString)")
    }

    /// Whether a move (a next link, a redirect) to `url` may be followed: it stays on the origin
    /// the headers were configured for, or goes to one ``allowedHosts`` admits.
    ///
    /// ```swift
    /// if request.mayFollow(to: location) { next = request.redirected(status: 302, to: location, original: request) }
    /// ```
    public func mayFollow(to url: URL) -> Bool {
        guard let target = Origin(url), let configured = headersOrigin else { return false }
        return target == configured || target.isAllowed(by: allowedHosts, from: configured)
    }
}
