/// Percent-encoding of path segments and query parts, and path patterns for per-route faults.
enum MockPath {
    private static let unreserved: Set<UInt8> = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8))

    /// Percent-encodes everything but unreserved characters.
    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if unreserved.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }

    /// Decodes `%XX` (and `+` as space when `plusIsSpace`); nil for a bad escape or invalid UTF-8.
    static func decode(_ text: Substring, plusIsSpace: Bool = false) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        func hexValue(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 65...70: return c - 55
            case 97...102: return c - 87
            default: return nil
            }
        }
        while let byte = iterator.next() {
            if byte == 37 {
                guard let h = iterator.next().flatMap(hexValue), let l = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(h << 4 | l)
            } else if byte == 43 && plusIsSpace {
                bytes.append(32)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Decoded path segments, empty ones dropped; nil for a bad escape.
    static func segments(_ path: String) -> [String]? {
        var segments: [String] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            guard let decoded = decode(part) else { return nil }
            segments.append(decoded)
        }
        return segments
    }

    /// Decoded `name=value` pairs in order; nil for a bad escape.
    static func queryItems(_ query: String?) -> [(name: String, value: String)]? {
        guard let query, !query.isEmpty else { return [] }
        var items: [(name: String, value: String)] = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0], plusIsSpace: true),
                  let value = parts.count > 1 ? decode(parts[1], plusIsSpace: true) : "" else { return nil }
            items.append((name: name, value: value))
        }
        return items
    }

    /// Whether decoded `segments` match a pattern like `/people/:id` (`:x` one segment, a final `*` the rest).
    static func matches(_ pattern: String, _ segments: [String]) -> Bool {
        let parts = pattern.split(separator: "/", omittingEmptySubsequences: true)
        for (index, part) in parts.enumerated() {
            if part == "*" && index == parts.count - 1 { return segments.count >= index }
            guard index < segments.count else { return false }
            if part.hasPrefix(":") { continue }
            if part != segments[index] { return false }
        }
        return parts.count == segments.count
    }
}
