import Foundation
import ArgumentParser

/// Checks of numeric and structured options: a bad value is a `ValidationError` whose one
/// line says what to give instead, never a trap later on.
enum OptionChecks {
    /// The longest time any option takes: a year, in seconds.
    static let maximumSeconds = 31_536_000.0

    /// A number of seconds: finite, above 0 (or from 0 with `allowZero`), at most `maximum`.
    ///
    /// ```swift
    /// try OptionChecks.seconds(every, option: "--every")   // inf, nan, -1, 1e300 are refused
    /// ```
    ///
    /// - Throws: `ValidationError` naming the option, the range and the value given.
    static func seconds(_ value: Double, option: String, allowZero: Bool = false, maximum: Double = maximumSeconds) throws {
        guard value.isFinite, allowZero ? value >= 0 : value > 0, value <= maximum else {
            let lower = allowZero ? "from 0" : "above 0"
            throw ValidationError("\(option) takes a number of seconds \(lower) up to \(Int(maximum)), not \(value)")
        }
    }

    /// `--busy-timeout`: seconds from 0 (fail at once) up to 24 days (what SQLite's millisecond
    /// timeout holds).
    ///
    /// - Throws: `ValidationError` naming the option, the range and the value given.
    static func busyTimeout(_ value: Double) throws {
        try seconds(value, option: "--busy-timeout", allowZero: true, maximum: 2_073_600)
    }

    /// `--metrics-port`: a port from 0 (a free one) to 65535, given with `--every` (a single pass
    /// ends before anyone could scrape it).
    ///
    /// - Throws: `ValidationError` naming what is missing or the range and the value given.
    static func metricsPort(_ port: Int?, every: Double?) throws {
        guard let port else { return }
        guard every != nil else {
            throw ValidationError("--metrics-port needs --every: metrics are served while the paths are synced again and again")
        }
        try integer(port, option: "--metrics-port", in: 0...65535)
    }

    /// A whole number in `range` (of `unit`).
    ///
    /// - Throws: `ValidationError` naming the option, the range and the value given.
    static func integer(_ value: Int, option: String, in range: ClosedRange<Int>, unit: String = "") throws {
        guard range.contains(value) else {
            let what = unit.isEmpty ? "" : " \(unit)"
            throw ValidationError("\(option) takes a whole number\(what) from \(range.lowerBound) to \(range.upperBound), not \(value)")
        }
    }

    /// `Name: value` (the value may be empty): the name is an HTTP token.
    ///
    /// ```swift
    /// try OptionChecks.header("X-Api-Key: abc")   // ("X-Api-Key", "abc")
    /// ```
    ///
    /// - Throws: `ValidationError` saying what a header option looks like.
    static func header(_ text: String) throws -> (name: String, value: String) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let name = parts[0].trimmingCharacters(in: .whitespaces)
        let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        guard parts.count == 2, !name.isEmpty, name.allSatisfy(tokenCharacters.contains) else {
            throw ValidationError("--header takes 'Name: value' with a name of letters, digits and -, not '\(text)'")
        }
        let value = parts[1].trimmingCharacters(in: .whitespaces)
        guard !value.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F }) else {
            throw ValidationError("--header value of '\(name)' has a control character")
        }
        return (name, value)
    }

    /// A size in bytes: a whole number with an optional unit `K`, `M`, `G` or `T` (powers of 1024,
    /// `KiB`/`KB` spelled out too), from 1 byte to 1 PiB.
    ///
    /// ```swift
    /// try OptionChecks.byteSize("512M", option: "--max-body")   // 536_870_912
    /// ```
    ///
    /// - Throws: `ValidationError` naming the option and saying what a size looks like.
    static func byteSize(_ text: String, option: String) throws -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces).uppercased()
        let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        var unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces)
        if unit.hasSuffix("IB") {
            unit.removeLast(2)
        } else if unit.hasSuffix("B") {
            unit.removeLast()
        }
        let shifts: [String: Int64] = ["": 0, "K": 10, "M": 20, "G": 30, "T": 40]
        guard let number = Int64(digits), let shift = shifts[unit], number >= 1,
              number <= (Int64(1) << 50) >> shift else {
            throw ValidationError("\(option) takes a size in bytes from 1 to 1P, with an optional unit K, M, G or T "
                                  + "(e.g. 512M, 2G), not '\(text)'")
        }
        return number << shift
    }
}

extension Duration {
    /// A duration of `seconds` that passed ``OptionChecks/seconds(_:option:allowZero:maximum:)``.
    static func checkedSeconds(_ seconds: Double) -> Duration {
        .nanoseconds(Int64((min(max(seconds, 0), OptionChecks.maximumSeconds) * 1e9).rounded()))
    }
}
