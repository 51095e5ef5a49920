import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Replica
import ReplicaHTTP
import ReplicaTestSupport
import Testing

/// What a hostile server saw and when to stop: each request's path and header names, and a flag
/// its endless answers check so that they end once the test is done.
final class HostileLog: Sendable {
    /// A request seen: its path and query, its headers by lowercased name, when it came.
    struct Seen: Sendable {
        var path: String
        var headers: [String: String]
        var at: ContinuousClock.Instant
    }

    private let requests = Locked<[Seen]>([])
    private let stopped = Locked(false)

    func record(_ request: Request) {
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let seen = Seen(path: request.uri.string, headers: headers, at: .now)
        requests.withLock { $0.append(seen) }
    }

    /// The requests seen so far.
    var seen: [Seen] { requests.withLock { $0 } }

    func stop() { stopped.withLock { $0 = true } }
    var isStopped: Bool { stopped.withLock { $0 } }
}

/// Two servers on 127.0.0.1 (two origins: their ports differ) answering `/people` as a hostile
/// upstream would, by `?mode=`: the home server is the API the client is configured for, the
/// other one a host its links and redirects lead to. Endless answers end when the client drops
/// them, or at `stop()`.
struct HostileAPI {
    let home: StreamingServer
    let other: StreamingServer
    let homeLog: HostileLog
    let otherLog: HostileLog
    let store: Store
    let engine: SQLiteReplica
    let directory: TemporaryDirectory
    /// A gzip of `[` and 16 MiB of spaces (16 KiB or so), and a gzip of a 20,000-person page.
    let bomb: [UInt8]
    let page: (json: [UInt8], gzip: [UInt8])

    static let link = HTTPField.Name("Link")!
    static let location = HTTPField.Name("Location")!
    static let retryAfter = HTTPField.Name("Retry-After")!
    static let contentEncoding = HTTPField.Name("Content-Encoding")!

    static func start() async throws -> HostileAPI {
        let directory = try TemporaryDirectory("replica-hostile")
        let bomb = try gzip(Array("[".utf8) + [UInt8](repeating: 0x20, count: 16 << 20), in: directory)
        let name = String(repeating: "a person of the same long name as the next one ", count: 4)
        let people = (1...20_000).map { #"{"id": \#($0), "name": "\#(name)", "numberOfKids": 2}"# }
        let json = Array(("[" + people.joined(separator: ",\n") + "]").utf8)
        let page = (json, try gzip(json, in: directory))
        let (homeLog, otherLog) = (HostileLog(), HostileLog())
        let other = try await StreamingServer.start(otherRouter(log: otherLog))
        let home = try await StreamingServer.start(homeRouter(log: homeLog, other: other.port, bomb: bomb, gzipPage: page.1))
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json"))
        let store = try Store(path: directory.path("people.sqlite"), schema: schema)
        return HostileAPI(home: home, other: other, homeLog: homeLog, otherLog: otherLog, store: store,
                          engine: try SQLiteReplica(store: store), directory: directory, bomb: bomb, page: page)
    }

    /// A client of the home server sending credentials three ways (fixed headers and a provider),
    /// with a head timeout that is only a hang guard.
    func client(_ configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> ReplicaClient {
        let base = try #require(URL(string: "http://127.0.0.1:\(home.port)"))
        var configuration = ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: base])
        configuration.timeout = .seconds(60)
        configuration.headers["Authorization"] = "Bearer secret"
        configuration.headers["X-Api-Key"] = "key"
        configuration.headerProviders = [.header("X-Token") { "token" }]
        configure(&configuration)
        return ReplicaClient(engine: engine, configuration: configuration)
    }

    /// The people rows, to compare before and after a failed sync.
    func people() throws -> [EntityRow] { try store.rows("Person") }

    func stop() async {
        homeLog.stop()
        otherLog.stop()
        await home.stop()
        await other.stop()
        directory.remove()
    }

    /// `bytes` compressed by the system's gzip.
    static func gzip(_ bytes: [UInt8], in directory: TemporaryDirectory) throws -> [UInt8] {
        let input = directory.url("gzip-\(UUID().uuidString)")
        try Data(bytes).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gzip")
        process.arguments = ["-9", "-f", input.path]
        try process.run()
        process.waitUntilExit()
        return Array(try Data(contentsOf: input.appendingPathExtension("gz")))
    }

    static func json(_ text: String, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: .ok, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// The other origin: a second page, its requests logged.
    static func otherRouter(log: HostileLog) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/people") { request, _ -> Response in
            log.record(request)
            return json(#"[{"id": 4, "name": "dee"}]"#)
        }
        return router
    }

    /// The home server's `/people?mode=…` answers.
    static func homeRouter(log: HostileLog, other: Int, bomb: [UInt8], gzipPage: [UInt8]) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/people") { request, _ -> Response in
            log.record(request)
            let query = request.uri.queryParameters
            let n = query["n"].flatMap { Int(String($0)) } ?? 1
            switch query["mode"].map(String.init) ?? "" {
            case "seed":
                return json(#"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]"#)
            case "cross":
                return json(#"[{"id": 3, "name": "cy"}]"#, headers: [link: "<http://127.0.0.1:\(other)/people?page=2>; rel=\"next\""])
            case "redirect-cross":
                return Response(status: .found, headers: [location: "http://127.0.0.1:\(other)/people?page=2"])
            case "redirect-same":
                return Response(status: .movedPermanently, headers: [location: "/people?mode=seed"])
            case "loop":
                return Response(status: .found, headers: [location: "/people?mode=loop&n=\(n == 1 ? 2 : 1)"])
            case "chain":
                return Response(status: .temporaryRedirect, headers: [location: "/people?mode=chain&n=\(n + 1)"])
            case "stall":
                return streaming(log) { _ in nil }
            case "trickle":
                return streaming(log) { _ in (" ", .milliseconds(100)) }
            case "endless":
                return streaming(log) { index in (String(repeating: #"{"id": \#(index), "name": "x"},"#, count: 1000), nil) }
            case "whitespace":
                return streaming(log) { _ in (String(repeating: " ", count: 65_536), nil) }
            case "bomb":
                return Response(status: .ok, headers: [.contentType: "application/json", contentEncoding: "gzip"],
                                body: ResponseBody(byteBuffer: ByteBuffer(bytes: bomb)))
            case "gzip":
                return Response(status: .ok, headers: [.contentType: "application/json", contentEncoding: "gzip"],
                                body: ResponseBody(byteBuffer: ByteBuffer(bytes: gzipPage)))
            case "pages":
                // 50 pages of 1,000 people (about 40 KB each), each linking to the next.
                let people = (0..<1000).map { #"{"id": \#(n * 1000 + $0), "name": "person \#(n * 1000 + $0)"}"# }
                let next = n < 50 ? [link: "</people?mode=pages&n=\(n + 1)>; rel=\"next\""] : [:]
                return json("[" + people.joined(separator: ",") + "]", headers: HTTPFields(next.map { HTTPField(name: $0.key, value: $0.value) }))
            case "busy":
                return Response(status: .tooManyRequests, headers: [retryAfter: "2"])
            default:
                return Response(status: .notFound)
            }
        }
        return router
    }

    /// A 200 whose body is `[` and then, piece after piece, what `piece(index)` gives (a text and
    /// a pause before the next), forever: until the client drops it or the test stops; `nil`
    /// sends nothing more (a stall).
    static func streaming(_ log: HostileLog, piece: @escaping @Sendable (Int) -> (String, Duration?)?) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody { writer in
            try await writer.write(ByteBuffer(string: "["))
            var index = 0
            while !log.isStopped {
                guard let (text, pause) = piece(index) else {
                    try await Task.sleep(for: .milliseconds(50))
                    continue
                }
                try await writer.write(ByteBuffer(string: text))
                if let pause { try await Task.sleep(for: pause) }
                index += 1
            }
            try await writer.finish(nil)
        })
    }
}
