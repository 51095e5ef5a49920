/// The case conversions behind ``KeyConvention``.
extension KeyConvention {
    enum ScalarKind {
        case upper, lower, digit, underscore, other
    }

    @inline(__always)
    static func kind(_ scalar: Unicode.Scalar) -> ScalarKind {
        switch scalar.value {
        case 0x41...0x5A: return .upper
        case 0x61...0x7A: return .lower
        case 0x30...0x39: return .digit
        case 0x5F: return .underscore
        case 0..<0x80: return .other
        default:
            if scalar.properties.isUppercase { return .upper }
            if scalar.properties.isLowercase { return .lower }
            // Caseless letters (CJK…) and numerals behave like lower-case letters.
            return scalar.properties.isAlphabetic || scalar.properties.numericType != nil ? .lower : .other
        }
    }

    @inline(__always)
    static func appendLowercased(_ scalar: Unicode.Scalar, to output: inout String.UnicodeScalarView) {
        if scalar.value < 0x80 {
            if let lower = Unicode.Scalar(scalar.value | (kind(scalar) == .upper ? 0x20 : 0)) {
                output.append(lower)
            }
        } else {
            output.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
        }
    }

    /// Whether the upper-case scalar at `index` starts a new word (see the
    /// rules on ``KeyConvention``).
    static func startsWord(at index: Int, in scalars: [Unicode.Scalar]) -> Bool {
        guard index > 0 else { return false }
        switch kind(scalars[index - 1]) {
        case .lower, .digit, .other:
            return true
        case .underscore:
            return false
        case .upper:
            // Inside a run of capitals: the last capital before a lower-case
            // letter starts the next word, except before a plural "s".
            guard index + 1 < scalars.count, kind(scalars[index + 1]) == .lower else { return false }
            return !isPluralS(at: index + 1, in: scalars)
        }
    }

    /// Whether the `s` at `index`, right after a capital, is a plural ending
    /// its word (`IDs`, `URLs`).
    static func isPluralS(at index: Int, in scalars: [Unicode.Scalar]) -> Bool {
        guard scalars[index] == "s" else { return false }
        return index + 1 == scalars.count || kind(scalars[index + 1]) != .lower
    }

    /// `userID` → `user_id`; see the rules on ``KeyConvention``.
    static func snakeCased(_ name: String) -> String {
        let scalars = Array(name.unicodeScalars)
        var output = String.UnicodeScalarView()
        for index in scalars.indices {
            let scalar = scalars[index]
            if kind(scalar) == .upper {
                if startsWord(at: index, in: scalars) { output.append("_") }
                appendLowercased(scalar, to: &output)
            } else {
                output.append(scalar)
            }
        }
        return String(output)
    }

    /// Lower-cases the first word: `UserID` → `userID`, `URLString` →
    /// `urlString`, `IDs` → `ids`, `ID` → `id`; leading underscores are kept.
    static func lowercasingFirstWord(_ name: String) -> String {
        let scalars = Array(name.unicodeScalars)
        var index = 0
        while index < scalars.count, kind(scalars[index]) == .underscore { index += 1 }
        guard index < scalars.count, kind(scalars[index]) == .upper else { return name }
        var output = String.UnicodeScalarView(scalars[0..<index])
        // Lower-case the run of capitals, up to the capital that starts the next word.
        let runStart = index
        while index < scalars.count, kind(scalars[index]) == .upper {
            if index > runStart, startsWord(at: index, in: scalars) { break }
            appendLowercased(scalars[index], to: &output)
            index += 1
        }
        output.append(contentsOf: scalars[index...])
        return String(output)
    }

    /// `user_id` → `userId`, `html-url` → `htmlUrl`, `_id` → `_id`.
    static func camelCased(_ key: String) -> String {
        var output = String.UnicodeScalarView()
        var words: [String.UnicodeScalarView] = []
        var current = String.UnicodeScalarView()
        var leading = true
        for scalar in key.unicodeScalars {
            switch kind(scalar) {
            case .underscore where leading:
                output.append(scalar)
            case .underscore, .other:
                leading = false
                if !current.isEmpty { words.append(current) }
                current = String.UnicodeScalarView()
            case .upper, .lower, .digit:
                leading = false
                current.append(scalar)
            }
        }
        if !current.isEmpty { words.append(current) }
        for (number, word) in words.enumerated() {
            if number == 0 {
                output.append(contentsOf: lowercasingFirstWord(String(word)).unicodeScalars)
            } else if let first = word.first {
                output.append(contentsOf: String(first).uppercased().unicodeScalars)
                output.append(contentsOf: word.dropFirst())
            }
        }
        return identifierSafe(String(output))
    }

    /// Prefixes `_` to a name that starts with a digit.
    static func identifierSafe(_ name: String) -> String {
        guard let first = name.unicodeScalars.first, kind(first) == .digit else { return name }
        return "_" + name
    }
}
