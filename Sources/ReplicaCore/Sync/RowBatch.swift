import Foundation

/// Planned rows in columnar form: what the parsing thread hands the writer.
///
/// Every row has one cell per attribute of its entity; a cell is a kind and a 64-bit payload
/// (an integer, a double's bits, or an offset into ``arena`` with a length for text and
/// blobs). The writer binds cells straight onto prepared statements, text and blobs with
/// `SQLITE_STATIC` pointers into the arena, without touching a Swift object per value.
/// Values convert the way the writer always bound them: JSON as its serialized text, dates
/// as Unix seconds, booleans as 0/1, empty blobs as zero-length blobs.
///
/// A batch is reused: the writer sends it back to the parsing thread (``RowBatchPool``),
/// which empties it keeping its capacity, so the memory is allocated and freed on one thread
/// (glibc frees memory of another thread's arena slowly). It is a value of plain arrays: the
/// parsing thread builds it in a local variable, without the runtime exclusivity checks a
/// class's stored properties would cost per cell.
package struct RowBatch: Sendable {
    /// What a cell holds.
    package enum Kind: UInt8, Sendable {
        /// The attribute was absent: the stored value stays untouched.
        case absent
        case null
        /// `payload` is the integer (booleans are 0 or 1).
        case integer
        /// `payload` is the double's bit pattern (dates are Unix seconds).
        case double
        /// `payload` is the offset of the UTF-8 bytes in the arena, `length` their count.
        case text
        /// `payload` is the offset of the bytes in the arena, `length` their count.
        case blob
    }

    package struct Cell: Sendable {
        package var kind: Kind
        package var length: Int32
        package var payload: Int64

        package init(kind: Kind, length: Int32, payload: Int64) {
            self.kind = kind
            self.length = length
            self.payload = payload
        }

        package static let absent = Cell(kind: .absent, length: 0, payload: 0)
    }

    package struct Row: Sendable {
        package var entity: Int
        package var firstCell: Int
        package var cellCount: Int
        /// Bit `i` set when attribute `i` is present (entities of up to 64 attributes).
        package var mask: UInt64
        package var isTopLevel: Bool
        /// A link row: `entity` is an index into ``SchemaMapping/links``, the first cell the
        /// parent's key and the others its children's keys, which replace its links.
        package var isLinks: Bool = false
    }

    package private(set) var rows: [Row] = []
    package private(set) var cells: [Cell] = []
    /// Text and blob bytes: the used part of ``arenaStorage``. Byte 0 is always there (a NUL),
    /// so the arena's base address is never `nil` and empty text has a valid pointer.
    package var arena: ArraySlice<UInt8> { arenaStorage[..<arenaCount] }
    /// The arena's buffer: initialized (zeros) beyond ``arenaCount``, so that bytes are copied
    /// into it with one `memcpy` each, without `Array`'s generic append.
    private var arenaStorage: [UInt8] = [0]
    private var arenaCount = 1
    /// Primary keys that are not `.integer` or `.string` values (rare; general path only), by
    /// row index: the change set records them as the values the object had, not as bound. Every
    /// row of an entity with a composite key has its ``AttributeValue/compositeKey(_:)`` here
    /// (its parts are cells too, which the writer binds).
    package private(set) var otherKeys: [Int: AttributeValue] = [:]

    /// The row being built: its entity, first cell, presence mask and where the arena was.
    private var openEntity = 0
    private var openFirstCell = 0
    private var openMask: UInt64 = 0
    private var openArenaCount = 1

    init() {}

    /// A batch rebuilt from its parts (read back from a sync session's staging).
    init(rows: [Row], cells: [Cell], arena: [UInt8], otherKeys: [Int: AttributeValue]) {
        self.rows = rows
        self.cells = cells
        self.arenaStorage = arena.isEmpty ? [0] : arena
        self.arenaCount = arenaStorage.count
        self.otherKeys = otherKeys
    }

    var count: Int { rows.count }
    var isEmpty: Bool { rows.isEmpty }

    /// Empties the batch, keeping its capacity.
    mutating func removeAll() {
        rows.removeAll(keepingCapacity: true)
        cells.removeAll(keepingCapacity: true)
        arenaCount = 1
        if !otherKeys.isEmpty { otherKeys.removeAll() }
    }

    /// Bytes held (capacity), to decide whether a batch is worth keeping for reuse.
    var retainedBytes: Int {
        rows.capacity * MemoryLayout<Row>.stride + cells.capacity * MemoryLayout<Cell>.stride + arenaStorage.capacity
    }

    // MARK: Building (parsing thread)

    /// Starts a row of `entity` with `attributeCount` absent cells.
    mutating func beginRow(entity: Int, attributeCount: Int) {
        openEntity = entity
        openFirstCell = cells.count
        openMask = 0
        openArenaCount = arenaCount
        cells.append(contentsOf: repeatElement(Cell.absent, count: attributeCount))
    }

    /// Drops the row being built.
    mutating func discardRow() {
        cells.removeSubrange(openFirstCell...)
        arenaCount = openArenaCount
    }

    /// Ends the row being built. Its primary key must be an integer or text cell holding the
    /// object's own `.integer` or `.string` key; other keys go through ``append(_:keyIndex:)``.
    mutating func commitRow(isTopLevel: Bool, isLinks: Bool = false) {
        rows.append(Row(entity: openEntity, firstCell: openFirstCell, cellCount: cells.count - openFirstCell,
                        mask: openMask, isTopLevel: isTopLevel, isLinks: isLinks))
    }

    /// The kind of attribute `attribute` of the row being built.
    func kind(_ attribute: Int) -> Kind { cells[openFirstCell + attribute].kind }

    @inline(__always)
    private mutating func set(_ attribute: Int, _ cell: Cell) {
        cells[openFirstCell + attribute] = cell
        if attribute < 64 { openMask |= 1 << UInt64(attribute) }
    }

    mutating func setNull(_ attribute: Int) { set(attribute, Cell(kind: .null, length: 0, payload: 0)) }

    mutating func setInteger(_ value: Int64, _ attribute: Int) { set(attribute, Cell(kind: .integer, length: 0, payload: value)) }

    mutating func setDouble(_ value: Double, _ attribute: Int) {
        set(attribute, Cell(kind: .double, length: 0, payload: Int64(bitPattern: value.bitPattern)))
    }

    /// Sets text (`kind == .text`) or a blob from raw bytes, copied into the arena.
    mutating func setBytes(_ bytes: UnsafeRawBufferPointer, kind: Kind, _ attribute: Int) {
        let offset = arenaCount
        let count = bytes.count
        if arenaStorage.count - offset < count {
            arenaStorage.append(contentsOf: repeatElement(0, count: Swift.max(count, arenaStorage.count)))
        }
        if count > 0, let source = bytes.baseAddress {
            arenaStorage.withUnsafeMutableBytes { storage in
                guard let target = storage.baseAddress.map({ $0 + offset }) else { return }
                if count >= 8 && count <= 16 {
                    // Most values: two overlapping eight-byte moves instead of a call to memmove.
                    let head = source.loadUnaligned(as: UInt64.self)
                    let tail = source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                    target.storeBytes(of: head, as: UInt64.self)
                    target.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
                } else {
                    target.copyMemory(from: source, byteCount: count)
                }
            }
        }
        arenaCount = offset + count
        set(attribute, Cell(kind: kind, length: Int32(clamping: bytes.count), payload: Int64(offset)))
    }

    mutating func setText(_ text: String, _ attribute: Int) {
        var text = text
        text.withUTF8 { setBytes(UnsafeRawBufferPointer($0), kind: .text, attribute) }
    }

    /// Sets an attribute value, converted as the writer binds it.
    mutating func set(_ value: AttributeValue, _ attribute: Int) {
        switch value {
        case .null: setNull(attribute)
        case .integer(let i): setInteger(i, attribute)
        case .double(let d): setDouble(d, attribute)
        case .bool(let b): setInteger(b ? 1 : 0, attribute)
        case .date(let date): setDouble(date.timeIntervalSince1970, attribute)
        case .string(let s): setText(s, attribute)
        case .json(let json):
            json.serializedBytes().withUnsafeBytes { setBytes($0, kind: .text, attribute) }
        case .data(let bytes):
            bytes.withUnsafeBytes { setBytes($0, kind: .blob, attribute) }
        }
    }

    /// Appends a row planned by the general path; `keyIndexes` are its entity's primary key
    /// attributes (several for a composite key, whose tuple is recorded in ``otherKeys``).
    mutating func append(_ row: PlannedRow, keyIndexes: [Int]) {
        guard keyIndexes.count > 1, !row.isLinks else {
            append(row, keyIndex: row.isLinks ? 0 : keyIndexes.first ?? 0)
            return
        }
        beginRow(entity: row.entity, attributeCount: row.values.count)
        for (index, value) in row.values.enumerated() {
            if let value { set(value, index) }
        }
        commitRow(isTopLevel: row.isTopLevel)
        otherKeys[rows.count - 1] = .compositeKey(keyIndexes.map { $0 < row.values.count ? row.values[$0] ?? .null : .null })
    }

    /// Appends a row planned by the general path; `keyIndex` is its entity's primary key attribute.
    mutating func append(_ row: PlannedRow, keyIndex: Int) {
        beginRow(entity: row.entity, attributeCount: row.values.count)
        for (index, value) in row.values.enumerated() {
            if let value { set(value, index) }
        }
        commitRow(isTopLevel: row.isTopLevel, isLinks: row.isLinks)
        // Link rows hold keys of key types only (integers, strings): the schema allows no other.
        if row.isLinks { return }
        let key = keyIndex < row.values.count ? row.values[keyIndex] : nil
        switch key {
        case .integer?, .string?: break
        default: otherKeys[rows.count - 1] = key ?? .null
        }
    }

    // MARK: Reading (writer)

    /// Text of a cell (for keys and messages; the hot path binds arena pointers instead).
    package func text(of cell: Cell) -> String {
        let start = Int(cell.payload)
        return arena.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<start + Int(cell.length)]), as: UTF8.self)
        }
    }

    /// A cell as an attribute value of its stored kind (`nil` when absent).
    package func value(of cell: Cell) -> AttributeValue? {
        switch cell.kind {
        case .absent: return nil
        case .null: return .null
        case .integer: return .integer(cell.payload)
        case .double: return .double(Double(bitPattern: UInt64(bitPattern: cell.payload)))
        case .text: return .string(text(of: cell))
        case .blob:
            let start = Int(cell.payload)
            return .data(Array(arena[start..<start + Int(cell.length)]))
        }
    }

    /// Appends the keys of top-level rows of tracked entities to `keys[entity]`: the objects a
    /// response listed, which stale-row deletion keeps.
    ///
    /// - Parameters:
    ///   - keyIndexes: The primary key's attribute index by entity index.
    ///   - tracked: Whether an entity's keys are wanted, by entity index.
    ///   - keys: The keys by entity index.
    func collectTopLevelKeys(keyIndexes: [Int], tracked: [Bool], into keys: inout [PrimaryKeys]) {
        let hasOtherKeys = !otherKeys.isEmpty
        for index in rows.indices {
            let row = rows[index]
            guard row.isTopLevel, tracked[row.entity] else { continue }
            let keyIndex = keyIndexes[row.entity]
            if !hasOtherKeys, keyIndex < row.cellCount {
                let cell = cells[row.firstCell + keyIndex]
                if cell.kind == .integer {
                    keys[row.entity].integers.append(cell.payload)
                    continue
                }
            }
            keys[row.entity].append(key(ofRow: index, keyIndex: keyIndex))
        }
    }

    /// The primary key of row `index` as the object gave it (`.null` when it had none).
    package func key(ofRow index: Int, keyIndex: Int) -> AttributeValue {
        if let other = otherKeys[index] { return other }
        let row = rows[index]
        guard keyIndex < row.cellCount else { return .null }
        return value(of: cells[row.firstCell + keyIndex]) ?? .null
    }
}

/// Consumed batches on their way back from the writer to the parsing thread, which reuses them.
final class RowBatchPool: Sendable {
    private let free = Locked<[RowBatch]>([])
    private let capacity: Int
    /// Batches that grew beyond this many bytes (a few huge values) are not kept.
    private let maximumRetainedBytes = 8 << 20

    init(capacity: Int) { self.capacity = capacity }

    /// An empty batch: a returned one when there is one, else a new one.
    func take() -> RowBatch {
        guard var batch = free.withLock({ $0.popLast() }) else { return RowBatch() }
        batch.removeAll()
        return batch
    }

    /// Hands a consumed batch back; the writer must not keep a copy, so that the parsing thread
    /// reuses its storage instead of copying it.
    func recycle(_ batch: consuming RowBatch) {
        guard batch.retainedBytes <= maximumRetainedBytes else { return }
        let capacity = self.capacity
        var returned: RowBatch? = consume batch
        free.withLock { free in
            if free.count < capacity, let batch = returned.take() { free.append(batch) }
        }
    }
}
