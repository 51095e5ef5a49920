/// The stream parser's chunk driver: resumes what the last chunk cut short
/// (a token or a delivered value, kept in `carry`), then parses the rest of
/// the chunk in place, and keeps line numbers across chunks.
extension JSONStreamParser {
    typealias Body = (borrowing JSONElement) throws -> Void
    /// Decodes a streamed object in place, before the regular path looks for its end: given a
    /// tokenizer on the object's `{` (not final: running out of bytes suspends), returns `true`
    /// when it read and validated the whole object, leaving `p` just after it. `false` leaves
    /// the object to the regular path (scan, deliver, `Body`), whatever the decoder did.
    typealias Direct = (inout JSONTokenizer) -> Bool

    mutating func feedChunk(_ chunk: UnsafeRawBufferPointer, _ direct: Direct, _ body: Body) throws {
        let start = JSONTokenizer.base(of: chunk)
        let end = start + chunk.count
        let region = JSONSourceRegion(start: start, offset: offset, line: line, lineStart: lineStart)
        if chunk.count > limits.maxDocumentSize - offset {
            throw region.error(.documentTooLarge, at: start + (limits.maxDocumentSize - offset), "document longer than the limit of \(limits.maxDocumentSize) bytes")
        }
        let lineFeeds = jsonCountLineFeeds(start, end)
        defer {
            line += lineFeeds.count
            if let last = lineFeeds.last { lineStart = region.offset(of: last) + 1 }
            offset += chunk.count
        }
        var q = start
        while true {
            switch pending {
            case .none:
                if let suspendedAt = try process(from: q, to: end, region: region, isFinal: false, direct, body) {
                    startCarry(from: suspendedAt, to: end, region: region, lineFeeds: lineFeeds.count)
                }
                return
            case .element(var scan):
                switch Self.scanElement(&scan, from: q, to: end, maxDepth: limits.maxDepth) {
                case .incomplete:
                    carry.append(contentsOf: UnsafeRawBufferPointer(start: q, count: end - q))
                    pending = .element(scan)
                    if carry.count > limits.maxStreamedValueSize { try valueTooLarge(scan) }
                    return
                case .tooDeep(let bracket):
                    carry.append(contentsOf: UnsafeRawBufferPointer(start: q, count: bracket + 1 - q))
                    try validateCarry(scan, isFinal: false)
                    throw carryRegionError(.tooDeep, "arrays and objects nested deeper than \(limits.maxDepth) levels")
                case .complete(let valueEnd):
                    carry.append(contentsOf: UnsafeRawBufferPointer(start: q, count: valueEnd - q))
                    q = valueEnd
                    pending = .none
                    if carry.count > limits.maxStreamedValueSize { try valueTooLarge(scan) }
                    try deliverCarry(scan, body)
                }
            case .token(var completion):
                guard let used = completion.advance(from: q, to: end) else {
                    carry.append(contentsOf: UnsafeRawBufferPointer(start: q, count: end - q))
                    pending = .token(completion)
                    if carry.count > limits.maxStringLength + 16 {
                        // Long enough that the tokenizer must fail (string too long) or show an earlier
                        // error; anything it leaves becomes the new carry with a fresh completion state.
                        pending = .none
                        try processCarry(isFinal: false, direct, body)
                        if carry.count > limits.maxStreamedValueSize { try valueTooLarge(nil) }
                    }
                    return
                }
                carry.append(contentsOf: UnsafeRawBufferPointer(start: q, count: used))
                q += used
                pending = .none
                try processCarry(isFinal: false, direct, body)
            }
        }
    }

    mutating func finishInput(_ direct: Direct, _ body: Body) throws -> JSONValue {
        switch pending {
        case .element(let scan):
            try validateCarry(scan, isFinal: true)
            throw carryRegionError(.unexpectedEnd, "unexpected end of input in a value", atEnd: true)
        case .token:
            pending = .none
            try processCarry(isFinal: true, direct, body)
        case .none:
            let start = JSONTokenizer.base(of: UnsafeRawBufferPointer(start: nil, count: 0))
            let region = JSONSourceRegion(start: start, offset: offset, line: line, lineStart: lineStart)
            _ = try process(from: start, to: start, region: region, isFinal: true, direct, body)
        }
        guard let skeleton else {
            throw JSONParseError(code: .unexpectedEnd, byteOffset: offset, line: line, column: offset - lineStart + 1,
                                 message: "unexpected end of input: expected a JSON value")
        }
        return skeleton
    }

    /// Keeps `[from, end)` of the current buffer as the carry, with its line information.
    /// `lineFeeds`, the count of line feeds in `[region.start, end)` when the caller has it,
    /// spares counting the buffer again: only the carried tail is counted.
    mutating func startCarry(from: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>, region: JSONSourceRegion,
                             lineFeeds: Int? = nil) {
        let sub: JSONSourceRegion
        if let lineFeeds {
            let before = lineFeeds - jsonCountLineFeeds(from, end).count
            if before > 0, let last = jsonLastLineFeed(region.start, from) {
                sub = JSONSourceRegion(start: from, offset: region.offset(of: from), line: region.line + before,
                                       lineStart: region.offset(of: last) + 1)
            } else {
                sub = JSONSourceRegion(start: from, offset: region.offset(of: from), line: region.line, lineStart: region.lineStart)
            }
        } else {
            sub = region.subregion(at: from)
        }
        let bytes = UnsafeRawBufferPointer(start: from, count: end - from)
        carry.removeAll(keepingCapacity: true)
        carry.append(contentsOf: bytes)
        carryOffset = sub.offset
        carryLine = sub.line
        carryLineStart = sub.lineStart
        if case .none = pending { pending = .token(TokenCompletion(partial: bytes)) }
    }

    /// Parses the carried bytes as a buffer of their own; whatever they leave unfinished becomes the new carry.
    mutating func processCarry(isFinal: Bool, _ direct: Direct, _ body: Body) throws {
        var bytes: [UInt8] = []
        swap(&bytes, &carry)
        defer {
            if carry.isEmpty {
                bytes.removeAll(keepingCapacity: true)
                swap(&bytes, &carry)
            }
        }
        try bytes.withUnsafeBytes { buffer in
            let start = JSONTokenizer.base(of: buffer)
            let region = JSONSourceRegion(start: start, offset: carryOffset, line: carryLine, lineStart: carryLineStart)
            if let suspendedAt = try process(from: start, to: start + buffer.count, region: region, isFinal: isFinal, direct, body) {
                startCarry(from: suspendedAt, to: start + buffer.count, region: region)
            }
        }
    }

    /// Delivers the carried bytes as one complete value.
    mutating func deliverCarry(_ scan: ElementScan, _ body: Body) throws {
        var bytes: [UInt8] = []
        swap(&bytes, &carry)
        defer {
            bytes.removeAll(keepingCapacity: true)
            swap(&bytes, &carry)
        }
        try bytes.withUnsafeBytes { buffer in
            let start = JSONTokenizer.base(of: buffer)
            let region = JSONSourceRegion(start: start, offset: carryOffset, line: carryLine, lineStart: carryLineStart)
            try deliver(buffer, region: region, scan: scan, prevalidated: false, body)
        }
        tokenizer.valueDone()
        delivered(scan, placeholder: .object(JSONObject()))
    }

    /// Validates the carried bytes of a value; throws its first error.
    func validateCarry(_ scan: ElementScan, isFinal: Bool) throws {
        try carry.withUnsafeBytes { buffer in
            let start = JSONTokenizer.base(of: buffer)
            let region = JSONSourceRegion(start: start, offset: carryOffset, line: carryLine, lineStart: carryLineStart)
            var validator = JSONTokenizer(start: start, end: start + buffer.count, region: region, baseDepth: scan.parentDepth, limits: limits)
            validator.isFinal = isFinal
            while try validator.next() != .end {}
        }
    }

    mutating func valueTooLarge(_ scan: ElementScan?) throws {
        if let scan { try validateCarry(scan, isFinal: false) }
        throw carryRegionError(.valueTooLarge, "value longer than the streaming limit of \(limits.maxStreamedValueSize) bytes")
    }

    /// An error at the start (or end) of the carried bytes.
    func carryRegionError(_ code: JSONParseError.Code, _ message: String, atEnd: Bool = false) -> JSONParseError {
        carry.withUnsafeBytes { buffer in
            let start = JSONTokenizer.base(of: buffer)
            let region = JSONSourceRegion(start: start, offset: carryOffset, line: carryLine, lineStart: carryLineStart)
            return region.error(code, at: atEnd ? start + buffer.count : start, message)
        }
    }
}
