import Foundation

/// Maps a flat JSON object straight from parser tokens to attribute values, without
/// building a `JSONValue` or a dictionary: the bulk-import hot path.
///
/// It handles what bulk data usually is — one level of keys with scalar values — and
/// declines (returns `false`) on anything else: escaped keys, nested objects or arrays,
/// relationship keys, values a converter rejects. The caller then maps the element through
/// the general ``PropertyMap`` path, which gives the exact same result or the precise error.
struct FastObjectDecoder: Sendable {
    enum Kind: Sendable {
        case string, integer, double, bool, date, other
    }

    struct Slot: Sendable {
        let key: [UInt8]
        let attribute: Int
        let kind: Kind
        let isNullable: Bool
    }

    /// What a key maps to: plain values, so that a lookup retains nothing.
    struct Target: Sendable {
        let attribute: Int
        let kind: Kind
        let isNullable: Bool
    }

    struct KeyEntry: Sendable {
        let head: UInt64
        let length: Int
        let start: Int
        let target: Target
    }

    let slots: [Slot]
    let keyIndex: [KeyEntry]
    let keyBytes: [UInt8]
    let declined: [[UInt8]]
    let map: PropertyMap
    /// The number of attributes and the primary key's index, copied out of `map` for the hot path.
    let attributeCount: Int
    let primaryKeyIndex: Int
    /// What a row's primary key cell must hold for the hot path to keep the row: text for a
    /// string key, an integer for an integer key. Other key types take the general path, whose
    /// change sets record the key values exactly as mapped.
    let keyCellKind: RowBatch.Kind?

    /// `nil` when the entity's map uses key paths (nested keys), which only the general path reads.
    init?(map: PropertyMap) {
        var slots: [Slot] = []
        for (index, attribute) in map.attributes.enumerated() {
            guard attribute.jsonPath.count == 1 else { return nil }
            let kind: Kind
            switch (attribute.type, attribute.transform) {
            case (.string, nil): kind = .string
            case (.integer, nil): kind = .integer
            case (.double, nil): kind = .double
            case (.bool, nil): kind = .bool
            case (.date, nil): kind = .date
            default: kind = .other
            }
            slots.append(Slot(key: Array(attribute.jsonPath[0].utf8), attribute: index, kind: kind,
                              isNullable: attribute.isNullable))
        }
        self.slots = slots
        var entries: [KeyEntry] = []
        var bytes: [UInt8] = []
        for slot in slots {
            var head: UInt64 = 0
            slot.key.withUnsafeBytes { key in
                if let base = key.baseAddress { memcpy(&head, base, Swift.min(8, key.count)) }
            }
            let target = Target(attribute: slot.attribute, kind: slot.kind, isNullable: slot.isNullable)
            entries.append(KeyEntry(head: head, length: slot.key.count, start: bytes.count, target: target))
            bytes += slot.key
        }
        self.keyIndex = entries
        self.keyBytes = bytes
        self.declined = map.relationships.compactMap { $0.jsonPath.first.map { Array($0.utf8) } }
        self.map = map
        self.attributeCount = map.attributes.count
        self.primaryKeyIndex = map.primaryKeyIndex
        let keyType = map.attributes.indices.contains(map.primaryKeyIndex) ? map.attributes[map.primaryKeyIndex].type : nil
        switch keyType {
        case .integer?: keyCellKind = .integer
        case .string?: keyCellKind = .text
        default: keyCellKind = nil
        }
    }

    /// The slot whose key equals `key`'s raw bytes. Keys are compared by length, then by their
    /// first eight bytes, then in full, over a flat copy of all keys (no per-lookup retain).
    private func target(for key: JSONString) -> Target? {
        let raw = key.rawBytes
        guard let rawBase = raw.baseAddress else {
            return keyIndex.first { $0.length == 0 }?.target
        }
        let length = raw.count
        var head: UInt64 = 0
        memcpy(&head, rawBase, Swift.min(8, length))
        return keyIndex.withUnsafeBufferPointer { index -> Target? in
            keyBytes.withUnsafeBytes { bytes -> Target? in
                guard let base = bytes.baseAddress else { return nil }
                for entry in index where entry.length == length && entry.head == head {
                    if length <= 8 || memcmp(base + entry.start, rawBase, length) == 0 { return entry.target }
                }
                return nil
            }
        }
    }

    private func isDeclined(_ key: JSONString) -> Bool {
        let raw = key.rawBytes
        return declined.contains { candidate in
            guard candidate.count == raw.count else { return false }
            guard let rawBase = raw.baseAddress else { return true }
            return candidate.withUnsafeBytes { expected in
                expected.baseAddress.map { memcmp($0, rawBase, raw.count) == 0 } ?? false
            }
        }
    }

    /// A key the decoder did not store: an entry of the tally (`nil` past its distinct limit).
    struct FoundKey: Sendable {
        var index: Int?
        var kind: IgnoredKey.Kind
    }

    /// Reads one object from `reader` into `values`, counting the keys it ignored.
    ///
    /// - Returns: `false` when the general path must map this element instead.
    func decode(_ reader: inout JSONReader, into values: inout [AttributeValue?], ignoredKeys: inout Int) -> Bool {
        var sink = ValueSink(values: values)
        values = []
        defer { values = sink.values }
        var tally = IgnoredKeyTally()
        var found: [FoundKey] = []
        defer { ignoredKeys += found.filter { $0.kind != .duplicateKey }.count }
        return decodeObject(&reader, into: &sink, entity: 0, tally: &tally, found: &found)
    }

    /// Reads one object from `reader` into the row `batch` is building. Keys it does not
    /// store (unknown ones, and repeated ones: the last value wins) get entries in `tally` and
    /// are listed in `found`, for the caller to count once the object is kept.
    ///
    /// - Returns: `false` when the general path must map this element instead (the row's
    ///   cells may then hold part of the object: discard the row).
    func decode(_ reader: inout JSONReader, into batch: inout RowBatch, entity: Int, tally: inout IgnoredKeyTally,
                found: inout [FoundKey]) -> Bool {
        decodeObject(&reader, into: &batch, entity: entity, tally: &tally, found: &found)
    }

    private func decodeObject<Sink: FastValueSink>(_ reader: inout JSONReader, into sink: inout Sink, entity: Int,
                                                   tally: inout IgnoredKeyTally, found: inout [FoundKey]) -> Bool {
        do {
            guard case .beginObject = try reader.next() else { return false }
            var stored: UInt64 = 0
            while true {
                let token = try reader.next()
                guard case .key(let key) = token else {
                    guard case .endObject = token else { return false }
                    break
                }
                if key.hasEscapes { return false }
                guard let slot = target(for: key) else {
                    if isDeclined(key) { return false }
                    found.append(FoundKey(index: tally.entry(entity: entity, kind: .unknownKey, key: key.rawBytes),
                                          kind: .unknownKey))
                    try reader.skipValue()
                    continue
                }
                if slot.attribute < 64 {
                    let bit: UInt64 = 1 << UInt64(slot.attribute)
                    if stored & bit != 0 {
                        found.append(FoundKey(index: tally.entry(entity: entity, kind: .duplicateKey, key: key.rawBytes),
                                              kind: .duplicateKey))
                    }
                    stored |= bit
                }
                guard store(try reader.next(), slot: slot, into: &sink) else { return false }
            }
            guard case .end = try reader.next() else { return false }
            return true
        } catch {
            return false
        }
    }

    /// Stores one value; `false` when it needs the general path.
    @inline(__always)
    private func store<Sink: FastValueSink>(_ token: JSONToken, slot: Target, into sink: inout Sink) -> Bool {
        switch (token, slot.kind) {
        case (.string(let text), .string):
            sink.setString(text, slot.attribute)
        case (.string(let text), .date):
            guard !text.hasEscapes, let seconds = ISO8601.seconds(text.rawBytes) else { return false }
            sink.setDate(seconds, slot.attribute)
        case (.number(.int(let i)), .integer):
            sink.setInteger(i, slot.attribute)
        case (.number(.int(let i)), .double):
            sink.setDouble(Double(i), slot.attribute)
        case (.number(.double(let d)), .double):
            sink.setDouble(d, slot.attribute)
        case (.bool(let b), .bool):
            sink.setBool(b, slot.attribute)
        case (.null, _):
            guard slot.isNullable else { return false }
            sink.setNull(slot.attribute)
        default:
            guard let value = convert(token, slot: slot) else { return false }
            sink.set(value, slot.attribute)
        }
        return true
    }

    private func convert(_ token: JSONToken, slot: Target) -> AttributeValue? {
        switch token {
        case .beginObject, .beginArray, .endObject, .endArray, .key, .end, .null:
            return nil
        default:
            // Coercions (numeric strings, 1/0 for bools, Unix dates, transforms) go through the converter.
            let json: JSONValue
            switch token {
            case .string(let text): json = .string(text.decoded())
            case .number(let number): json = number.jsonValue
            case .bool(let b): json = .bool(b)
            default: return nil
            }
            return try? map.attributes[slot.attribute].converter.decode(json)
        }
    }
}

/// Where ``FastObjectDecoder`` puts the values it reads.
protocol FastValueSink {
    /// A string token (raw bytes valid UTF-8; escapes still encoded when `hasEscapes`).
    mutating func setString(_ text: JSONString, _ attribute: Int)
    /// An ISO 8601 date, as Unix seconds.
    mutating func setDate(_ seconds: Double, _ attribute: Int)
    mutating func setInteger(_ value: Int64, _ attribute: Int)
    mutating func setDouble(_ value: Double, _ attribute: Int)
    mutating func setBool(_ value: Bool, _ attribute: Int)
    mutating func setNull(_ attribute: Int)
    /// A value the attribute's converter produced.
    mutating func set(_ value: AttributeValue, _ attribute: Int)
}

/// Attribute values, as the general path's ``MappedObject`` holds them.
private struct ValueSink: FastValueSink {
    var values: [AttributeValue?]

    mutating func setString(_ text: JSONString, _ attribute: Int) {
        values[attribute] = .string(text.hasEscapes ? text.decoded() : String(decoding: text.rawBytes, as: UTF8.self))
    }
    mutating func setDate(_ seconds: Double, _ attribute: Int) {
        values[attribute] = .date(Date(timeIntervalSince1970: seconds))
    }
    mutating func setInteger(_ value: Int64, _ attribute: Int) { values[attribute] = .integer(value) }
    mutating func setDouble(_ value: Double, _ attribute: Int) { values[attribute] = .double(value) }
    mutating func setBool(_ value: Bool, _ attribute: Int) { values[attribute] = .bool(value) }
    mutating func setNull(_ attribute: Int) { values[attribute] = .null }
    mutating func set(_ value: AttributeValue, _ attribute: Int) { values[attribute] = value }
}

/// Cells of the row a batch is building, converted exactly as ``RowBatch/set(_:_:)`` converts
/// the values ``ValueSink`` would hold.
extension RowBatch: FastValueSink {
    mutating func setString(_ text: JSONString, _ attribute: Int) {
        if text.hasEscapes {
            // `decoded()` repairs lone surrogate escapes the way the `String` path always did.
            setText(text.decoded(), attribute)
        } else {
            setBytes(text.rawBytes, kind: .text, attribute)
        }
    }
    mutating func setDate(_ seconds: Double, _ attribute: Int) {
        // Through `Date`, whose reference-date storage rounds as the value path does.
        setDouble(Date(timeIntervalSince1970: seconds).timeIntervalSince1970, attribute)
    }
    mutating func setBool(_ value: Bool, _ attribute: Int) { setInteger(value ? 1 : 0, attribute) }
}
