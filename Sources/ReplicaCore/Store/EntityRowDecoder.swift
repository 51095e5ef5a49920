import Foundation

/// Decodes a `Decodable` value from an ``EntityRow``: coding keys are attribute names,
/// `json` attributes decode nested values, dates decode as `Date`, data as `Data` or `[UInt8]`.
struct EntityRowDecoder: Decoder {
    let row: EntityRow
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowContainer<Key>(row: row, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "a row is keyed by attribute"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: codingPath, debugDescription: "a row is keyed by attribute"))
    }

    struct RowContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let row: EntityRow
        let codingPath: [any CodingKey]

        var allKeys: [Key] { row.names.compactMap { Key(stringValue: $0) } }
        func contains(_ key: Key) -> Bool { row.names.contains(key.stringValue) }

        func value(_ key: Key) throws -> AttributeValue {
            guard let value = row[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath,
                                                           debugDescription: "entity '\(row.entity)' has no attribute '\(key.stringValue)'"))
            }
            return value
        }

        func decodeNil(forKey key: Key) throws -> Bool { try value(key).isNull }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try AttributeValueDecoder(value: value(key), codingPath: codingPath + [key]).decode(type)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try AttributeValueDecoder(value: value(key), codingPath: codingPath + [key]).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try AttributeValueDecoder(value: value(key), codingPath: codingPath + [key]).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder { EntityRowDecoder(row: row, codingPath: codingPath) }
        func superDecoder(forKey key: Key) throws -> any Decoder {
            AttributeValueDecoder(value: try value(key), codingPath: codingPath + [key])
        }
    }
}

/// Decodes one attribute value; `json` values and anything nested go through ``JSONValueDecoder``.
struct AttributeValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: AttributeValue
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try JSONValueDecoder(value: value.jsonValue, codingPath: codingPath).container(keyedBy: type)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try JSONValueDecoder(value: value.jsonValue, codingPath: codingPath).unkeyedContainer()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value.isNull }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        switch value {
        case .date(let date):
            if type == Date.self, let result = date as? T { return result }
            if type == Double.self, let result = date.timeIntervalSince1970 as? T { return result }
        case .data(let bytes):
            if type == Data.self, let result = Data(bytes) as? T { return result }
            if type == [UInt8].self, let result = bytes as? T { return result }
        case .bool(let bool):
            if type == Bool.self, let result = bool as? T { return result }
        default:
            break
        }
        if type == AttributeValue.self, let result = value as? T { return result }
        if type == JSONValue.self, let result = value.jsonValue as? T { return result }
        return try JSONValueDecoder(value: value.jsonValue, codingPath: codingPath).decode(type)
    }
}

extension EntityRow {
    /// The row decoded into a `Decodable` type whose coding keys are attribute names, as
    /// ``Store/fetch(_:from:where:arguments:sort:limit:)`` decodes rows.
    ///
    /// ```swift
    /// struct Post: Decodable { var id: Int; var title: String }
    /// let post = try row.decode(Post.self)
    /// ```
    ///
    /// - Parameter type: The type.
    /// - Returns: The decoded value.
    /// - Throws: ``StoreError`` (`decoding`) naming the type, entity, row and what did not fit.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        do {
            return try T(from: EntityRowDecoder(row: self))
        } catch {
            throw StoreError(.decoding, "cannot decode \(T.self) from \(entity) \(primaryKey): \(error)")
        }
    }
}
