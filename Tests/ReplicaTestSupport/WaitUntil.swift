import Foundation

/// Polls `condition` every few milliseconds until it holds; throws ``WaitTimeout`` when it still
/// does not after `timeout`, so a test fails saying what it waited for instead of hanging or
/// asserting after a fixed sleep.
///
/// ```swift
/// try await waitUntil("two change sets") { changes.count == 2 }
/// ```
///
/// - Parameters:
///   - what: what the test waits for, for the error.
///   - timeout: how long to wait at most (5 s unless told).
///   - condition: the condition, evaluated in the caller's isolation.
/// - Throws: ``WaitTimeout`` at the deadline; `CancellationError` when the task is cancelled.
package func waitUntil(
    _ what: String = "condition",
    timeout: Duration = .seconds(5),
    isolation: isolated (any Actor)? = #isolation,
    fileID: String = #fileID, line: Int = #line,
    _ condition: () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while !(try await condition()) {
        guard clock.now < deadline else { throw WaitTimeout(what: what, timeout: timeout, fileID: fileID, line: line) }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// The error of ``waitUntil(_:timeout:isolation:fileID:line:_:)``: what was awaited, for how long, and where.
///
/// ```swift
/// do {
///     try await waitUntil("two change sets") { changes.count == 2 }
/// } catch let timeout as WaitTimeout {
///     print(timeout)   // two change sets: not met within 5.0 seconds (ReplicaTests/SyncSessionTests.swift:34)
/// }
/// ```
package struct WaitTimeout: Error, CustomStringConvertible {
    /// What the test waited for.
    package let what: String
    /// How long it waited.
    package let timeout: Duration
    /// The file (`Module/File.swift`) and line of the `waitUntil` call.
    package let fileID: String
    package let line: Int

    package var description: String {
        "\(what): not met within \(timeout) (\(fileID):\(line))"
    }
}
