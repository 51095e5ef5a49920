/// A convenience that runs a whole input through a ``JSONStreamParser`` and
/// collects what it delivers, for tests and small inputs.
extension JSONStreamParser {
    /// One delivered value, parsed.
    public struct Item: Sendable, Hashable {
        /// Where the value is, e.g. `/users/3`.
        public var pointer: JSONPointer
        /// The absolute offset of its first byte.
        public var byteOffset: Int
        /// The index of the pattern that matched.
        public var patternIndex: Int
        /// The value.
        public var value: JSONValue
    }

    /// Everything a stream parser delivered for one input.
    public struct Result: Sendable, Hashable {
        /// The delivered values in document order.
        public var items: [Item]
        /// The document outside delivered values.
        public var skeleton: JSONValue
        /// Where the patterns matched.
        public var matches: [JSONStreamMatch]
    }

    /// Parses `bytes` in chunks of `chunkSize` and collects every delivered value as a ``JSONValue``.
    ///
    /// ```swift
    /// let result = try JSONStreamParser.collect(Array(#"{"users":[{"id":1}],"next":"b"}"#.utf8), patterns: [[.anyKey]])
    /// result.items.map(\.pointer)   // [/users/0, /next]
    /// ```
    ///
    /// - Parameters:
    ///   - bytes: The whole input.
    ///   - patterns: The paths whose values are delivered.
    ///   - limits: Bounds in force.
    ///   - chunkSize: How many bytes to feed at a time (at least 1).
    /// - Returns: The delivered values, the skeleton and the matches.
    /// - Throws: ``JSONParseError`` for invalid JSON or an exceeded limit.
    public static func collect(
        _ bytes: [UInt8], patterns: [JSONPathPattern] = [.root], limits: JSONLimits = .default, chunkSize: Int = 65536
    ) throws -> Result {
        var parser = JSONStreamParser(patterns: patterns, limits: limits)
        var items: [Item] = []
        let collect: Body = { element in
            items.append(Item(pointer: element.pointer, byteOffset: element.byteOffset, patternIndex: element.patternIndex, value: try element.value()))
        }
        try bytes.withUnsafeBytes { buffer in
            let size = max(1, chunkSize)
            var start = 0
            while start < buffer.count {
                let count = min(size, buffer.count - start)
                try parser.feed(UnsafeRawBufferPointer(rebasing: buffer[start..<start + count]), collect)
                start += count
            }
        }
        let skeleton = try parser.finish(collect)
        return Result(items: items, skeleton: skeleton, matches: parser.matches)
    }
}
