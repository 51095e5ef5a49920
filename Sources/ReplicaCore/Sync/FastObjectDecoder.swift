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
        /// The key's last eight bytes (keys of 9 to 16 bytes are compared as `head` and `tail`).
        let tail: UInt64
        let length: Int
        let start: Int
        let target: Target
        /// Whether the key's bytes need no escaping in JSON (no `"`, `\` or control character),
        /// so that they followed by a `"` are the whole, valid key.
        let isPlain: Bool
    }

    /// The order in which the last object gave its keys, by entry of ``keyIndex``: the next
    /// object most likely gives them in the same order, so each key is compared with one entry.
    struct KeyOrder: Sendable {
        var first = 0
        var next: [Int]
        init(count: Int) { next = Array(repeating: 0, count: max(1, count)) }
    }

    /// A key order to pass to every ``decodeInPlace(_:into:order:)`` call of one response.
    func makeKeyOrder() -> KeyOrder { KeyOrder(count: keyIndex.count) }

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
    /// What the map does with keys that match nothing, its column of kept keys, and the keys it ignores.
    let unmappedKeys: UnmappedKeyPolicy
    let unmappedIndex: Int?
    let ignoredKeyGlobs: [KeyGlob]

    /// `nil` when the entity's map uses key paths (nested keys), which only the general path reads,
    /// or when its primary key is composite (the general path records the key's tuple).
    init?(map: PropertyMap) {
        guard map.primaryKeyIndexes.count == 1 else { return nil }
        var slots: [Slot] = []
        for (index, attribute) in map.attributes.enumerated() {
            // The column of kept keys has no key: it is filled once the object's keys are read.
            if index == map.unmappedIndex { continue }
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
            var tail: UInt64 = 0
            slot.key.withUnsafeBytes { key in
                if let base = key.baseAddress {
                    memcpy(&head, base, Swift.min(8, key.count))
                    if key.count >= 8 { memcpy(&tail, base + key.count - 8, 8) }
                }
            }
            let target = Target(attribute: slot.attribute, kind: slot.kind, isNullable: slot.isNullable)
            let isPlain = !slot.key.contains { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 }
            entries.append(KeyEntry(head: head, tail: tail, length: slot.key.count, start: bytes.count, target: target, isPlain: isPlain))
            bytes += slot.key
        }
        self.keyIndex = entries
        self.keyBytes = bytes
        self.declined = map.relationships.compactMap { $0.jsonPath.first.map { Array($0.utf8) } }
        self.map = map
        self.attributeCount = map.attributes.count
        self.primaryKeyIndex = map.primaryKeyIndex
        self.unmappedKeys = map.unmappedKeys
        self.unmappedIndex = map.unmappedIndex
        self.ignoredKeyGlobs = map.ignoredKeyGlobs
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
        entryIndex(for: key).map { keyIndex[$0].target }
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
            // Made at the first kept key only: the other policies' objects pay nothing for it.
            var kept: JSONObject?
            while true {
                let token = try reader.next()
                guard case .key(let key) = token else {
                    guard case .endObject = token else { return false }
                    break
                }
                if key.hasEscapes { return false }
                guard let slot = target(for: key) else {
                    if isDeclined(key) { return false }
                    if !ignoredKeyGlobs.isEmpty && ignoredKeyGlobs.contains(where: { $0.matches(key.rawBytes) }) {
                        try reader.skipValue()
                        continue
                    }
                    switch unmappedKeys {
                    case .warn:
                        found.append(FoundKey(index: tally.entry(entity: entity, kind: .unknownKey, key: key.rawBytes),
                                              kind: .unknownKey))
                        try reader.skipValue()
                    case .ignore:
                        try reader.skipValue()
                    case .keep:
                        // Read as the general path reads it, so both write the same JSON text.
                        let value = try reader.readValue()
                        kept = kept ?? JSONObject()
                        kept?[String(decoding: key.rawBytes, as: UTF8.self)] = value
                    }
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
            if let unmappedIndex { sink.set(kept.map { .json(.object($0)) } ?? .null, unmappedIndex) }
            return true
        } catch {
            return false
        }
    }

    /// Reads one flat object in place, straight from the stream's bytes, into the row `batch` is
    /// building: ``JSONStreamParser/Direct``'s decoder for this entity. `tokenizer` is on the
    /// `{`; on success it is just after the `}`, every byte in between validated as the
    /// tokenizer validates it.
    ///
    /// It takes only the common case: every key is one of the entity's, given once, with a
    /// scalar value the attribute takes. Anything else — an unknown, repeated, escaped or
    /// declined key, a nested value, invalid JSON, the end of the bytes — returns `false`, and
    /// the element goes the regular way (``decode(_:into:entity:tally:found:)`` or the general
    /// path), which reports it exactly. The row's cells may then hold part of the object:
    /// discard the row.
    func decodeInPlace(_ tokenizer: inout JSONTokenizer, into batch: inout RowBatch, order: inout KeyOrder) -> Bool {
        guard attributeCount <= 64, !keyIndex.isEmpty else { return false }
        do {
            tokenizer.p += 1
            tokenizer.skipWhitespace()
            var stored: UInt64 = 0
            var predicted = order.first
            var previous = -1
            while true {
                guard tokenizer.p < tokenizer.end, tokenizer.p.pointee == UInt8(ascii: "\""),
                      let entry = try matchKey(&tokenizer, predicted: predicted)
                else { return false }
                if previous < 0 { order.first = entry } else { order.next[previous] = entry }
                previous = entry
                let target = keyIndex[entry].target
                let bit: UInt64 = 1 << UInt64(target.attribute)
                if stored & bit != 0 { return false }
                stored |= bit
                tokenizer.skipWhitespace()
                guard tokenizer.p < tokenizer.end, tokenizer.p.pointee == UInt8(ascii: ":") else { return false }
                tokenizer.p += 1
                tokenizer.skipWhitespace()
                guard tokenizer.p < tokenizer.end, let token = try scalar(&tokenizer),
                      store(token, slot: target, into: &batch)
                else { return false }
                tokenizer.skipWhitespace()
                guard tokenizer.p < tokenizer.end else { return false }
                let separator = tokenizer.p.pointee
                tokenizer.p += 1
                if separator == UInt8(ascii: "}") {
                    // Every key was mapped: nothing to keep.
                    if let unmappedIndex { batch.setNull(unmappedIndex) }
                    return true
                }
                guard separator == UInt8(ascii: ",") else { return false }
                tokenizer.skipWhitespace()
                predicted = order.next[entry]
            }
        } catch {
            return false
        }
    }

    /// The entry of the key whose opening quote is at `tokenizer.p`, leaving `p` after its
    /// closing quote: compared first with the `predicted` entry's bytes, else scanned and
    /// looked up. `nil` for a key the entity does not map, an escaped key, or a cut one.
    @inline(__always)
    private func matchKey(_ tokenizer: inout JSONTokenizer, predicted: Int) throws -> Int? {
        let body = tokenizer.p + 1
        let entry = keyIndex[predicted]
        let available = tokenizer.end - body
        if entry.isPlain && available > entry.length && body[entry.length] == UInt8(ascii: "\"") {
            let same: Bool
            if entry.length <= 8 && available >= 8 {
                // The key's bytes against the entry's first eight, loaded and masked to its length.
                let word = UInt64(littleEndian: UnsafeRawPointer(body).loadUnaligned(as: UInt64.self))
                let mask: UInt64 = entry.length == 8 ? ~0 : (1 &<< UInt64(entry.length &* 8)) &- 1
                same = word & mask == UInt64(littleEndian: entry.head)
            } else if entry.length <= 16 && available >= 16 {
                let raw = UnsafeRawPointer(body)
                same = raw.loadUnaligned(as: UInt64.self) == entry.head
                    && raw.loadUnaligned(fromByteOffset: entry.length - 8, as: UInt64.self) == entry.tail
            } else {
                same = keyBytes.withUnsafeBytes { bytes in
                    bytes.baseAddress.map { memcmp($0 + entry.start, body, entry.length) == 0 } ?? (entry.length == 0)
                }
            }
            if same {
                tokenizer.p = body + entry.length + 1
                return predicted
            }
        }
        let key = try tokenizer.scanString()
        guard !tokenizer.suspended, !key.hasEscapes else { return nil }
        return entryIndex(for: key)
    }

    /// The index in ``keyIndex`` of the entry whose key equals `key`'s raw bytes.
    @inline(__always)
    private func entryIndex(for key: JSONString) -> Int? {
        let raw = key.rawBytes
        guard let rawBase = raw.baseAddress else { return keyIndex.firstIndex { $0.length == 0 } }
        let length = raw.count
        var head: UInt64 = 0
        memcpy(&head, rawBase, Swift.min(8, length))
        return keyBytes.withUnsafeBytes { bytes -> Int? in
            guard let base = bytes.baseAddress else { return nil }
            return keyIndex.firstIndex { entry in
                entry.length == length && entry.head == head && (length <= 8 || memcmp(base + entry.start, rawBase, length) == 0)
            }
        }
    }

    /// The scalar value at `tokenizer.p`; `nil` for an object, an array, or bytes that run out.
    @inline(__always)
    private func scalar(_ tokenizer: inout JSONTokenizer) throws -> JSONToken? {
        let token: JSONToken
        switch tokenizer.p.pointee {
        case UInt8(ascii: "\""): token = .string(try tokenizer.scanString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): token = .number(try tokenizer.scanNumber())
        case UInt8(ascii: "t"):
            try tokenizer.scanLiteral("true")
            token = .bool(true)
        case UInt8(ascii: "f"):
            try tokenizer.scanLiteral("false")
            token = .bool(false)
        case UInt8(ascii: "n"):
            try tokenizer.scanLiteral("null")
            token = .null
        default:
            return nil
        }
        return tokenizer.suspended ? nil : token
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
