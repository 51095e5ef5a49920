/// The rows of a flat resource (``MockPageRenderer/isFlat``) as they go on the wire, kept by the memory
/// store beside its rows in key order, so that a page is copied, not rendered.
///
/// A row's bytes are what ``MockPageRenderer/writeStored(_:first:into:)`` writes for it after the first:
/// `,` then the object. They live in blocks of memory that are only ever appended to (a changed row's new
/// bytes go after the others), so a page taken under the store's lock is read after it while writers go on;
/// when more bytes are dead than alive, the live ones are copied into new blocks. About 12 bytes a row
/// beside the row's own JSON text.
///
/// ```swift
/// var bytes = MockRowBytes(resource: people, rows: [])   // nil for a resource that is not flat
/// bytes?.insert(["id": 1, "name": "ann"], at: 0)
/// let page = bytes?.page(0..<1)
/// renderer.render(page)   // [{"id":1,"name":"ann",…}]
/// ```
struct MockRowBytes: Sendable {
    /// Where one row's bytes are.
    struct Span: Sendable {
        var block: UInt32
        var offset: UInt32
        var count: UInt32
    }

    /// Memory written once, from the start: bytes below ``used`` never change.
    /// `@unchecked Sendable`: readers on other threads read only bytes below `used`, never written again; `used` changes under the store's lock.
    final class Block: @unchecked Sendable {
        let base: UnsafeMutableRawPointer
        let capacity: Int
        /// Bytes written; changed only by the store, under its lock.
        var used = 0

        init(capacity: Int) {
            self.capacity = capacity
            base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        }

        deinit { base.deallocate() }
    }

    /// Some rows' bytes, taken under the store's lock and read after it.
    struct Page: Sendable {
        let blocks: [Block]
        let spans: [Span]

        /// The rows' bytes as a JSON array's members (no `,` before the first), in runs as long as the rows
        /// lie one after the other in memory.
        func forEachRun(_ body: (UnsafeRawBufferPointer) -> Void) {
            guard var run = spans.first, run.count > 0 else { return }
            run.offset += 1
            run.count -= 1
            func emit(_ run: Span) {
                let block = blocks[Int(run.block)]
                body(UnsafeRawBufferPointer(start: block.base.advanced(by: Int(run.offset)), count: Int(run.count)))
            }
            for span in spans.dropFirst() {
                if span.block == run.block && span.offset == run.offset + run.count {
                    run.count += span.count
                } else {
                    emit(run)
                    run = span
                }
            }
            emit(run)
        }
    }

    /// The largest block made for small rows (a row larger than it gets a block of its own size).
    static let blockSize = 1 << 20
    /// Dead bytes are dropped once there are more of them than live ones, and at least this many.
    static let compactionFloor = 1 << 20

    /// The renderer the bytes were written with (its resource's property names decide them).
    let renderer: MockPageRenderer
    /// One per row, in the store's key order.
    private(set) var spans: [Span] = []
    private var blocks: [Block] = []
    private var scratch = MockPageWriter(hashing: false, capacity: 512)
    /// Bytes of the rows kept, and of rows changed or removed since the last compaction.
    private(set) var live = 0
    private(set) var dead = 0

    /// The bytes of `rows` (in key order) for `resource`; nil when its rows do not go on the wire as stored.
    init?(resource: MockResource, rows: [JSONObject]) {
        guard MockPageRenderer.isFlat(resource) else { return nil }
        renderer = MockPageRenderer(resource: resource, envelope: nil)
        spans.reserveCapacity(rows.count)
        for row in rows { spans.append(append(row)) }
    }

    /// Whether the bytes are `resource`'s: it is flat and has the same property names in the same order.
    func renders(_ resource: MockResource) -> Bool {
        let mine = renderer.resource.properties
        let theirs = resource.properties
        guard mine.count == theirs.count, MockPageRenderer.isFlat(resource) else { return false }
        for index in mine.indices where mine[index].name != theirs[index].name { return false }
        return true
    }

    var count: Int { spans.count }

    /// A new row's bytes, at `index` in key order.
    mutating func insert(_ row: JSONObject, at index: Int) {
        spans.insert(append(row), at: index)
    }

    /// The bytes of the row at `index`, changed.
    mutating func replace(at index: Int, with row: JSONObject) {
        dead += Int(spans[index].count)
        live -= Int(spans[index].count)
        spans[index] = append(row)
        compactIfWasteful()
    }

    /// The row at `index` removed.
    mutating func remove(at index: Int) {
        let span = spans.remove(at: index)
        dead += Int(span.count)
        live -= Int(span.count)
        compactIfWasteful()
    }

    /// The bytes of the rows in `range` (positions in key order).
    func page(_ range: Range<Int>) -> Page {
        Page(blocks: blocks, spans: Array(spans[range]))
    }

    /// Renders `row` and appends its bytes to the last block (or a new one).
    private mutating func append(_ row: JSONObject) -> Span {
        scratch.clear()
        scratch.byte(UInt8(ascii: ","))
        renderer.writeFlatObject(row, into: &scratch)
        return scratch.withUnsentBytes { append($0) }
    }

    private mutating func append(_ bytes: UnsafeRawBufferPointer) -> Span {
        let last = blocks.last
        if last.map({ $0.capacity - $0.used < bytes.count }) ?? true {
            // Small tables stay small: blocks double from 4 KiB up to `blockSize`.
            let size = max(bytes.count, min(Self.blockSize, max(4096, 2 * (last?.capacity ?? 0))))
            blocks.append(Block(capacity: size))
        }
        let index = blocks.count - 1
        let block = blocks[index]
        if let source = bytes.baseAddress {
            block.base.advanced(by: block.used).copyMemory(from: source, byteCount: bytes.count)
        }
        let span = Span(block: UInt32(index), offset: UInt32(block.used), count: UInt32(bytes.count))
        block.used += bytes.count
        live += bytes.count
        return span
    }

    /// Copies the live bytes into new blocks when more are dead than alive (pages being read keep the old ones).
    private mutating func compactIfWasteful() {
        guard dead > Self.compactionFloor, dead > live else { return }
        let old = blocks
        blocks = []
        live = 0
        dead = 0
        for index in spans.indices {
            let span = spans[index]
            let block = old[Int(span.block)]
            spans[index] = append(UnsafeRawBufferPointer(start: block.base.advanced(by: Int(span.offset)), count: Int(span.count)))
        }
    }
}
