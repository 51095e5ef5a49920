import Foundation

/// How one attribute's JSON values become attribute values and back: its type
/// plus its transform, resolved once when the ``PropertyMap`` is built.
///
/// Built-in transform names:
///
/// | transform | attribute type | reads | writes |
/// |---|---|---|---|
/// | (none) | any | the type's coercions (see ``Coercion``); dates: ISO 8601 text, or Unix seconds / milliseconds by magnitude | the type's JSON; dates as ISO 8601 |
/// | `iso8601` | date | ISO 8601 text only | ISO 8601 text |
/// | `unixSeconds` | date | a number or numeric text, in seconds | a number of seconds |
/// | `unixMilliseconds` | date | a number or numeric text, in milliseconds | an integer number of milliseconds |
/// | `date:FORMAT` | date | text in the `DateFormatter` pattern FORMAT (POSIX locale, UTC) | text in FORMAT |
/// | `percentage` | double | `45`, `"45"`, `"45%"` → 0.45 | `45` |
/// | `base64` | string | base64 of UTF-8 text (as GitHub's contents API sends a file's `content`) → the text | base64 of the text |
/// | `base64` | data | the same as no transform: base64 → the bytes | base64 |
///
/// Base64 is read in the standard or URL-safe alphabet, padded or not, across line breaks
/// (see ``Base64``).
struct ValueConverter: Sendable {
    enum DateRule: Sendable {
        case automatic, iso8601, unixSeconds, unixMilliseconds
        case format(FixedDateFormat)
    }

    enum Kind: Sendable {
        case string, integer, double, bool, data, json
        case date(DateRule)
        case percentage
        /// Base64 of UTF-8 text, into a string attribute.
        case base64Text
        case custom(TransformRegistry.Transform)
    }

    /// Why a value could not be converted; the property map adds entity, attribute, pointer and value.
    enum Failure: Error {
        /// The value is not something the target reads: "cannot convert VALUE to TARGET[: DETAIL]".
        case cannotConvert(target: String, detail: String?)
        /// A custom transform threw.
        case transformFailed(name: String, error: any Error)
        /// A custom transform returned a value of another type.
        case wrongResultType(name: String, result: AttributeValue)
    }

    let kind: Kind
    let type: AttributeType

    /// Resolves the attribute's transform.
    ///
    /// - Throws: ``MappingError/Code/unknownTransform`` for a name neither registered nor built in,
    ///   ``MappingError/Code/invalidTransform`` for a built-in transform on the wrong type.
    init(attribute: Attribute, entity: String, transforms: TransformRegistry) throws(MappingError) {
        type = attribute.type
        guard let name = attribute.transform, !name.isEmpty else {
            kind = Self.defaultKind(for: attribute.type)
            return
        }
        if let custom = transforms[name] {
            kind = .custom(custom)
            return
        }
        func requireType(_ expected: AttributeType) throws(MappingError) {
            guard attribute.type == expected else {
                throw MappingError(.invalidTransform, "transform '\(name)' needs \(AttributeType.withArticle(expected)) attribute, "
                                   + "not \(AttributeType.withArticle(attribute.type))", entity: entity, attribute: attribute.name)
            }
        }
        switch name {
        case "percentage":
            try requireType(.double)
            kind = .percentage
        case "base64":
            guard attribute.type == .string || attribute.type == .data else {
                throw MappingError(.invalidTransform, "transform 'base64' needs a string or a data attribute, "
                                   + "not \(AttributeType.withArticle(attribute.type))", entity: entity, attribute: attribute.name)
            }
            kind = attribute.type == .string ? .base64Text : .data
        case "iso8601":
            try requireType(.date)
            kind = .date(.iso8601)
        case "unixSeconds":
            try requireType(.date)
            kind = .date(.unixSeconds)
        case "unixMilliseconds":
            try requireType(.date)
            kind = .date(.unixMilliseconds)
        case _ where name.hasPrefix("date:"):
            try requireType(.date)
            let format = String(name.dropFirst(5))
            guard !format.isEmpty else {
                throw MappingError(.invalidTransform, "transform 'date:' has an empty date format",
                                   entity: entity, attribute: attribute.name)
            }
            kind = .date(.format(FixedDateFormat(format)))
        case _ where transforms.acceptsUnregisteredNames:
            let message = "transform '\(name)' is not registered"
            kind = .custom(TransformRegistry.Transform(name: name, decode: { _ in
                throw MappingError(.unknownTransform, message)
            }, encode: nil))
        default:
            let known = (["percentage", "base64", "iso8601", "unixSeconds", "unixMilliseconds", "date:FORMAT"] + transforms.names)
                .joined(separator: ", ")
            throw MappingError(.unknownTransform, "unknown transform '\(name)' (known: \(known))",
                               entity: entity, attribute: attribute.name)
        }
    }

    static func defaultKind(for type: AttributeType) -> Kind {
        switch type {
        case .string: return .string
        case .integer: return .integer
        case .double: return .double
        case .bool: return .bool
        case .date: return .date(.automatic)
        case .data: return .data
        case .json: return .json
        }
    }

    /// Converts a non-null JSON value.
    func decode(_ value: JSONValue) throws(Failure) -> AttributeValue {
        switch kind {
        case .string:
            guard let s = Coercion.string(value) else { throw .cannotConvert(target: "string", detail: nil) }
            return .string(s)
        case .integer:
            guard let i = Coercion.integer(value) else {
                throw .cannotConvert(target: "integer", detail: Coercion.integerFailureDetail(value))
            }
            return .integer(i)
        case .double:
            guard let d = Coercion.double(value) else {
                let overflows = value.doubleValue.map { !$0.isFinite } ?? false
                throw .cannotConvert(target: "double", detail: overflows ? "it is out of the range of a double" : nil)
            }
            return .double(d)
        case .bool:
            guard let b = Coercion.bool(value) else { throw .cannotConvert(target: "bool", detail: nil) }
            return .bool(b)
        case .data:
            return .data(try Self.base64(value, target: "data"))
        case .base64Text:
            let bytes = try Self.base64(value, target: "text")
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw .cannotConvert(target: "text", detail: "the decoded bytes are not UTF-8 text; a data attribute keeps any bytes")
            }
            return .string(text)
        case .json:
            return .json(value)
        case .percentage:
            guard let d = Coercion.percentage(value) else { throw .cannotConvert(target: "percentage", detail: nil) }
            return .double(d)
        case .date(let rule):
            let date = try Self.date(value, rule: rule)
            guard ISO8601.representable.contains(date.timeIntervalSince1970) else {
                throw .cannotConvert(target: "date", detail: "outside the years 0000 to 9999")
            }
            return .date(date)
        case .custom(let transform):
            return try decodeCustom(value, with: transform)
        }
    }

    /// The bytes of base64 text; the failure names the offending character and its position.
    private static func base64(_ value: JSONValue, target: String) throws(Failure) -> [UInt8] {
        guard case .string(let text) = value else { throw .cannotConvert(target: target, detail: "expected base64 text") }
        do {
            return try Base64.decoding(text)
        } catch {
            throw .cannotConvert(target: target, detail: "expected base64 text: \(error.reason)")
        }
    }

    private static func date(_ value: JSONValue, rule: DateRule) throws(Failure) -> Date {
        switch rule {
        case .automatic:
            if case .string(let text) = value, let seconds = ISO8601.seconds(text.utf8) {
                return Date(timeIntervalSince1970: seconds)
            }
            guard let number = Coercion.seconds(value) else {
                throw .cannotConvert(target: "date", detail: "expected ISO 8601 text or Unix seconds or milliseconds")
            }
            let seconds = abs(number) >= Coercion.millisecondThreshold ? number / 1000 : number
            return Date(timeIntervalSince1970: seconds)
        case .iso8601:
            guard case .string(let text) = value, let seconds = ISO8601.seconds(text.utf8) else {
                throw .cannotConvert(target: "date", detail: "expected ISO 8601 text")
            }
            return Date(timeIntervalSince1970: seconds)
        case .unixSeconds:
            guard let seconds = Coercion.seconds(value) else {
                throw .cannotConvert(target: "date", detail: "expected Unix seconds")
            }
            return Date(timeIntervalSince1970: seconds)
        case .unixMilliseconds:
            guard let millis = Coercion.seconds(value) else {
                throw .cannotConvert(target: "date", detail: "expected Unix milliseconds")
            }
            return Date(timeIntervalSince1970: millis / 1000)
        case .format(let format):
            guard case .string(let text) = value, let date = format.date(from: text) else {
                throw .cannotConvert(target: "date", detail: "expected the format '\(format.format)'")
            }
            return date
        }
    }

    private func decodeCustom(_ value: JSONValue, with transform: TransformRegistry.Transform) throws(Failure) -> AttributeValue {
        let result: AttributeValue
        do {
            result = try transform.decode(value)
        } catch {
            throw .transformFailed(name: transform.name, error: error)
        }
        switch result {
        case .null: return result
        case .integer(let i) where type == .double: return .double(Double(i))
        default:
            guard result.type == type else { throw .wrongResultType(name: transform.name, result: result) }
            return result
        }
    }

    /// The JSON form of a value for request bodies.
    /// - Parameter timeZone: The zone ISO 8601 dates are written in (UTC, `Z`, when `nil`).
    func encode(_ value: AttributeValue, timeZone: TimeZone? = nil) -> JSONValue {
        if case .null = value { return .null }
        switch kind {
        case .custom(let transform):
            return transform.encode.map { $0(value) } ?? value.jsonValue
        case .percentage:
            guard case .double(let fraction) = value else { return value.jsonValue }
            // Round away the binary noise of `* 100` (0.07 * 100 = 7.000000000000001).
            let percent = (fraction * 100 * 1e9).rounded() / 1e9
            return Self.number(percent)
        case .date(let rule):
            guard case .date(let date) = value else { return value.jsonValue }
            switch rule {
            case .automatic, .iso8601:
                return .string(timeZone.map { ISO8601.string(from: date, in: $0) } ?? ISO8601.string(from: date))
            case .unixSeconds: return Self.number(date.timeIntervalSince1970)
            case .unixMilliseconds: return Self.number((date.timeIntervalSince1970 * 1000).rounded())
            case .format(let format): return .string(format.string(from: date))
            }
        case .data:
            guard case .data(let bytes) = value else { return value.jsonValue }
            return .string(Base64.encode(bytes))
        case .base64Text:
            guard case .string(let text) = value else { return value.jsonValue }
            return .string(Base64.encode(Array(text.utf8)))
        case .string, .integer, .double, .bool, .json:
            return value.jsonValue
        }
    }

    /// An integral double inside `Int64`'s range as `.int`, any other as `.double`.
    private static func number(_ value: Double) -> JSONValue {
        if let exact = Int64(exactly: value) { return .int(exact) }
        return .double(value)
    }
}

extension AttributeType {
    /// `a string`, `an integer`, for messages; `null` for `nil`.
    static func withArticle(_ type: AttributeType?) -> String {
        guard let type else { return "null" }
        return (type == .integer ? "an " : "a ") + type.rawValue
    }
}
