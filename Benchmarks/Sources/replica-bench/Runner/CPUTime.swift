#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// CPU time, for workloads whose processes share the machine's cores: on two cores, a pass that
/// needs more CPU than another is slower by about that much, whoever's the CPU is.
///
/// ```swift
/// let before = CPUTime.ofThisProcess()
/// try await work()
/// print(CPUTime.ofThisProcess() - before)   // core-seconds, every thread's user + system time
/// ```
enum CPUTime {
    /// This process's user and system time so far, in seconds (every thread's).
    static func ofThisProcess() -> Double {
        var usage = rusage()
        #if canImport(Glibc)
        let who = RUSAGE_SELF.rawValue
        #else
        let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { return 0 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Another process's user and system time so far, in seconds, from `/proc/PID/stat`
    /// (`nil` where there is no `/proc`, as on macOS, or once the process is gone).
    static func ofProcess(_ pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After "pid (comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ticks > 0 ? (user + system) / ticks : nil
    }

    private static func seconds(_ value: timeval) -> Double {
        Double(value.tv_sec) + Double(value.tv_usec) / 1e6
    }
}
