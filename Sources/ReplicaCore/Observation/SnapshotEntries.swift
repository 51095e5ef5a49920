import Foundation

/// The entries of a snapshot's section, packed: each entry's key and sort values are encoded one
/// after another in one byte buffer (a tag byte, then an integer in as few bytes as it needs, a
/// string as its length and UTF-8 bytes), with where each entry starts beside it. A million-row snapshot sorted by a name and
/// sectioned by a city costs about 40 bytes a row, where an array of ``SnapshotEntry`` values
/// costs 56 bytes, plus an array per row for a second sort value and the storage of every string
/// longer than 15 bytes.
///
/// A random-access collection of ``SnapshotEntry`` values, each decoded when it is read; the
/// sections of one load share its buffer (``init(_:)`` of a slice copies no entry). Appending to
/// a section that shares its buffer first copies the section's own entries into a buffer of its own.
///
/// ```swift
/// var entries = SnapshotEntries()
/// entries.append(layout.entry(of: row))
/// let key = entries.key(at: 0)
/// ```
package struct SnapshotEntries: RandomAccessCollection, RangeReplaceableCollection, ExpressibleByArrayLiteral, Sendable {
    /// The encoded entries (possibly those of other sections too).
    private var bytes: [UInt8] = []
    /// Where each entry starts in ``bytes``, then where the last one ends: `count + 1` offsets.
    private var bounds = Bounds()
    /// The values not encoded as bytes (JSON values: composite keys), by index.
    private var others: [AttributeValue] = []

    package init() {}

    package init(arrayLiteral elements: SnapshotEntry...) {
        self.init()
        for element in elements { append(element) }
    }

    /// The entries of `slice`, sharing its buffer (no entry is copied).
    package init(_ slice: Slice<SnapshotEntries>) {
        bytes = slice.base.bytes
        others = slice.base.others
        bounds = slice.base.bounds.sub(slice.startIndex, slice.endIndex)
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { bounds.count - 1 }

    package subscript(position: Int) -> SnapshotEntry {
        precondition(position >= 0 && position < endIndex, "entry index \(position) out of range 0..<\(endIndex)")
        let start = bounds[position], end = bounds[position + 1]
        return bytes.withUnsafeBytes { buffer in
            var reader = Reader(buffer: buffer, offset: start)
            var entry = SnapshotEntry(key: reader.value(others))
            var slot = 0
            while reader.offset < end {
                entry.append(reader.value(others), slot: slot)
                slot += 1
            }
            return entry
        }
    }

    /// The primary key of entry `position` (decoding nothing else).
    package func key(at position: Int) -> AttributeValue {
        bytes.withUnsafeBytes { buffer in
            var reader = Reader(buffer: buffer, offset: bounds[position])
            return reader.value(others)
        }
    }

    /// The integer primary key of entry `position`, or `nil` when the key is not an integer.
    func integerKey(at position: Int) -> Int64? {
        bytes.withUnsafeBytes { buffer in
            let reader = Reader(buffer: buffer, offset: bounds[position])
            return reader.integer()
        }
    }

    /// The sort value of entry `position` in `slot`, or `nil` for an entry that holds fewer.
    func value(at position: Int, slot: Int) -> AttributeValue? {
        let end = bounds[position + 1]
        return bytes.withUnsafeBytes { buffer in
            var reader = Reader(buffer: buffer, offset: bounds[position])
            reader.skip()   // the key
            for _ in 0 ..< slot {
                guard reader.offset < end else { return nil }
                reader.skip()
            }
            return reader.offset < end ? reader.value(others) : nil
        }
    }

    package mutating func reserveCapacity(_ n: Int) {
        bounds.reserve(n + 1)
    }

    /// Reserves room for `n` entries in all, their bytes estimated from the entries held with a
    /// quarter more: a large load then fills one buffer, not copied as it grows (room it does not
    /// use is never touched, so costs no memory).
    package mutating func reserveBytes(forEntries n: Int) {
        guard count > 0, n > count else { return }
        ownBuffer()
        bytes.reserveCapacity((bytes.count + bytes.count / 4) * (n / count + 1))
    }

    /// Appends `entry`.
    package mutating func append(_ entry: SnapshotEntry) {
        ownBuffer()
        Self.encode(entry.key, into: &bytes, others: &others)
        Self.encode(entry.first, into: &bytes, others: &others)
        for value in entry.more { Self.encode(value, into: &bytes, others: &others) }
        bounds.append(bytes.count)
    }

    /// Appends the entries of `slice`, copying their bytes.
    package mutating func append(contentsOf slice: Slice<SnapshotEntries>) {
        guard !slice.isEmpty else { return }
        let base = slice.base
        guard base.others.isEmpty else {
            for entry in slice { append(entry) }
            return
        }
        ownBuffer()
        let from = base.bounds[slice.startIndex], to = base.bounds[slice.endIndex]
        let shift = bytes.count - from
        bytes.append(contentsOf: base.bytes[from ..< to])
        for index in slice.startIndex + 1 ... slice.endIndex { bounds.append(base.bounds[index] + shift) }
    }

    /// Appends the entries of `other`, copying their bytes.
    package mutating func append(contentsOf other: SnapshotEntries) {
        append(contentsOf: other[...])
    }

    package mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C) where C.Element == SnapshotEntry {
        if subrange.isEmpty && subrange.lowerBound == endIndex {
            for element in newElements { append(element) }
            return
        }
        var result = SnapshotEntries()
        result.append(contentsOf: self[..<subrange.lowerBound])
        for element in newElements { result.append(element) }
        result.append(contentsOf: self[subrange.upperBound...])
        self = result
    }

    /// Before a change: when the buffer holds bytes of other entries (other sections of the same
    /// load), copies this collection's own bytes into a buffer of its own.
    private mutating func ownBuffer() {
        let start = bounds[0], end = bounds[bounds.count - 1]
        guard start != 0 || end != bytes.count else { return }
        let own = Array(bytes[start ..< end])
        var rebased = Bounds()
        rebased.reserve(bounds.count)
        for index in 1 ..< bounds.count { rebased.append(bounds[index] - start) }
        bytes = own
        bounds = rebased
    }

    // MARK: Encoding

    private enum Tag: UInt8 {
        case null = 0, integer, double, falseValue, trueValue, date, string, data, other
    }

    private static func encode(_ value: AttributeValue, into bytes: inout [UInt8], others: inout [AttributeValue]) {
        switch value {
        case .null: bytes.append(Tag.null.rawValue)
        case .integer(let integer):
            bytes.append(Tag.integer.rawValue)
            // Zigzag: small magnitudes of either sign take few bytes.
            appendVarint(UInt64(bitPattern: (integer << 1) ^ (integer >> 63)), to: &bytes)
        case .double(let double):
            bytes.append(Tag.double.rawValue)
            appendWord(double.bitPattern, to: &bytes)
        case .bool(let bool): bytes.append(bool ? Tag.trueValue.rawValue : Tag.falseValue.rawValue)
        case .date(let date):
            bytes.append(Tag.date.rawValue)
            appendWord(date.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
        case .string(var string):
            bytes.append(Tag.string.rawValue)
            string.withUTF8 { utf8 in
                appendLength(utf8.count, to: &bytes)
                bytes.append(contentsOf: utf8)
            }
        case .data(let data):
            bytes.append(Tag.data.rawValue)
            appendLength(data.count, to: &bytes)
            bytes.append(contentsOf: data)
        case .json:
            bytes.append(Tag.other.rawValue)
            appendLength(others.count, to: &bytes)
            others.append(value)
        }
    }

    private static func appendWord(_ word: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: word.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A length or index, 7 bits a byte, low bits first.
    private static func appendLength(_ length: Int, to bytes: inout [UInt8]) {
        appendVarint(UInt64(length), to: &bytes)
    }

    /// 7 bits a byte, low bits first, the high bit set on every byte but the last.
    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// Reads values encoded by ``encode(_:into:others:)`` from `offset` on.
    private struct Reader {
        let buffer: UnsafeRawBufferPointer
        var offset: Int

        private func word(at position: Int) -> UInt64 {
            UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: position, as: UInt64.self))
        }

        private mutating func varint() -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = buffer[offset]
                offset += 1
                result |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 || shift >= 63 { return result }
                shift += 7
            }
        }

        private mutating func length() -> Int { Int(truncatingIfNeeded: varint()) }

        /// A zigzag varint integer.
        private mutating func zigzag() -> Int64 {
            let value = varint()
            return Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
        }

        /// The integer at the offset, if the value there is one (the offset stays).
        func integer() -> Int64? {
            guard buffer[offset] == Tag.integer.rawValue else { return nil }
            var reader = Reader(buffer: buffer, offset: offset + 1)
            return reader.zigzag()
        }

        /// The value at the offset; moves past it.
        mutating func value(_ others: [AttributeValue]) -> AttributeValue {
            let tag = Tag(rawValue: buffer[offset]) ?? .null
            offset += 1
            switch tag {
            case .null: return .null
            case .integer: return .integer(zigzag())
            case .double:
                defer { offset += 8 }
                return .double(Double(bitPattern: word(at: offset)))
            case .falseValue: return .bool(false)
            case .trueValue: return .bool(true)
            case .date:
                defer { offset += 8 }
                return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: word(at: offset))))
            case .string:
                let count = length()
                defer { offset += count }
                return .string(String(decoding: UnsafeRawBufferPointer(rebasing: buffer[offset ..< offset + count]), as: UTF8.self))
            case .data:
                let count = length()
                defer { offset += count }
                return .data(Array(buffer[offset ..< offset + count]))
            case .other:
                let index = length()
                return index < others.count ? others[index] : .null
            }
        }

        /// Moves past the value at the offset.
        mutating func skip() {
            let tag = Tag(rawValue: buffer[offset]) ?? .null
            offset += 1
            switch tag {
            case .null, .falseValue, .trueValue: break
            case .integer: _ = varint()
            case .double, .date: offset += 8
            case .string, .data: offset += length()
            case .other: _ = length()
            }
        }
    }

    /// Entry offsets: 4 bytes each while the buffer is under 4 GiB, 8 beyond.
    private enum Bounds: Sendable {
        case narrow([UInt32])
        case wide([Int])

        init() { self = .narrow([0]) }

        var count: Int {
            switch self {
            case .narrow(let offsets): offsets.count
            case .wide(let offsets): offsets.count
            }
        }

        subscript(index: Int) -> Int {
            switch self {
            case .narrow(let offsets): Int(offsets[index])
            case .wide(let offsets): offsets[index]
            }
        }

        /// The offsets of entries `start ..< end` (and where the last one ends).
        func sub(_ start: Int, _ end: Int) -> Bounds {
            switch self {
            case .narrow(let offsets): .narrow(Array(offsets[start ... end]))
            case .wide(let offsets): .wide(Array(offsets[start ... end]))
            }
        }

        mutating func append(_ offset: Int) {
            switch self {
            case .narrow(var offsets):
                self = .wide([])   // no second reference while appending
                if let narrow = UInt32(exactly: offset) {
                    offsets.append(narrow)
                    self = .narrow(offsets)
                } else {
                    var wide = offsets.map(Int.init)
                    wide.append(offset)
                    self = .wide(wide)
                }
            case .wide(var offsets):
                self = .wide([])
                offsets.append(offset)
                self = .wide(offsets)
            }
        }

        mutating func reserve(_ capacity: Int) {
            switch self {
            case .narrow(var offsets):
                self = .wide([])
                offsets.reserveCapacity(capacity)
                self = .narrow(offsets)
            case .wide(var offsets):
                self = .wide([])
                offsets.reserveCapacity(capacity)
                self = .wide(offsets)
            }
        }
    }
}

extension SnapshotEntries {
    /// The index of the first entry that does not sort before `entry` (entries sorted by `layout`).
    func lowerBound(of entry: SnapshotEntry, in layout: SnapshotLayout) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if layout.compare(self[mid], entry) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
