import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The `static` server child of `sync-pages`: a fast static upstream. The pages of both
/// revisions of the people are rendered into memory before it listens (untimed), and each
/// request is answered with its page's bytes as they are, a strong ETag (and 304 to a matching
/// `If-None-Match`) and `Link: <…>; rel="next"` on every page but the last, as a CDN or a
/// cache in front of an API answers. What a sync against it costs is the client's alone: the
/// transfer, parsing and writing.
///
/// Driven like the mock server child (``SyncPagesServer``): it writes `port`, switches to the
/// second revision on `load-second` (writing `load-second.done`) and stops on `stop`.
enum StaticPagesServer {
    /// One revision's pages: bytes and ETag by page number (from 1).
    struct Pages: Sendable {
        var bodies: [ByteBuffer]
        var etags: [String]

        init(count: Int, revision: Int, pageCount: Int) {
            let size = count / pageCount
            bodies = (0..<pageCount).map { page in
                ByteBuffer(bytes: PeopleData(count: count, revision: revision).pageJSON(from: page * size, to: min(count, (page + 1) * size)))
            }
            etags = bodies.map { "\"\(revision)-\($0.readableBytes)-\($0.hashValue)\"" }
        }
    }

    static func run(_ request: WorkerRequest) async throws -> WorkerReply {
        let control = try request.require("control")
        guard let count = Int(try request.require("count")) else { throw BenchmarkError("sync-pages: bad count") }
        let pageCount = SyncPagesWorkload.pageCount
        let revisions = [0, 1].map { Pages(count: count, revision: $0, pageCount: pageCount) }
        let current = NIOLockedValueBox(0)
        let limit = count / pageCount

        let router = Router()
        router.get("people") { request, _ -> Response in
            let pages = revisions[current.withLockedValue { $0 }]
            let page = request.uri.queryParameters.get("_page").flatMap { Int($0) } ?? 1
            var headers: HTTPFields = [.contentType: "application/json"]
            guard pages.bodies.indices.contains(page - 1) else {
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: "[]")))
            }
            headers[.eTag] = pages.etags[page - 1]
            if page < pages.bodies.count, let link = HTTPField.Name("Link") {
                headers[link] = "</people?_page=\(page + 1)&_limit=\(limit)>; rel=\"next\""
            }
            if request.headers[.ifNoneMatch] == pages.etags[page - 1] {
                return Response(status: .notModified, headers: headers)
            }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: pages.bodies[page - 1]))
        }
        var logger = Logger(label: "sync-pages.static")
        logger.logLevel = .critical
        let port = NIOLockedValueBox<Int?>(nil)
        let app = Application(router: router,
                              configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0), serverName: nil),
                              onServerRunning: { channel in port.withLockedValue { $0 = channel.localAddress?.port } },
                              logger: logger)
        let serving = Task { try await app.runService(gracefulShutdownSignals: []) }
        defer { serving.cancel() }
        let deadline = ContinuousClock.now + .seconds(1800)
        while port.withLockedValue({ $0 }) == nil {
            guard ContinuousClock.now < deadline else { throw BenchmarkError("sync-pages: the static server did not listen") }
            try await Task.sleep(for: .milliseconds(10))
        }
        try SyncPagesServer.writePID(control)
        try Data(String(port.withLockedValue { $0 } ?? 0).utf8).write(to: URL(fileURLWithPath: path(control, "port")), options: .atomic)
        while !FileManager.default.fileExists(atPath: path(control, "stop")) && ContinuousClock.now < deadline {
            if current.withLockedValue({ $0 }) == 0 && FileManager.default.fileExists(atPath: path(control, "load-second")) {
                current.withLockedValue { $0 = 1 }
                _ = FileManager.default.createFile(atPath: path(control, "load-second.done"), contents: nil)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return WorkerReply()
    }

    private static func path(_ control: String, _ name: String) -> String {
        (control as NSString).appendingPathComponent(name)
    }
}
