import Foundation

extension AttributeValue {
    /// A stored integer, double, text or blob (as `.integer`, `.double`, `.string`, `.data`) read
    /// as an attribute of `type`.
    package init(stored: AttributeValue, type: AttributeType) {
        switch (stored, type) {
        case (.integer(let i), .integer): self = .integer(i)
        case (.double(let d), .integer):
            if let i = Int64(exactly: d) { self = .integer(i) } else { self = .double(d) }
        case (.double(let d), .double): self = .double(d)
        case (.integer(let i), .double): self = .double(Double(i))
        case (.integer(let i), .bool): self = .bool(i != 0)
        case (.double(let d), .date): self = .date(Date(timeIntervalSince1970: d))
        case (.integer(let i), .date): self = .date(Date(timeIntervalSince1970: Double(i)))
        case (.string(let s), .date):
            if let date = ISO8601.date(from: s) { self = .date(date) } else { self = .string(s) }
        case (.string(let s), .json):
            if let json = try? JSONValue(parsing: s) { self = .json(json) } else { self = .string(s) }
        default: self = stored
        }
    }
}
