extension JSONValue {
    /// A compact JSON-like rendering for error messages, cut with `…` after about `limit` characters.
    ///
    /// Strings are quoted with `"` and `\` escaped and control characters shown as `\n`, `\t` or `\uXXXX`.
    func excerpt(limit: Int = 60) -> String {
        var writer = ExcerptWriter(limit: limit)
        writer.write(self)
        if case .string = self, writer.truncated { return writer.text + "…\"" }
        return writer.truncated ? writer.text + "…" : writer.text
    }
}

/// Writes a bounded rendering of a JSON value; stops writing once over budget.
struct ExcerptWriter {
    let limit: Int
    private(set) var text = ""
    private var count = 0
    private(set) var truncated = false

    init(limit: Int) { self.limit = limit }

    private mutating func append(_ piece: String) {
        guard !truncated else { return }
        for character in piece {
            guard count < limit else { truncated = true; return }
            text.append(character)
            count += 1
        }
    }

    mutating func write(_ value: JSONValue) {
        guard !truncated else { return }
        switch value {
        case .null: append("null")
        case .bool(let b): append(b ? "true" : "false")
        case .int(let i): append(String(i))
        case .double(let d): append(String(d))
        case .bigInteger(let literal): append(literal)
        case .string(let s): writeString(s)
        case .array(let elements):
            append("[")
            for (index, element) in elements.enumerated() {
                if truncated { return }
                if index > 0 { append(",") }
                write(element)
            }
            append("]")
        case .object(let object):
            append("{")
            for (index, member) in object.enumerated() {
                if truncated { return }
                if index > 0 { append(",") }
                writeString(member.key)
                append(":")
                write(member.value)
            }
            append("}")
        }
    }

    private mutating func writeString(_ string: String) {
        append("\"")
        for scalar in string.unicodeScalars {
            if truncated { return }
            switch scalar {
            case "\"": append("\\\"")
            case "\\": append("\\\\")
            case "\n": append("\\n")
            case "\r": append("\\r")
            case "\t": append("\\t")
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default: append(String(scalar))
            }
        }
        append("\"")
    }
}
