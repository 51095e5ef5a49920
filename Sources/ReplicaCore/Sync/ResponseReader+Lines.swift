import Foundation

/// NDJSON (``InputFormat/ndjson``): one JSON value per line, read as if it were the array of
/// those values. A path of its own, so the array path pays nothing for it: line feeds are
/// found with `memchr`, each line is parsed where it lies in the chunk (only a line cut by a
/// chunk boundary is copied), and memory stays bounded by the longest line.
extension ResponseReader {
    /// Where the reader is in the input, across chunks.
    private struct LineCursor {
        /// The absolute offset of the current chunk's first byte.
        var offset = 0
        /// The 1-based number of the line that starts next.
        var line = 1
        /// Values read so far: the next value's index, as in the array the input stands for.
        var index = 0
        /// The start of a line cut by a chunk boundary, with its offset and number.
        var carry: [UInt8] = []
        var carryOffset = 0
        var carryLine = 1
    }

    /// ``run(next:totalBytes:queue:pool:cancellation:)`` for NDJSON into `entity`.
    func runLines(entity: Int, next: () throws -> [UInt8]?, totalBytes: Int64?, queue: ReaderOutput,
                  pool: RowBatchPool, cancellation: Latch) throws {
        var summary = ReaderSummary()
        summary.statistics.claims = priorClaims
        var batch = pool.take()
        var planned: [PlannedRow] = []
        var nextProgress = options.progressInterval
        var order = fast?.makeKeyOrder() ?? FastObjectDecoder.KeyOrder(count: 0)
        var cursor = LineCursor()
        let limits = options.limits
        func readOne(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, offset: Int, number: Int) throws {
            try self.readLine(start, end, offset: offset, number: number, entity: entity, index: &cursor.index,
                              batch: &batch, planned: &planned, order: &order, statistics: &summary.statistics)
        }
        func lineTooLong() -> SyncError {
            let error = JSONParseError(code: .valueTooLarge, byteOffset: cursor.carryOffset, line: cursor.carryLine, column: 1,
                                       message: "line longer than the streaming limit of \(limits.maxStreamedValueSize) bytes")
            return SyncError(.malformedJSON, error.description, source: source, underlying: error)
        }
        while let chunk = try next() {
            if cancellation.isSet { throw SyncError(.cancelled, "cancelled", source: source) }
            if chunk.count > limits.maxDocumentSize - cursor.offset {
                let error = JSONParseError(code: .documentTooLarge, byteOffset: limits.maxDocumentSize, line: cursor.line, column: 1,
                                           message: "document longer than the limit of \(limits.maxDocumentSize) bytes")
                throw SyncError(.malformedJSON, error.description, source: source, underlying: error)
            }
            try chunk.withUnsafeBytes { raw in
                let start = JSONTokenizer.base(of: raw)
                let end = start + raw.count
                var p = start
                while p < end {
                    guard let found = memchr(p, 0x0A, end - p) else {
                        if cursor.carry.isEmpty {
                            cursor.carryOffset = cursor.offset + (p - start)
                            cursor.carryLine = cursor.line
                        }
                        cursor.carry.append(contentsOf: UnsafeBufferPointer(start: p, count: end - p))
                        if cursor.carry.count > limits.maxStreamedValueSize { throw lineTooLong() }
                        return
                    }
                    let lineEnd = UnsafePointer(found.assumingMemoryBound(to: UInt8.self))
                    if cursor.carry.isEmpty {
                        try readOne(p, lineEnd, offset: cursor.offset + (p - start), number: cursor.line)
                    } else {
                        cursor.carry.append(contentsOf: UnsafeBufferPointer(start: p, count: lineEnd - p))
                        if cursor.carry.count > limits.maxStreamedValueSize { throw lineTooLong() }
                        var line: [UInt8] = []
                        swap(&line, &cursor.carry)
                        try line.withUnsafeBytes { bytes in
                            let lineStart = JSONTokenizer.base(of: bytes)
                            try readOne(lineStart, lineStart + bytes.count, offset: cursor.carryOffset, number: cursor.carryLine)
                        }
                        line.removeAll(keepingCapacity: true)
                        swap(&line, &cursor.carry)
                    }
                    cursor.line += 1
                    p = lineEnd + 1
                }
            }
            cursor.offset += chunk.count
            summary.byteCount += Int64(chunk.count)
            guard afterChunk(&batch, objects: summary.statistics.objectCount, bytes: summary.byteCount,
                             nextProgress: &nextProgress, totalBytes: totalBytes, queue: queue, pool: pool) else { return }
        }
        if !cursor.carry.isEmpty {
            // The last line, without a line feed.
            let line = cursor.carry
            try line.withUnsafeBytes { bytes in
                let lineStart = JSONTokenizer.base(of: bytes)
                try readOne(lineStart, lineStart + bytes.count, offset: cursor.carryOffset, number: cursor.carryLine)
            }
        }
        try finishKeys(&summary.statistics)
        if !batch.isEmpty { guard queue.push(.rows(batch)) else { return } }
        // The input stands for one array: a complete collection of the entity.
        summary.skeleton = .array([])
        summary.matches = [JSONStreamMatch(pointer: .root, patternIndex: 0, isStreamedArray: true, elementCount: cursor.index)]
        summary.completeCollections.insert(entity)
        options.progress?(SyncProgress(bytesRead: summary.byteCount, totalBytes: totalBytes,
                                       objectsWritten: summary.statistics.objectCount))
        queue.push(.finished(summary))
    }

    /// Reads the line `[start, end)` (without its line feed), which starts at `offset` on line
    /// `number`: nothing for a blank line, else exactly one value, mapped as the element at
    /// `index` of the array the input stands for.
    ///
    /// - Throws: ``SyncError``: a JSON error with its byte offset, line and column; a mapping
    ///   error (or a strict one) prefixed with the line and the byte offset where it starts.
    private func readLine(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, offset: Int, number: Int, entity: Int,
                          index: inout Int, batch: inout RowBatch, planned: inout [PlannedRow],
                          order: inout FastObjectDecoder.KeyOrder, statistics: inout PlanStatistics) throws {
        var valueStart = start
        var valueEnd = end
        while valueStart < valueEnd, Self.isBlank(valueStart.pointee) { valueStart += 1 }
        while valueEnd > valueStart, Self.isBlank((valueEnd - 1).pointee) { valueEnd -= 1 }
        if valueStart == valueEnd { return }
        let region = JSONSourceRegion(start: start, offset: offset, line: number, lineStart: offset)
        defer { index += 1 }
        // The hot path: a flat object of the entity, read in place.
        if let fast, valueStart.pointee == UInt8(ascii: "{") {
            var tokenizer = JSONTokenizer(start: valueStart, end: valueEnd, region: region, limits: options.limits)
            tokenizer.isFinal = false
            batch.beginRow(entity: entity, attributeCount: fast.attributeCount)
            if fast.decodeInPlace(&tokenizer, into: &batch, order: &order), tokenizer.p == valueEnd,
               completeRow(fast: fast, batch: &batch) {
                statistics.objectCount += 1
                batch.commitRow(isTopLevel: true)
                return
            }
            batch.discardRow()
        }
        // Validate the line: one value, then nothing.
        try parse {
            var validator = JSONTokenizer(start: valueStart, end: valueEnd, region: region, limits: options.limits)
            while validator.state != .done {
                if try validator.next() == .end { break }
            }
            validator.skipWhitespace()
            if validator.p < valueEnd {
                throw region.error(.trailingCharacters, at: validator.p, "unexpected \(jsonDescribeByte(validator.p.pointee)) "
                                   + "after the line's value: NDJSON holds one JSON value per line")
            }
        }
        var complete = true
        do {
            try withUnsafeMutablePointer(to: &complete) { flag in
                let element = JSONElement(bytes: UnsafeRawBufferPointer(start: valueStart, count: valueEnd - valueStart),
                                          index: index, patternIndex: 0, basePointer: .root, region: region, depth: 0,
                                          limits: options.limits, completion: flag)
                try handle(element, batch: &batch, planned: &planned, statistics: &statistics)
            }
        } catch var error as SyncError where error.code != .cancelled && error.code != .malformedJSON {
            error.message = "line \(number) (byte \(offset)): " + error.message
            error.source = error.source ?? source
            throw error
        }
    }

    /// Space, tab and carriage return: what may surround a line's value.
    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D
    }
}
