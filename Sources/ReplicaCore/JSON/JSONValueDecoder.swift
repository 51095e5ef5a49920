import Foundation

/// Decodes `Decodable` values from a ``JSONValue`` without re-serializing it.
///
/// Dates decode from ISO 8601 text or Unix seconds; `Data` from base64 text.
///
/// ```swift
/// struct Stats: Decodable { var users: Int; var posts: Int }
/// let stats = try JSONValueDecoder.decode(Stats.self, from: json)
/// ```
public struct JSONValueDecoder: Decoder {
    let value: JSONValue
    public var codingPath: [any CodingKey]
    public var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(value: JSONValue, codingPath: [any CodingKey] = []) {
        self.value = value
        self.codingPath = codingPath
    }

    /// Decodes `type` from `value`.
    ///
    /// - Throws: `DecodingError` with the coding path of the value that did not fit.
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try JSONValueDecoder(value: value).decode(type)
    }

    func mismatch(_ expected: String) -> DecodingError {
        .typeMismatch(Any.self, .init(codingPath: codingPath, debugDescription: "expected \(expected), found \(value.typeName)"))
    }

    public func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else { throw mismatch("an object") }
        return KeyedDecodingContainer(Keyed<Key>(object: object, codingPath: codingPath))
    }

    public func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let array) = value else { throw mismatch("an array") }
        return Unkeyed(array: array, codingPath: codingPath)
    }

    public func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(decoder: self) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if type == JSONValue.self, let result = value as? T { return result }
        if type == Date.self {
            if let seconds = value.doubleValue, let result = Date(timeIntervalSince1970: seconds) as? T { return result }
            if let text = value.stringValue, let date = ISO8601.date(from: text), let result = date as? T { return result }
            throw mismatch("an ISO 8601 date or Unix seconds")
        }
        if type == Data.self {
            guard let text = value.stringValue, let data = Data(base64Encoded: text), let result = data as? T else {
                throw mismatch("base64 text")
            }
            return result
        }
        return try T(from: self)
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let object: JSONObject
        let codingPath: [any CodingKey]
        var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }
        func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }
        func child(_ key: Key) throws -> JSONValueDecoder {
            guard let value = object[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no key '\(key.stringValue)'"))
            }
            return JSONValueDecoder(value: value, codingPath: codingPath + [key])
        }
        func decodeNil(forKey key: Key) throws -> Bool { object[key.stringValue]?.isNull ?? true }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try child(key).decode(type) }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey> { try child(key).container(keyedBy: type) }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try child(key).unkeyedContainer() }
        func superDecoder() throws -> any Decoder { JSONValueDecoder(value: .object(object), codingPath: codingPath) }
        func superDecoder(forKey key: Key) throws -> any Decoder { try child(key) }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        let array: [JSONValue]
        let codingPath: [any CodingKey]
        var currentIndex = 0
        var count: Int? { array.count }
        var isAtEnd: Bool { currentIndex >= array.count }

        init(array: [JSONValue], codingPath: [any CodingKey]) {
            self.array = array
            self.codingPath = codingPath
        }

        mutating func next() throws -> JSONValueDecoder {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "end of array"))
            }
            defer { currentIndex += 1 }
            return JSONValueDecoder(value: array[currentIndex], codingPath: codingPath + [IndexKey(intValue: currentIndex)])
        }
        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, array[currentIndex].isNull else { return false }
            currentIndex += 1
            return true
        }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decode(type) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey> { try next().container(keyedBy: type) }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }
        mutating func superDecoder() throws -> any Decoder { try next() }
    }

    struct IndexKey: CodingKey {
        var stringValue: String { String(intValue ?? 0) }
        var intValue: Int?
        init(intValue: Int) { self.intValue = intValue }
        init?(stringValue: String) { return nil }
    }

    struct Single: SingleValueDecodingContainer {
        let decoder: JSONValueDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }
        func decodeNil() -> Bool { decoder.value.isNull }
        func decode(_ type: Bool.Type) throws -> Bool {
            guard let b = decoder.value.boolValue else { throw decoder.mismatch("a boolean") }
            return b
        }
        func decode(_ type: String.Type) throws -> String {
            guard let s = decoder.value.stringValue else { throw decoder.mismatch("a string") }
            return s
        }
        func decode(_ type: Double.Type) throws -> Double {
            guard let d = decoder.value.doubleValue else { throw decoder.mismatch("a number") }
            return d
        }
        func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }
        func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
            if case .bigInteger(let literal) = decoder.value, let result = I(literal) { return result }
            guard let i = decoder.value.int64Value, let result = I(exactly: i) else {
                throw decoder.mismatch("an integer that fits \(I.self)")
            }
            return result
        }
        func decode(_ type: Int.Type) throws -> Int { try integer(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
        func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(type) }
    }
}
