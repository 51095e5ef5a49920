import CFloor

/// Rows in the C floor's layout: `columnCount` `cfloor_value`s per row, text and blob values
/// pointing into one buffer this object owns (allocated once, so the pointers stay valid).
///
/// ```swift
/// let rows = CRows(columnCount: 2, rowCount: 1) { row in row.integer(1); row.text("Ann") }
/// rows.values.withUnsafeBufferPointer { cfloor_store(db, "t", "id,name", 2, CFLOOR_INSERT, $0.baseAddress, 1, &changes) }
/// ```
final class CRows {
    let columnCount: Int
    let rowCount: Int
    private(set) var values: [cfloor_value]
    private let storage: UnsafeMutableRawBufferPointer

    /// Appends one row's values, in column order.
    struct Builder {
        fileprivate var values: [cfloor_value] = []
        fileprivate var bytes: [UInt8] = []
        /// Value indices whose `integer` holds an offset into `bytes` until the pointers are fixed.
        fileprivate var pending: [Int] = []

        mutating func integer(_ value: Int64) {
            var v = cfloor_value()
            v.integer = value
            v.type = Int32(CFLOOR_INTEGER)
            values.append(v)
        }

        mutating func real(_ value: Double) {
            var v = cfloor_value()
            v.real = value
            v.type = Int32(CFLOOR_REAL)
            values.append(v)
        }

        mutating func null() {
            values.append(cfloor_value())
        }

        mutating func text(_ value: String) {
            appendBytes(Array(value.utf8), type: Int32(CFLOOR_TEXT))
        }

        /// A BLOB, or NULL for `nil`.
        mutating func blob(_ value: [UInt8]?) {
            guard let value, !value.isEmpty else { return null() }
            appendBytes(value, type: Int32(CFLOOR_BLOB))
        }

        private mutating func appendBytes(_ value: [UInt8], type: Int32) {
            var v = cfloor_value()
            v.integer = Int64(bytes.count)
            v.length = Int32(value.count)
            v.type = type
            pending.append(values.count)
            values.append(v)
            bytes.append(contentsOf: value)
        }
    }

    /// Builds `rowCount` rows; `row` is called once per row and appends `columnCount` values.
    init(columnCount: Int, rowCount: Int, row: (Int, inout Builder) -> Void) {
        self.columnCount = columnCount
        self.rowCount = rowCount
        var builder = Builder()
        builder.values.reserveCapacity(columnCount * rowCount)
        for index in 0..<rowCount { row(index, &builder) }
        precondition(builder.values.count == columnCount * rowCount, "each row must have \(columnCount) values")
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, builder.bytes.count), alignment: 16)
        builder.bytes.withUnsafeBytes { storage.copyMemory(from: $0) }
        self.storage = storage
        let base = UnsafeRawPointer(storage.baseAddress!)
        for index in builder.pending {
            let offset = Int(builder.values[index].integer)
            builder.values[index].bytes = base + offset
        }
        values = builder.values
    }

    deinit {
        storage.deallocate()
    }
}
