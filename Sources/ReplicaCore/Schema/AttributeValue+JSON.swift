import Foundation

extension AttributeValue {
    /// Reads the `default` of an attribute in a schema file, strictly: the JSON value must
    /// already be of the attribute's type (dates as ISO 8601 text or Unix seconds, data as base64).
    init(defaultJSON json: JSONValue, type: AttributeType, at pointer: JSONPointer, file: String?) throws {
        func fail(_ expected: String) -> SchemaError {
            SchemaError(.invalidValue, "default must be \(expected), found \(json.typeName)", file: file, pointer: pointer)
        }
        if json.isNull { self = .null; return }
        switch type {
        case .string:
            guard let s = json.stringValue else { throw fail("a string") }
            self = .string(s)
        case .integer:
            guard case .int(let i) = json else { throw fail("an integer") }
            self = .integer(i)
        case .double:
            guard let d = json.doubleValue else { throw fail("a number") }
            self = .double(d)
        case .bool:
            guard let b = json.boolValue else { throw fail("true or false") }
            self = .bool(b)
        case .date:
            if let seconds = json.doubleValue {
                self = .date(Date(timeIntervalSince1970: seconds))
            } else if let text = json.stringValue, let date = ISO8601.date(from: text) {
                self = .date(date)
            } else {
                throw fail("an ISO 8601 date or Unix seconds")
            }
        case .data:
            guard let text = json.stringValue, let data = Data(base64Encoded: text) else { throw fail("base64 text") }
            self = .data([UInt8](data))
        case .json:
            self = .json(json)
        }
    }
}
