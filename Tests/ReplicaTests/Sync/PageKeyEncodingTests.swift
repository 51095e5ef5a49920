import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// The bytes a page's keys are recorded as (``ClientCache/Entry/encodedKeys``): compact for
/// consecutive ids, exact for any integers, and records written in the first encoding still read.
@Suite("Page key records")
struct PageKeyEncodingTests {
    @Test("a page of consecutive ids takes a byte a key, after the 8-byte mark and the count")
    func consecutiveIDs() {
        let keys = PrimaryKeys((1...100_000).map { AttributeValue.integer(Int64($0)) })
        let bytes = keys.encoded()
        #expect(bytes.count == 8 + 3 + 100_000 + 1)
        #expect(Array(bytes.prefix(8)) == [UInt8](repeating: 0xFF, count: 8))
        #expect(PrimaryKeys(encoded: bytes) == keys)
    }

    @Test("any integers, texts and composite keys read back as they were, in their order")
    func roundTrip() {
        let values: [AttributeValue] = [
            .integer(.max), .integer(.min), .integer(0), .integer(-1), .integer(1 << 40), .integer(7), .integer(7),
            .string(""), .string("Zoë/ß"), .compositeKey([.integer(-3), .string("refs/heads/main")]),
        ]
        let keys = PrimaryKeys(values)
        let decoded = PrimaryKeys(encoded: keys.encoded())
        #expect(decoded == keys)
        #expect(decoded?.integers == [.max, .min, 0, -1, 1 << 40, 7, 7])
        #expect(PrimaryKeys(encoded: PrimaryKeys().encoded()) == PrimaryKeys())
    }

    @Test("a record in the first encoding (eight-byte little-endian counts and integers) still reads")
    func firstEncoding() {
        func le(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }
        let bytes = le(2) + le(5) + le(UInt64(bitPattern: -9)) + le(1) + le(2) + Array("ab".utf8)
        #expect(PrimaryKeys(encoded: bytes) == PrimaryKeys([.integer(5), .integer(-9), .string("ab")]))
    }

    @Test("bytes that are neither encoding read as no record", arguments: [
        [UInt8](),
        [UInt8](repeating: 0xFF, count: 8),                       // the mark, then nothing
        [UInt8](repeating: 0xFF, count: 8) + [2, 2],              // two integers promised, one there
        [UInt8](repeating: 0xFF, count: 8) + [0, 1, 5, 0x61],     // a 5-byte text with one byte
        [UInt8](repeating: 0xFF, count: 8) + [1, 0x80],           // a varint cut short
        [UInt8](repeating: 0xFF, count: 8) + [0, 0, 1],           // a composite count with no key
        [3, 0, 0, 0, 0, 0, 0, 0, 1],                              // first encoding, three integers promised
    ])
    func unreadable(bytes: [UInt8]) {
        #expect(PrimaryKeys(encoded: bytes) == nil)
    }
}
