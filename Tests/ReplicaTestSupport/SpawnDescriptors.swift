#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Adds "close every descriptor from 3 up" to `actions` (glibc's `posix_spawn_file_actions_addclosefrom_np`,
/// looked up at run time; Darwin's `POSIX_SPAWN_CLOEXEC_DEFAULT` is the spawn attribute's business).
///
/// A child spawned without it inherits every descriptor the test process has open at that moment
/// that is not close-on-exec: a test server's listening socket, the pipe another test reads a
/// child's output from, the socket through which Foundation's `Process` learns that another
/// child ended. A long-lived child (a PostgreSQL server started by `pg_ctl`) then keeps them open
/// for the rest of the run, and whoever waits for their end waits forever.
///
/// ```swift
/// var actions = posix_spawn_file_actions_t()
/// posix_spawn_file_actions_init(&actions)
/// closeInheritedDescriptors(&actions)
/// ```
package func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    #if canImport(Glibc)
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return }
    _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    #endif
}
