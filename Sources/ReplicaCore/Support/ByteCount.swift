import Foundation

/// A number of bytes as people read it, in messages about limits.
///
/// ```swift
/// ByteCount.describe(1 << 30)   // "1 GiB (1073741824 bytes)"
/// ```
package enum ByteCount {
    /// `1 GiB (1,073,741,824 bytes)`, `512 bytes`.
    package static func describe(_ bytes: Int64) -> String {
        let exact = bytes == 1 ? "1 byte" : "\(bytes) bytes"
        for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] where bytes >= Int64(1) << shift {
            let value = Double(bytes) / Double(Int64(1) << shift)
            let shown = value == value.rounded() ? "\(Int(value))" : String(format: "%.1f", value)
            return "\(shown) \(unit) (\(exact))"
        }
        return exact
    }
}
