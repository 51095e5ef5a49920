import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// Origins, the hosts a client may move to, and the headers that go with a move.
@Suite("Origins, allowed hosts and the headers of a move")
struct OriginTests {
    static func url(_ text: String) throws -> URL { try #require(URL(string: text)) }
    static func origin(_ text: String) throws -> Origin { try #require(Origin(try url(text))) }

    @Test("an origin is scheme, host and port, the default port implied and left out of its text")
    func origins() throws {
        #expect(try Self.origin("https://API.example.com/people?page=2") == Self.origin("https://api.example.com:443/x"))
        #expect(try Self.origin("http://api.example.com") != Self.origin("https://api.example.com"))
        #expect(try Self.origin("http://127.0.0.1:8080/") != Self.origin("http://127.0.0.1:8081/"))
        #expect(try Self.origin("https://api.example.com:443/").description == "https://api.example.com")
        #expect(try Self.origin("http://127.0.0.1:8080/people").description == "http://127.0.0.1:8080")
    }

    @Test("allowed hosts: *, an origin, host:port, host, *.domain; https → http only when the entry names http",
          arguments: [
            ("https://cdn.example.com/p", ["cdn.example.com"], true),
            ("https://cdn.example.com:8443/p", ["cdn.example.com"], true),
            ("https://cdn.example.com:8443/p", ["cdn.example.com:443"], false),
            ("https://cdn.example.com:8443/p", ["cdn.example.com:8443"], true),
            ("https://eu.cdn.example.com/p", ["*.example.com"], true),
            ("https://example.org/p", ["*.example.com"], false),
            ("http://cdn.example.com/p", ["cdn.example.com"], false),
            ("http://cdn.example.com/p", ["http://cdn.example.com"], true),
            ("https://evil.example.net/p", [], false),
            ("https://evil.example.net/p", ["*"], true),
          ])
    func allowedHosts(target: String, entries: [String], allowed: Bool) throws {
        let api = try Self.origin("https://api.example.com")
        #expect(try Self.origin(target).isAllowed(by: entries, from: api) == allowed)
    }

    @Test("a move to another origin keeps only the headers that name no one; back home they all return")
    func moveHeaders() throws {
        var request = ClientRequest(method: .get, url: try Self.url("https://api.example.com/people"),
                                    headers: ["Authorization": "Bearer a", "X-Api-Key": "k", "Cookie": "s=1",
                                              "Accept": "application/json", "User-Agent": "replica"])
        request.allowedHosts = ["cdn.example.com"]
        let away = request.moved(to: try Self.url("https://cdn.example.com/people?page=2"))
        #expect(away.headers.fields.map(\.name).sorted() == ["Accept", "User-Agent"])
        #expect(away.headersOrigin == (try Self.origin("https://api.example.com")))
        #expect(request.mayFollow(to: try Self.url("https://cdn.example.com/x")))
        #expect(!request.mayFollow(to: try Self.url("https://other.example.com/x")))
        // A redirect chain computes each hop's headers from the first request's.
        let back = away.redirected(status: 302, to: try Self.url("https://api.example.com/people?page=2"), original: request)
        #expect(back.headers["Authorization"] == "Bearer a" && back.headers["Cookie"] == "s=1")
        let error = request.crossOriginError(to: try Self.url("https://other.example.com/x"), what: "a redirect")
        #expect(error.code == .crossOrigin)
        #expect(error.message.contains("https://other.example.com") && error.message.contains("https://api.example.com"))
    }

    @Test("a 303 (and a 301 or 302 after a POST) becomes a GET without a body; a 307 keeps both")
    func redirectMethods() throws {
        var post = ClientRequest(method: .post, url: try Self.url("https://api.example.com/people"),
                                 headers: ["Content-Type": "application/json"], body: .bytes(Array("{}".utf8)))
        post.allowedHosts = []
        let target = try Self.url("https://api.example.com/people/1")
        for status in [301, 302, 303] {
            let next = post.redirected(status: status, to: target, original: post)
            #expect(next.method == .get && next.body == .none && next.headers["Content-Type"] == nil, "\(status)")
        }
        let kept = post.redirected(status: 307, to: target, original: post)
        #expect(kept.method == .post && kept.body == .bytes(Array("{}".utf8)))
    }

    @Test("a 429's Retry-After is the error's retryAfter; other errors have none")
    func retryAfter() {
        #expect(ClientError(status: 429, headers: ["Retry-After": "20"], body: []).retryAfter == .seconds(20))
        #expect(ClientError(status: 503, headers: ["Retry-After": "1e9"], body: []).retryAfter == .seconds(3600))
        #expect(ClientError(status: 429, body: []).retryAfter == nil)
        #expect(ClientError(.connection, "reset", headers: ["Retry-After": "5"]).retryAfter == nil)
    }

    @Test("body limit messages name the limit, the option that raises it and how much arrived")
    func limitMessages() {
        let limits = BodyLimits(idleTimeout: .seconds(60), deadline: .seconds(1800), maxBytes: 1 << 30)
        let request = "GET https://api.example.com/people"
        #expect(limits.idleError(request: request, received: 2048).description
                == "GET https://api.example.com/people: the response body sent no byte for 60 s (the idle timeout; "
                + "raise it with bodyLimits.idleTimeout or --idle-timeout) after 2 KiB (2048 bytes)")
        #expect(limits.deadlineError(request: request, received: 0).message.contains("within 30 min (the body deadline"))
        #expect(limits.tooLargeError(request: request, received: (1 << 30) + 1, encoding: "gzip").message
                .hasPrefix("the response body is larger than 1 GiB (1073741824 bytes) once decompressed (Content-Encoding: gzip)"))
    }
}
