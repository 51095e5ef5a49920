/// Runs `body`, then awaits `teardown` whether `body` returned or threw: the test does not return
/// before its servers, connections and stores are shut down, which a `defer` spawning an unawaited
/// `Task` would let it do.
///
/// ```swift
/// let api = try await PeopleAPI.start()
/// try await withTeardown {
///     #expect(try await api.client.call("/people").status == 200)
/// } teardown: {
///     await api.stop()
/// }
/// ```
///
/// - Parameters:
///   - body: the test's work, in the caller's isolation.
///   - teardown: the shutdown, run once after `body` on every path.
/// - Returns: what `body` returned.
/// - Throws: what `body` threw, after `teardown` ran.
package func withTeardown<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> T,
    teardown: () async -> Void
) async rethrows -> T {
    let result: T
    do {
        result = try await body()
    } catch {
        await teardown()
        throw error
    }
    await teardown()
    return result
}
