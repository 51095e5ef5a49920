/// The stream parser's structure pass over one contiguous buffer: tokens
/// outside delivered values build the skeleton; at each value position the
/// patterns decide whether the value is streamed, delivered or kept.
extension JSONStreamParser {
    /// What to do with the value starting at the tokenizer's position.
    enum Route {
        /// Not matched: parse it into the skeleton; `mask` is its patterns so far.
        case keep(mask: UInt64)
        /// Streamed, delivered or suspended: nothing more to do for this token.
        case handled
        /// Cut by the end of the buffer at this byte.
        case suspended(UnsafePointer<UInt8>)
    }

    /// Parses `[from, end)`; returns where it stopped if a token or delivered value is cut short.
    mutating func process(
        from: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>, region: JSONSourceRegion, isFinal: Bool,
        _ direct: Direct, _ body: Body
    ) throws -> UnsafePointer<UInt8>? {
        tokenizer.p = from
        tokenizer.end = end
        tokenizer.region = region
        tokenizer.isFinal = isFinal
        tokenizer.suspended = false
        var childMask: UInt64 = 0
        while true {
            tokenizer.skipWhitespace()
            if tokenizer.p < end {
                let byte = tokenizer.p.pointee
                switch tokenizer.state {
                case .commaOrEnd where byte == UInt8(ascii: ","):
                    // Stop after the separator so that the next value is routed.
                    tokenizer.state = tokenizer.inObject ? .nextKey : .arrayValue
                    tokenizer.p += 1
                    continue
                case .colon where byte == UInt8(ascii: ":"):
                    tokenizer.state = .objectValue
                    tokenizer.p += 1
                    continue
                case .topLevel, .objectValue, .arrayValue, .firstArrayValue:
                    guard jsonIsValueStart(byte) else { break }
                    switch try route(region: region, direct, body) {
                    case .handled: continue
                    case .suspended(let at): return at
                    case .keep(let mask): childMask = mask
                    }
                default:
                    break
                }
            }
            let token = try tokenizer.next()
            switch token {
            case .end:
                return tokenizer.suspended ? tokenizer.p : nil
            case .beginObject, .beginArray:
                frames.append(Frame(kind: token == .beginObject ? .object : .array, mask: childMask, component: childComponent))
            case .key(let key):
                frames[frames.count - 1].key = key.decoded()
            case .string(let string): add(.string(string.decoded()))
            case .number(let number): add(number.jsonValue)
            case .bool(let bool): add(.bool(bool))
            case .null: add(.null)
            case .endObject, .endArray:
                guard let frame = frames.popLast() else { continue }
                switch frame.kind {
                case .object: add(.object(frame.object))
                case .array: add(.array(frame.array))
                case .streamedArray: add(.array([]))
                }
            }
        }
    }

    /// The step from the innermost open container to the value about to start.
    var childComponent: JSONPointer.Component? {
        guard let top = frames.last else { return nil }
        return top.kind == .object ? .key(top.key) : .index(top.count)
    }

    /// Adds a finished value to the skeleton.
    mutating func add(_ value: JSONValue) {
        guard !frames.isEmpty else {
            skeleton = value
            return
        }
        let top = frames.count - 1
        switch frames[top].kind {
        case .object:
            frames[top].object[frames[top].key] = value
        case .array:
            frames[top].array.append(value)
            frames[top].count += 1
        case .streamedArray:
            frames[top].count += 1
        }
    }

    /// Decides what happens to the value starting at the tokenizer's position, and does it.
    mutating func route(region: JSONSourceRegion, _ direct: Direct, _ body: Body) throws -> Route {
        let first = tokenizer.p.pointee
        var scan: ElementScan
        let innermost = frames.count - 1
        if innermost >= 0 && frames[innermost].kind == .streamedArray {
            if first == UInt8(ascii: "{") && tokenizer.depth < limits.maxDepth {
                // One pass: the decoder reads the object and finds its end; the regular path
                // below (scan for the end, then deliver) only runs when it declines.
                var element = JSONTokenizer(start: tokenizer.p, end: tokenizer.end, region: region,
                                            baseDepth: tokenizer.depth, limits: limits)
                element.isFinal = false
                if direct(&element) && element.p - tokenizer.p <= limits.maxStreamedValueSize {
                    tokenizer.p = element.p
                    tokenizer.valueDone()
                    frames[innermost].count += 1
                    matches[frames[innermost].matchIndex].elementCount += 1
                    return .handled
                }
            }
            scan = ElementScan(basePointer: frames[innermost].pointer, index: frames[innermost].count,
                               patternIndex: frames[innermost].patternIndex, parentDepth: tokenizer.depth)
        } else {
            let level = frames.count
            var mask: UInt64
            if let top = frames.last, let component = childComponent {
                mask = top.mask
                var remaining = mask
                while remaining != 0 {
                    let index = remaining.trailingZeroBitCount
                    remaining &= remaining &- 1
                    if !patterns[index].accepts(component, at: level - 1) { mask &= ~(1 << UInt64(index)) }
                }
            } else {
                mask = patterns.count == 64 ? ~0 : (1 << UInt64(patterns.count)) &- 1
            }
            var hit: UInt64 = 0
            var remaining = mask
            while remaining != 0 {
                let index = remaining.trailingZeroBitCount
                remaining &= remaining &- 1
                if patterns[index].components.count == level { hit |= 1 << UInt64(index) }
            }
            guard hit != 0 else { return .keep(mask: mask) }
            let patternIndex = hit.trailingZeroBitCount
            let pointer = currentPointer
            if first == UInt8(ascii: "[") {
                _ = try tokenizer.next()
                var frame = Frame(kind: .streamedArray, mask: 0, component: childComponent)
                frame.pointer = pointer
                frame.patternIndex = patternIndex
                frame.matchIndex = matches.count
                frames.append(frame)
                matches.append(JSONStreamMatch(pointer: pointer, patternIndex: patternIndex, isStreamedArray: true, elementCount: 0))
                return .handled
            }
            scan = ElementScan(basePointer: pointer, index: nil, patternIndex: patternIndex, parentDepth: tokenizer.depth)
        }

        let start = tokenizer.p
        if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
            switch Self.scanElement(&scan, from: start, to: tokenizer.end, maxDepth: limits.maxDepth) {
            case .incomplete:
                pending = .element(scan)
                return .suspended(start)
            case .tooDeep(let bracket):
                var validator = JSONTokenizer(start: start, end: bracket + 1, region: region, baseDepth: scan.parentDepth, limits: limits)
                validator.isFinal = false
                while try validator.next() != .end {}
                throw region.error(.tooDeep, at: bracket, "arrays and objects nested deeper than \(limits.maxDepth) levels")
            case .complete(let valueEnd):
                if valueEnd - start > limits.maxStreamedValueSize {
                    throw region.error(.valueTooLarge, at: start, "value longer than the streaming limit of \(limits.maxStreamedValueSize) bytes")
                }
                try deliver(UnsafeRawBufferPointer(start: start, count: valueEnd - start), region: region, scan: scan, prevalidated: false, body)
                tokenizer.p = valueEnd
                tokenizer.valueDone()
                delivered(scan, placeholder: .object(JSONObject()))
                return .handled
            }
        }

        let token = try tokenizer.next()
        if tokenizer.suspended { return .suspended(tokenizer.p) }
        let tokenStart = tokenizer.tokenStart
        try deliver(UnsafeRawBufferPointer(start: tokenStart, count: tokenizer.p - tokenStart), region: region, scan: scan, prevalidated: true, body)
        let value: JSONValue
        switch token {
        case .string(let string): value = scan.index == nil ? .string(string.decoded()) : .null
        case .number(let number): value = number.jsonValue
        case .bool(let bool): value = .bool(bool)
        default: value = .null
        }
        delivered(scan, placeholder: value)
        return .handled
    }

    /// Records a delivered value: counts an array element, or records a match and a skeleton placeholder.
    mutating func delivered(_ scan: ElementScan, placeholder: JSONValue) {
        if scan.index != nil {
            let top = frames.count - 1
            frames[top].count += 1
            matches[frames[top].matchIndex].elementCount += 1
        } else {
            matches.append(JSONStreamMatch(pointer: scan.basePointer, patternIndex: scan.patternIndex, isStreamedArray: false, elementCount: 1))
            add(placeholder)
        }
    }

    /// Calls `body` with the value in `bytes`, then validates whatever `body` did not read.
    func deliver(_ bytes: UnsafeRawBufferPointer, region: JSONSourceRegion, scan: ElementScan, prevalidated: Bool, _ body: Body) throws {
        var complete = prevalidated
        try withUnsafeMutablePointer(to: &complete) { flag in
            let element = JSONElement(
                bytes: bytes, index: scan.index, patternIndex: scan.patternIndex, basePointer: scan.basePointer,
                region: region, depth: scan.parentDepth, limits: limits, completion: flag)
            try body(element)
        }
        if !complete {
            let start = JSONTokenizer.base(of: bytes)
            var validator = JSONTokenizer(start: start, end: start + bytes.count, region: region, baseDepth: scan.parentDepth, limits: limits)
            while try validator.next() != .end {}
        }
    }

    /// The pointer of the value about to start.
    var currentPointer: JSONPointer {
        var components: [JSONPointer.Component] = []
        components.reserveCapacity(frames.count)
        for (index, frame) in frames.enumerated() {
            if let component = frame.component { components.append(component) }
            if index == frames.count - 1 { components.append(frame.kind == .object ? .key(frame.key) : .index(frame.count)) }
        }
        return JSONPointer(components: components)
    }
}

/// Whether `byte` can start a JSON value.
@inline(__always)
func jsonIsValueStart(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\""), UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"),
        UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
        return true
    default:
        return false
    }
}
