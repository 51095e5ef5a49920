import ReplicaServer

/// A controller whose creates or updates wait until the test lets them go, so that a second request
/// meets the first still being handled, however slowly the machine runs; every other action is
/// RESTEasy's.
///
/// ```swift
/// let (release, letGo) = AsyncStream<Void>.makeStream()
/// let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
/// server.setController(GatedController(.update, entered: enteredContinuation, release: release), for: "people")
/// // send an update; await entered's first element; send the competing request; letGo.yield()
/// ```
struct GatedController: MockController {
    /// The action that waits.
    enum Gate: Sendable {
        case create
        case update
    }

    let gate: Gate
    /// Told each time a gated request has arrived.
    let entered: AsyncStream<Void>.Continuation
    /// One element lets one gated request go on.
    let release: AsyncStream<Void>

    init(_ gate: Gate, entered: AsyncStream<Void>.Continuation, release: AsyncStream<Void>) {
        self.gate = gate
        self.entered = entered
        self.release = release
    }

    func create(_ request: MockRequest) async throws -> MockResponse {
        if gate == .create { await hold() }
        return try await MockCRUD.create(request)
    }

    func update(_ request: MockRequest) async throws -> MockResponse {
        if gate == .update { await hold() }
        return try await MockCRUD.update(request)
    }

    private func hold() async {
        entered.yield()
        var waiting = release.makeAsyncIterator()
        _ = await waiting.next()
    }
}
