import Foundation
import ReplicaCore

/// Turns planned row batches into `COPY … FROM STDIN` text, one buffer per entity, and keeps
/// what the merge needs to know of the rows: their keys, which rows were top-level objects and
/// which attributes each row held.
///
/// A stage table's columns are `replica_ord` (the row's position in the sync, so that the last
/// of two objects with one key wins), `replica_mask` (the attributes present, bit `i` for
/// attribute `i`), `replica_top` (a top-level object, which stale-row deletion keeps), then the
/// entity's attributes.
///
/// Runs on the one thread that drains a sync's batches.
final class CopyEncoder {
    /// Buffers of at least this many bytes are sent.
    static let flushSize = 1 << 20

    struct EntityState {
        var buffer: [UInt8] = []
        /// Every row's key, in order (duplicates tell that the merge must pick the last).
        var keys = PrimaryKeys()
        /// The keys of top-level objects once a row was not one; `nil` while every row was (the
        /// common case: they are then `keys`, not held twice).
        var nestedTopKeys: PrimaryKeys?
        /// The keys of top-level objects: what the sync listed, which stale-row deletion keeps.
        var topKeys: PrimaryKeys { nestedTopKeys ?? keys }
        /// Distinct presence masks of the rows.
        var masks: Set<UInt64> = []
        var rowCount = 0
        let types: [AttributeType]
        let names: [String]
        let entityName: String
        let keyIndex: Int

        init(map: PropertyMap) {
            types = map.entity.attributes.map(\.type)
            names = map.entity.attributes.map(\.name)
            entityName = map.entity.name
            keyIndex = map.primaryKeyIndex
        }

        /// The state of a link side's stage table: `replica_ord`, the parent's key, a child's key
        /// (`NULL` for a parent that lists no child).
        init(link: LinkSide, maps: [PropertyMap]) {
            types = [maps[link.parent].entity.primaryKeyAttribute.type, maps[link.child].entity.primaryKeyAttribute.type]
            names = [link.parentColumn, link.childColumn]
            entityName = "\(maps[link.parent].entity.name).\(link.relationship)"
            keyIndex = 0
        }
    }

    private(set) var entities: [EntityState]
    private var ordinal: Int64 = 0

    /// The number of entities: states after them are link sides' (``SchemaMapping/links``).
    let entityCount: Int

    init(mapping: SchemaMapping) {
        entities = mapping.maps.map(EntityState.init(map:)) + mapping.links.map { EntityState(link: $0, maps: mapping.maps) }
        entityCount = mapping.maps.count
    }

    /// Appends the rows of `batch` to their entities' buffers.
    ///
    /// - Throws: ``PostgresStoreError`` for a value PostgreSQL's column cannot hold (text in an
    ///   integer column, a NUL character in text), naming the entity, key and attribute.
    func append(_ batch: RowBatch) throws {
        for index in batch.rows.indices {
            ordinal += 1
            let row = batch.rows[index]
            if row.isLinks {
                try appendLinks(row: row, of: batch, ordinal: ordinal, to: &entities[entityCount + row.entity])
                continue
            }
            // In place: a copy of the state would copy its buffer on the first append.
            try append(row: index, of: batch, ordinal: ordinal, to: &entities[row.entity])
        }
    }

    /// One line per child of a link row (`ord, parent, child`), or one with a `NULL` child for
    /// a parent that lists none: the parent's latest row (highest `ord`) says its links.
    private func appendLinks(row: RowBatch.Row, of batch: RowBatch, ordinal: Int64, to state: inout EntityState) throws {
        var parent: [UInt8] = []
        let parentCell = batch.cells[row.firstCell]
        do {
            try encode(parentCell, of: batch, type: state.types[0], into: &parent)
            for offset in 0..<max(1, row.cellCount - 1) {
                appendNumber(ordinal, to: &state.buffer)
                state.buffer.append(0x09)
                state.buffer += parent
                state.buffer.append(0x09)
                let child = offset + 1 < row.cellCount ? batch.cells[row.firstCell + offset + 1] : RowBatch.Cell.absent
                try encode(child, of: batch, type: state.types[1], into: &state.buffer)
                state.buffer.append(0x0A)
                state.rowCount += 1
            }
        } catch let message as ValueMessage {
            throw PostgresStoreError(.server, "\(state.entityName) of \(batch.value(of: parentCell) ?? .null): " + message.text,
                                     url: "")
        }
    }

    private func append(row index: Int, of batch: RowBatch, ordinal: Int64, to state: inout EntityState) throws {
        let row = batch.rows[index]
        var mask: UInt64 = 0
        for attribute in 0..<min(64, state.types.count, row.cellCount)
        where batch.cells[row.firstCell + attribute].kind != .absent {
            mask |= 1 << UInt64(attribute)
        }
        let key = batch.key(ofRow: index, keyIndex: state.keyIndex)
        if !row.isTopLevel && state.nestedTopKeys == nil { state.nestedTopKeys = state.keys }
        state.keys.append(key)
        if row.isTopLevel { state.nestedTopKeys?.append(key) }
        appendNumber(ordinal, to: &state.buffer)
        state.buffer.append(0x09)
        appendNumber(Int64(bitPattern: mask), to: &state.buffer)
        state.buffer.append(0x09)
        state.buffer.append(row.isTopLevel ? UInt8(ascii: "t") : UInt8(ascii: "f"))
        for attribute in 0..<state.types.count {
            state.buffer.append(0x09)
            let cell = attribute < row.cellCount ? batch.cells[row.firstCell + attribute] : RowBatch.Cell.absent
            do {
                try encode(cell, of: batch, type: state.types[attribute], into: &state.buffer)
            } catch let message as ValueMessage {
                throw PostgresStoreError(.server, "\(state.entityName) \(key): attribute '\(state.names[attribute])': "
                                         + message.text, url: "")
            }
        }
        state.buffer.append(0x0A)
        state.masks.insert(mask)
        state.rowCount += 1
    }

    /// Takes the buffer of `entity` (emptied, keeping its capacity for the next rows).
    func take(_ entity: Int) -> [UInt8] {
        var taken: [UInt8] = []
        taken.reserveCapacity(Self.flushSize + Self.flushSize / 4)
        swap(&taken, &entities[entity].buffer)
        return taken
    }

    /// The entity whose buffer is largest, when it holds at least `minimum` bytes.
    func fullest(minimum: Int) -> Int? {
        var best: Int? = nil
        var size = minimum - 1
        for (index, state) in entities.enumerated() where state.buffer.count > size {
            best = index
            size = state.buffer.count
        }
        return best
    }

    /// COPY text of one key per line (integer or text keys).
    static func lines(_ keys: PrimaryKeys) -> [UInt8] {
        var text: [UInt8] = []
        func part(_ key: AttributeValue) {
            switch key {
            case .integer(let i): text += Array(String(i).utf8)
            case .string(let s):
                for byte in s.utf8 {
                    switch byte {
                    case 0x5C: text += [0x5C, 0x5C]
                    case 0x09: text += [0x5C, UInt8(ascii: "t")]
                    case 0x0A: text += [0x5C, UInt8(ascii: "n")]
                    case 0x0D: text += [0x5C, UInt8(ascii: "r")]
                    default: text.append(byte)
                    }
                }
            default: text += [0x5C, UInt8(ascii: "N")]
            }
        }
        for key in keys {
            // A composite key is one line of its parts, tab-separated (one column each).
            if let parts = key.compositeKeyParts {
                for (offset, value) in parts.enumerated() {
                    if offset > 0 { text.append(0x09) }
                    part(value)
                }
            } else {
                part(key)
            }
            text.append(0x0A)
        }
        return text
    }

    private struct ValueMessage: Error { let text: String }

    private func encode(_ cell: RowBatch.Cell, of batch: RowBatch, type: AttributeType, into buffer: inout [UInt8]) throws {
        switch cell.kind {
        case .absent, .null:
            buffer.append(0x5C)
            buffer.append(UInt8(ascii: "N"))
        case .integer:
            appendNumber(cell.payload, to: &buffer)
        case .double:
            let value = Double(bitPattern: UInt64(bitPattern: cell.payload))
            switch type {
            case .integer, .bool:
                guard let exact = Int64(exactly: value) else {
                    throw ValueMessage(text: "\(value) is not an integer (its column is bigint)")
                }
                appendNumber(exact, to: &buffer)
            default:
                if value.isNaN {
                    buffer += Array("NaN".utf8)
                } else if value.isInfinite {
                    buffer += Array((value < 0 ? "-Infinity" : "Infinity").utf8)
                } else {
                    buffer += Array(value.description.utf8)
                }
            }
        case .text:
            switch type {
            case .integer, .bool, .double, .date:
                throw ValueMessage(text: "\"\(batch.text(of: cell))\" is text, and its column is numeric")
            default:
                try appendText(cell, of: batch, to: &buffer)
            }
        case .blob:
            guard type == .data || type == .string || type == .json else {
                throw ValueMessage(text: "a blob cannot be stored in a numeric column")
            }
            let start = Int(cell.payload)
            let bytes = batch.arena[start..<start + Int(cell.length)]
            if type == .data {
                buffer += [0x5C, 0x5C, UInt8(ascii: "x")]
                let digits = Array("0123456789abcdef".utf8)
                for byte in bytes {
                    buffer.append(digits[Int(byte >> 4)])
                    buffer.append(digits[Int(byte & 0x0F)])
                }
            } else {
                try appendText(cell, of: batch, to: &buffer)
            }
        }
    }

    /// Text with COPY's escapes: backslash, tab, newline and carriage return.
    private func appendText(_ cell: RowBatch.Cell, of batch: RowBatch, to buffer: inout [UInt8]) throws {
        let start = Int(cell.payload)
        let end = start + Int(cell.length)
        try batch.arena.withUnsafeBufferPointer { arena in
            let base = arena.startIndex
            let bytes = UnsafeBufferPointer(rebasing: arena[(start - base)..<(end - base)])
            var plain = true
            for byte in bytes where byte == 0x5C || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0 {
                plain = false
                break
            }
            if plain {
                buffer.append(contentsOf: bytes)
                return
            }
            for byte in bytes {
                switch byte {
                case 0x5C: buffer += [0x5C, 0x5C]
                case 0x09: buffer += [0x5C, UInt8(ascii: "t")]
                case 0x0A: buffer += [0x5C, UInt8(ascii: "n")]
                case 0x0D: buffer += [0x5C, UInt8(ascii: "r")]
                case 0: throw ValueMessage(text: "PostgreSQL text cannot hold a NUL character (\\u0000)")
                default: buffer.append(byte)
                }
            }
        }
    }

    @inline(__always)
    private func appendNumber(_ value: Int64, to buffer: inout [UInt8]) {
        if value >= 0 && value < 10 {
            buffer.append(UInt8(truncatingIfNeeded: value) + 0x30)
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        let negative = value < 0
        var magnitude = value.magnitude
        var count = 0
        withUnsafeMutableBytes(of: &digits) { raw in
            while magnitude > 0 {
                raw[23 - count] = UInt8(truncatingIfNeeded: magnitude % 10) + 0x30
                magnitude /= 10
                count += 1
            }
            if negative { buffer.append(UInt8(ascii: "-")) }
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[(24 - count)...]))
        }
    }
}

extension PrimaryKeys {
    /// Sorts the integer keys, the text keys (by their UTF-8 bytes) and the composite keys (part
    /// by part: integers before text).
    mutating func sortKeys() {
        integers.sort()
        strings.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        if tuples.count > 1 { sortTuples() }
    }

}
