import Foundation

/// Polls a store for writes made by other processes and reports them as unknown changes.
///
/// Stops when ``stop()`` is called or when it is released.
///
/// A store that hears other processes' commits by itself (PostgreSQL, through `LISTEN`) returns
/// one that polls nothing.
///
/// ```swift
/// let monitor = store.detectExternalChanges(every: .milliseconds(250))
/// monitor.stop()
/// ```
///
/// `@unchecked Sendable`: the only state is the timer, set once, whose `cancel()` is thread-safe.
public final class ExternalChangeMonitor: @unchecked Sendable {
    private let timer: (any DispatchSourceTimer)?

    package init(timer: any DispatchSourceTimer) {
        self.timer = timer
    }

    /// A monitor that polls nothing (for a store whose other processes' commits reach it anyway).
    package init() {
        self.timer = nil
    }

    /// Stops polling.
    public func stop() {
        timer?.cancel()
    }

    deinit {
        timer?.cancel()
    }
}
