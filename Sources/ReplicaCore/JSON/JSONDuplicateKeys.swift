/// A key given twice in one JSON object: where its two occurrences are.
///
/// Parsing keeps the last value of a repeated key (``JSONObject/duplicateKeys`` lists it); a
/// document whose meaning must not depend on that, such as a schema file, is refused instead,
/// with this location.
struct JSONDuplicateKey: Sendable, Hashable {
    /// The key, decoded.
    var key: String
    /// The member the key names (the object's pointer and the key).
    var pointer: JSONPointer
    /// Where the key's first occurrence starts (its opening quote).
    var first: JSONLocation
    /// Where the key's second occurrence starts (its opening quote).
    var again: JSONLocation
}

/// A byte of a JSON text: its 0-based offset and its 1-based line and column (in bytes).
struct JSONLocation: Sendable, Hashable, CustomStringConvertible {
    var byteOffset: Int
    var line: Int
    var column: Int

    /// `byte 96 (line 4, column 5)`, as ``JSONParseError`` says where.
    var description: String { "byte \(byteOffset) (line \(line), column \(column))" }
}

extension JSONDuplicateKey {
    /// The first key given twice in one object of a JSON text, in document order, or `nil`.
    ///
    /// ```swift
    /// let found = try JSONDuplicateKey.first(in: bytes)   // /entities/Person, again at byte 96
    /// ```
    ///
    /// - Parameters:
    ///   - buffer: A JSON text's UTF-8 bytes.
    ///   - limits: Bounds on depth and string length, as for parsing.
    /// - Returns: The first duplicate, or `nil` when every object's keys are distinct.
    /// - Throws: ``JSONParseError`` when the bytes are not valid JSON.
    static func first(in buffer: UnsafeRawBufferPointer, limits: JSONLimits = .default) throws -> JSONDuplicateKey? {
        /// One open container: the keys an object has had (with where each started) and the
        /// current member's key, or an array's current index.
        enum Frame {
            case object(seen: [String: UnsafePointer<UInt8>], key: String)
            case array(index: Int)
        }
        var tokenizer = JSONTokenizer(bytes: buffer, limits: limits)
        var stack: [Frame] = []
        func location(_ pointer: UnsafePointer<UInt8>) -> JSONLocation {
            let (line, lineStart) = tokenizer.region.location(of: pointer)
            let offset = tokenizer.region.offset(of: pointer)
            return JSONLocation(byteOffset: offset, line: line, column: offset - lineStart + 1)
        }
        /// A value of the top container is complete: an array moves on to its next index.
        func valueDone() {
            if case .array(let index)? = stack.last { stack[stack.count - 1] = .array(index: index + 1) }
        }
        while true {
            switch try tokenizer.next() {
            case .beginObject:
                stack.append(.object(seen: [:], key: ""))
            case .beginArray:
                stack.append(.array(index: 0))
            case .key(let raw):
                guard case .object(var seen, _)? = stack.popLast() else { continue }
                let key = raw.decoded()
                let start = tokenizer.tokenStart
                if let earlier = seen[key] {
                    var components: [JSONPointer.Component] = stack.map { frame in
                        switch frame {
                        case .object(_, let key): return .key(key)
                        case .array(let index): return .index(index)
                        }
                    }
                    components.append(.key(key))
                    return JSONDuplicateKey(key: key, pointer: JSONPointer(components: components),
                                            first: location(earlier), again: location(start))
                }
                seen[key] = start
                stack.append(.object(seen: seen, key: key))
            case .endObject, .endArray:
                _ = stack.popLast()
                valueDone()
            case .string, .number, .bool, .null:
                valueDone()
            case .end:
                return nil
            }
        }
    }
}

extension JSONValue {
    /// The first member, depth first, whose key the parsed text gave twice in its object
    /// (see ``JSONObject/duplicateKeys``), or `nil`.
    ///
    /// ```swift
    /// try JSONValue(parsing: #"{"a": {"b": 1, "b": 2}}"#).firstDuplicateKey?.pointer   // /a/b
    /// ```
    var firstDuplicateKey: (key: String, pointer: JSONPointer)? {
        var pending: [(value: JSONValue, pointer: JSONPointer)] = [(self, .root)]
        while let (value, pointer) = pending.popLast() {
            switch value {
            case .object(let object):
                if let key = object.duplicateKeys.first { return (key, pointer / key) }
                pending += object.members.reversed().map { ($0.value, pointer / $0.key) }
            case .array(let array):
                pending += array.enumerated().reversed().map { ($0.element, pointer / $0.offset) }
            default:
                continue
            }
        }
        return nil
    }
}
