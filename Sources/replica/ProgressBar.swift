import Foundation
import Replica

/// A one-line progress bar on standard error, redrawn in place; silent when stderr is not a terminal.
/// Progress arrives on the parsing thread; drawing is serialized by the lock of `drawn`.
final class ProgressBar: Sendable {
    private let enabled: Bool
    private let started = ContinuousClock.now
    /// Whether a bar is on screen.
    private let drawn = Locked(false)

    init(enabled: Bool) { self.enabled = enabled }

    func update(_ progress: SyncProgress) {
        guard enabled else { return }
        let width = min(40, max(10, (Terminal.width(of: STDERR_FILENO) ?? 80) - 50))
        let elapsed = started.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Int(Double(progress.objectsWritten) / seconds) : 0
        var line = "\r"
        if let total = progress.totalBytes, total > 0 {
            let fraction = min(1, Double(progress.bytesRead) / Double(total))
            let filled = Int(fraction * Double(width))
            line += "[" + String(repeating: "=", count: filled) + String(repeating: " ", count: width - filled) + "] "
            line += String(format: "%3.0f%% ", fraction * 100)
        }
        line += "\(Format.integer(progress.objectsWritten)) objects, \(Format.integer(rate)) objects/s\u{1B}[K"
        drawn.withLock { drawn in
            Output.write(line, to: .standardError)
            drawn = true
        }
    }

    func clear() {
        drawn.withLock { drawn in
            if drawn { Output.write("\r\u{1B}[K", to: .standardError) }
            drawn = false
        }
    }
}

/// Number formatting for the tool's output.
enum Format {
    /// `1234567` → `1,234,567`.
    static func integer(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
            result.append(character)
        }
        return (value < 0 ? "-" : "") + result
    }

    /// `183500000` → `175.0 MB` (MiB).
    static func bytes(_ count: Int64) -> String {
        let units = ["bytes", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        return unit == 0 ? "\(count) bytes" : String(format: "%.1f ", value) + units[unit]
    }
}
