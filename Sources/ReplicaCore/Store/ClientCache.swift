import Foundation

/// What the client remembers per request URL, inside the store (table `replica_http_cache`, in
/// SQLite and in PostgreSQL alike):
/// validators for conditional GETs, since-cursors for incremental sync, and, for each page of
/// a collection, the keys it held and the URL of the page after it, so that a page answering
/// 304 Not Modified still vouches for its rows and the traversal can go on past it.
///
/// Entries are written in the same transaction as the rows they describe: a failed sync leaves
/// both as they were.
package struct ClientCache: Sendable {
    /// A record to write: the request URL it is kept under, and the entry.
    package typealias Record = (key: String, entry: Entry)

    package struct Entry: Sendable, Hashable {
        package var etag: String?
        package var lastModified: String?
        package var cursor: String?
        /// The URL of the next page, as found when this page last answered 200; `nil` for the last page.
        package var next: String?
        /// Whether the page was one of several (it had a `Link` header, a pagination rule applies,
        /// or it came after the first): then being the last page can change without its content.
        package var paged = false
        /// The keys of the page's own objects when it last answered 200, encoded (a page of a large
        /// collection is held as bytes, not as Swift values); `nil` when not recorded.
        package var encodedKeys: [UInt8]?
        /// Whether writing this entry changes only the cursor of a stored record (an incremental
        /// answer leaves the first page's validators and keys, possibly a large blob, as they are);
        /// a record not stored yet is written whole.
        package var onlyCursor = false

        package init(etag: String? = nil, lastModified: String? = nil, cursor: String? = nil, next: String? = nil,
             keys: PrimaryKeys? = nil) {
            self.etag = etag
            self.lastModified = lastModified
            self.cursor = cursor
            self.next = next
            self.encodedKeys = keys?.encoded()
        }

        /// The recorded keys; `nil` when none were recorded (or the record is unreadable).
        package var keys: PrimaryKeys? { encodedKeys.flatMap { PrimaryKeys(encoded: $0) } }
        /// Whether the page's keys were recorded.
        package var hasKeys: Bool { encodedKeys != nil }

        /// Whether a conditional request can be sent for this page: a 304 must be answerable
        /// from what is recorded.
        package var hasValidators: Bool { etag != nil || lastModified != nil }
    }

    /// The table the records are kept in, in every store.
    package static let table = "replica_http_cache"

}

extension PrimaryKeys {
    /// The first eight bytes of the compact encoding: no count of the first encoding can be this.
    private static let compactMark = [UInt8](repeating: 0xFF, count: 8)

    /// The keys as bytes, compactly: eight 0xFF bytes, then LEB128 varints: the integer count and
    /// each integer as the zigzag of its difference from the one before (a page of consecutive ids
    /// takes a byte a key), the text count and each text as its UTF-8 length and bytes; composite
    /// keys, when there are any, follow as their count and each tuple's JSON text as its length
    /// and bytes.
    ///
    /// ```swift
    /// let bytes = PrimaryKeys([.integer(1), .integer(2), .integer(3)]).encoded()
    /// // 13 bytes: the mark, the count, three deltas of a byte, the text count
    /// PrimaryKeys(encoded: bytes)?.integers   // [1, 2, 3]
    /// ```
    package func encoded() -> [UInt8] {
        var bytes = Self.compactMark
        bytes.reserveCapacity(16 + integers.count + strings.reduce(0) { $0 + 2 + $1.utf8.count })
        func append(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }
        append(UInt64(integers.count))
        var previous: Int64 = 0
        for integer in integers {
            let delta = integer &- previous
            append(UInt64(bitPattern: (delta << 1) ^ (delta >> 63)))
            previous = integer
        }
        append(UInt64(strings.count))
        for string in strings {
            append(UInt64(string.utf8.count))
            bytes.append(contentsOf: string.utf8)
        }
        if !tuples.isEmpty {
            append(UInt64(tuples.count))
            for tuple in tuples {
                let text = AttributeValue.compositeKey(tuple).description
                append(UInt64(text.utf8.count))
                bytes.append(contentsOf: text.utf8)
            }
        }
        return bytes
    }

    /// Keys read back from ``encoded()``, or from the first encoding (fixed eight-byte
    /// little-endian counts and integers) that records written before it hold; `nil` when the
    /// bytes are neither.
    package init?(encoded bytes: [UInt8]) {
        let compact = bytes.starts(with: Self.compactMark)
        var offset = compact ? Self.compactMark.count : 0
        func next() -> UInt64? {
            if compact {
                var value: UInt64 = 0
                var shift: UInt64 = 0
                while offset < bytes.count, shift < 64 {
                    let byte = bytes[offset]
                    offset += 1
                    value |= UInt64(byte & 0x7F) << shift
                    if byte < 0x80 { return value }
                    shift += 7
                }
                return nil
            }
            guard bytes.count - offset >= 8 else { return nil }
            var value: UInt64 = 0
            for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
            offset += 8
            return value
        }
        self.init()
        // Each integer takes at least one byte (eight in the first encoding).
        guard let integerCount = next(), integerCount <= UInt64(bytes.count / (compact ? 1 : 8)) else { return nil }
        integers.reserveCapacity(Int(integerCount))
        var previous: Int64 = 0
        for _ in 0..<integerCount {
            guard let value = next() else { return nil }
            if compact {
                let delta = Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
                previous = previous &+ delta
                integers.append(previous)
            } else {
                integers.append(Int64(bitPattern: value))
            }
        }
        guard let stringCount = next(), stringCount <= UInt64(bytes.count) else { return nil }
        for _ in 0..<stringCount {
            guard let length = next(), length <= UInt64(bytes.count - offset) else { return nil }
            strings.append(String(decoding: bytes[offset..<offset + Int(length)], as: UTF8.self))
            offset += Int(length)
        }
        if offset < bytes.count {
            guard let tupleCount = next(), tupleCount <= UInt64(bytes.count) else { return nil }
            for _ in 0..<tupleCount {
                guard let length = next(), length <= UInt64(bytes.count - offset),
                      let json = try? JSONValue(parsing: String(decoding: bytes[offset..<offset + Int(length)], as: UTF8.self)),
                      let parts = AttributeValue.json(json).compositeKeyParts else { return nil }
                tuples.append(parts)
                offset += Int(length)
            }
        }
        guard offset == bytes.count else { return nil }
    }
}
