import Hummingbird
import NIOCore

/// The request context: Hummingbird's core storage plus the connection, for dropped-connection faults.
struct MockRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        channel = source.channel
    }

    /// Bodies are limited by `MockServerOptions.maxBodySize` while they are read.
    var maxUploadSize: Int { .max }
}

/// Hands every request to the server's own routing, so resources can change while it runs.
struct MockResponder: HTTPResponder {
    typealias Context = MockRequestContext
    let server: MockServer

    func respond(to request: Request, context: MockRequestContext) async throws -> Response {
        await server.respond(to: request, channel: context.channel)
    }
}
