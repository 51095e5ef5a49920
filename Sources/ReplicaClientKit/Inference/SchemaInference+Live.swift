import Foundation
import ReplicaCore

extension SchemaInference {
    /// Fetches `path` from a live API and adds each page as a sample: `GET baseURL + path`, then the
    /// `Link: <…>; rel="next"` pages that follow, up to `maxPages`. Each body is read as it arrives,
    /// in bounded memory, as a file is. The path is the sample of the first pattern of `routes` it
    /// matches (`/repos/apple/swift/issues` of `/repos/:owner/:repo/issues`, whose variables become
    /// scope attributes, typed from what their values in the path are: see
    /// ``add(_:route:source:requestPath:)``), else of itself without its query.
    ///
    /// ```swift
    /// var inference = SchemaInference(name: "github")
    /// let pages = try await inference.addPath("/repos/apple/swift/issues?per_page=100",
    ///                                         baseURL: URL(string: "https://api.github.com")!,
    ///                                         routes: ["/repos/:owner/:repo/issues"], transport: transport)
    /// ```
    /// - Parameters:
    ///   - path: the path (and query) to fetch.
    ///   - baseURL: the API's address.
    ///   - routes: route patterns the path may match.
    ///   - transport: how requests are sent (`HTTPTransport` from ReplicaHTTP, or a test double).
    ///   - headers: headers sent with every request (`Authorization`, `Accept`).
    ///   - maxPages: the most pages read of the path; later pages are not fetched.
    ///   - timeout: the limit of each request.
    /// - Returns: the number of pages read.
    /// - Throws: ``SchemaError`` `.fetchFailed` naming the URL for a failed request or a status other
    ///   than 2xx (with the start of the error body) or a next page link to another origin,
    ///   `.invalidJSON` naming the URL and byte offset of a malformed body.
    @discardableResult
    public mutating func addPath(_ path: String, baseURL: URL, routes: [String] = [], transport: any Transport,
                                 headers: HeaderFields = HeaderFields(), maxPages: Int = 10,
                                 timeout: Duration = .seconds(60)) async throws -> Int {
        // The path follows the base URL's own path (`https://api.example.com/v1` + `/users`), as the client's calls do.
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += path.hasPrefix("/") ? path : "/" + path
        guard let first = URL(string: text) else { throw SchemaError(.fetchFailed, "\(path) is no path of \(baseURL)") }
        let bare = String(path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        let route = Self.route(for: bare.hasPrefix("/") ? bare : "/" + bare, patterns: routes)
        var url: URL? = first
        var pages = 0
        var seen: Set<URL> = []
        var requestHeaders = headers
        if requestHeaders["Accept"] == nil { requestHeaders["Accept"] = "application/json" }
        let firstRequest = ClientRequest(method: .get, url: first, headers: requestHeaders, timeout: timeout)
        while let next = url, pages < max(1, maxPages), seen.insert(next).inserted {
            // A next link to another origin is not followed: the headers (credentials) were given for the first.
            guard next == first || firstRequest.mayFollow(to: next) else {
                throw SchemaError(.fetchFailed, "GET \(first.absoluteString): the next page link leads to \(next.absoluteString), "
                                  + "another origin than the base URL's; it is not followed, so that the headers given go nowhere else")
            }
            let request = firstRequest.moved(to: next)
            let response: ClientResponse
            do {
                response = try await transport.send(request)
            } catch {
                throw SchemaError(.fetchFailed, "GET \(next.absoluteString): \(error)")
            }
            guard (200..<300).contains(response.status) else {
                let body = try? await response.body.collect(upTo: 4096)
                let text = body.map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
                throw SchemaError(.fetchFailed, "GET \(next.absoluteString): HTTP \(response.status)\(text.isEmpty ? "" : ": " + text)")
            }
            let contentType = response.headers["Content-Type"]?.lowercased() ?? ""
            let format: InputFormat = contentType.contains("ndjson") || contentType.contains("jsonl") ? .ndjson : .json
            let source = next.absoluteString
            let routeSamples = samples(for: route, source: source)
            // A path matched to a pattern gives the values of its variables.
            if route != bare { routeSamples.record(requestPath: bare) }
            let reader = SampleStream(routeSamples, format: format, source: source)
            do {
                for try await chunk in response.body { try reader.feed(chunk) }
            } catch let error as SchemaError {
                throw error
            } catch {
                throw SchemaError(.fetchFailed, "GET \(source): the body broke off: \(error)")
            }
            try reader.finish()
            pages += 1
            url = ReplicaClient.nextLink(response.headers, relativeTo: next)
        }
        return pages
    }

    /// The route a concrete path answers: the first of `patterns` whose segments match it (a
    /// `:variable` or `{variable}` matches one segment), else the path itself.
    ///
    /// ```swift
    /// SchemaInference.route(for: "/repos/apple/swift/issues", patterns: ["/repos/:owner/:repo/issues"])
    /// // "/repos/:owner/:repo/issues"
    /// ```
    /// - Parameters:
    ///   - path: a path without its query.
    ///   - patterns: route patterns.
    /// - Returns: the matching pattern, or `path`.
    public static func route(for path: String, patterns: [String]) -> String {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        for pattern in patterns {
            let parts = pattern.split(separator: "/", omittingEmptySubsequences: true)
            guard parts.count == segments.count else { continue }
            let matches = zip(parts, segments).allSatisfy { part, segment in
                part.hasPrefix(":") || (part.hasPrefix("{") && part.hasSuffix("}")) || part == segment
            }
            if matches { return pattern }
        }
        return path
    }
}

extension Schema {
    /// Infers a schema from sample files: each the response of the route named after it
    /// (`people.json` → `/people`) or of the pattern `routes` gives it. See ``SchemaInference``.
    ///
    /// ```swift
    /// let inferred = try Schema.infer(name: "github", files: ["users.json"],
    ///                                 routes: ["issues.json": "/repos/:owner/:repo/issues"])
    /// try inferred.text.write(toFile: "github.json", atomically: true, encoding: .utf8)
    /// for note in inferred.notes { print(note) }   // Issue.closedAt at issues.json#/0/closed_at: …
    /// ```
    /// - Parameters:
    ///   - name: the schema's name.
    ///   - files: sample files (JSON, or NDJSON as their names say).
    ///   - routes: the route pattern of files (file → pattern); a file here need not be in `files`.
    /// - Returns: the schema, its file's JSON and what had to be guessed.
    /// - Throws: ``SchemaError`` for an unreadable file, malformed JSON, or samples with no key.
    public static func infer(name: String, files: [String], routes: [String: String] = [:]) throws -> InferredSchema {
        var inference = SchemaInference(name: name)
        for file in routes.keys.sorted() where !files.contains(file) { try inference.addFile(file, route: routes[file]) }
        for file in files { try inference.addFile(file, route: routes[file]) }
        return try inference.infer()
    }

    /// Infers a schema from a live API: each path fetched with its `Link` pages (see
    /// ``SchemaInference/addPath(_:baseURL:routes:transport:headers:maxPages:timeout:)``).
    ///
    /// ```swift
    /// let inferred = try await Schema.infer(name: "github", baseURL: URL(string: "https://api.github.com")!,
    ///                                       paths: ["/repos/apple/swift/issues"], routes: ["/repos/:owner/:repo/issues"],
    ///                                       transport: HTTPTransport())
    /// ```
    /// - Parameters:
    ///   - name: the schema's name.
    ///   - baseURL: the API's address.
    ///   - paths: the paths to fetch.
    ///   - routes: route patterns the paths may match.
    ///   - headers: headers sent with every request.
    ///   - maxPages: the most pages read of each path.
    ///   - transport: how requests are sent.
    /// - Returns: the schema, its file's JSON and what had to be guessed.
    /// - Throws: ``SchemaError`` `.fetchFailed`, `.invalidJSON`, or `.cannotInfer`.
    public static func infer(name: String, baseURL: URL, paths: [String], routes: [String] = [],
                             headers: HeaderFields = HeaderFields(), maxPages: Int = 10,
                             transport: any Transport) async throws -> InferredSchema {
        var inference = SchemaInference(name: name)
        for path in paths {
            try await inference.addPath(path, baseURL: baseURL, routes: routes, transport: transport, headers: headers, maxPages: maxPages)
        }
        return try inference.infer()
    }
}
