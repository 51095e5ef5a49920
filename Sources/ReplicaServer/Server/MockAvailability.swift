import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// How a mock server that is down (``MockServer/goDown(_:)``) fails every request but its control routes.
///
/// ```swift
/// server.goDown(.unavailable(retryAfter: 2))   // 503 with Retry-After: 2
/// server.goDown(.dropConnection)               // the connection closes unanswered: a network error
/// ```
public enum MockOutage: Sendable, Hashable {
    /// Answer 503 Service Unavailable with `Retry-After` (in seconds, a negative value as 0) and a JSON error.
    case unavailable(retryAfter: Int = 1)
    /// Close the connection without answering, as the ``MockFault/Kind/dropConnection`` fault does.
    case dropConnection
}

/// The server's control routes, under `/_replica/` (a resource may not be named `_replica`), answered
/// whether the server is up or down:
///
/// | route | effect |
/// |---|---|
/// | `POST /_replica/down` | down with 503 and `Retry-After: 1`; `?retry_after=N` for N seconds, `?mode=drop` to drop connections |
/// | `POST /_replica/up` | up again |
/// | `GET /_replica/status` | `{"available": true}`, or `false` with the outage's `mode` |
extension MockServer {
    /// The path prefix of the control routes; no resource or API route may use it.
    static let controlPrefix = "_replica"

    /// Takes the API down: until ``comeUp()``, every request but the control routes (`/_replica/…`)
    /// fails as `outage` says. Requests already being handled finish.
    ///
    /// ```swift
    /// server.goDown()                    // 503 with Retry-After: 1
    /// server.goDown(.dropConnection)     // clients see a network error
    /// server.comeUp()
    /// ```
    /// - Parameters:
    ///   - outage: how requests fail, 503 with `Retry-After: 1` by default.
    public func goDown(_ outage: MockOutage = .unavailable()) {
        availability.withLock { $0 = outage }
    }

    /// Brings the API back after ``goDown(_:)`` (or ``MockServerOptions/outage``).
    ///
    /// ```swift
    /// server.comeUp()
    /// ```
    public func comeUp() {
        availability.withLock { $0 = nil }
    }

    /// The outage in force, nil while the API is up.
    ///
    /// ```swift
    /// if server.outage != nil { server.comeUp() }
    /// ```
    public var outage: MockOutage? {
        availability.withLock { $0 }
    }

    /// The answer to a control route, nil for any other path.
    func controlResponse(_ request: Request) -> MockResponse? {
        let segments = request.uri.path.split(separator: "/", omittingEmptySubsequences: true)
        guard segments.first.map(String.init) == Self.controlPrefix else { return nil }
        let method = request.method.rawValue
        let action = segments.count == 2 ? String(segments[1]) : ""
        let allowed = ["down": "POST", "up": "POST", "status": "GET"]
        guard let wanted = allowed[action] else {
            return Self.error(.notFound("no control route \(request.uri.path); \(Self.controlPrefix) has down, up and status"))
        }
        guard method == wanted || (wanted == "GET" && method == "HEAD") else {
            var error = MockHTTPError(status: 405, code: "methodNotAllowed", message: "\(method) is not allowed here; allowed: \(wanted)")
            error.allow = [wanted]
            return Self.error(error)
        }
        switch action {
        case "down":
            let items = MockPath.queryItems(request.uri.query) ?? []
            let mode = items.last { $0.name == "mode" }?.value ?? "unavailable"
            let retryText = items.last { $0.name == "retry_after" }?.value ?? "1"
            guard let retryAfter = Int(retryText), (0...86_400).contains(retryAfter) else {
                return Self.error(.badRequest("retry_after takes whole seconds from 0 to 86400, not '\(retryText)'", code: "invalidParameter"))
            }
            switch mode {
            case "unavailable": goDown(.unavailable(retryAfter: retryAfter))
            case "drop": goDown(.dropConnection)
            default: return Self.error(.badRequest("mode takes unavailable or drop, not '\(mode)'", code: "invalidParameter"))
            }
        case "up":
            comeUp()
        default:
            break
        }
        return .json(Self.status(of: outage))
    }

    /// `{"available": false, "mode": "unavailable", "retryAfter": 1}`.
    private static func status(of outage: MockOutage?) -> JSONValue {
        switch outage {
        case nil: return .object(["available": true])
        case .unavailable(let retryAfter)?:
            return .object(["available": false, "mode": "unavailable", "retryAfter": .int(Int64(retryAfter))])
        case .dropConnection?: return .object(["available": false, "mode": "drop"])
        }
    }

    /// The 503 of a server down with ``MockOutage/unavailable(retryAfter:)``.
    static func unavailable(retryAfter: Int) -> MockResponse {
        var response = error(MockHTTPError(status: 503, code: "serviceUnavailable",
                                           message: "the API is down (POST /\(controlPrefix)/up brings it back)"))
        response.headers.append((name: "Retry-After", value: String(max(0, retryAfter))))
        return response
    }
}
