extension RouteTrieStorage {
    /// The part of a request path that holds segments, after dropping the
    /// leading `/`, the query, the fragment and one trailing `/`.
    struct PathBounds {
        /// Where the first segment starts, or `end + 1` when there are no segments.
        var first: Int
        /// Where the last segment ends.
        var end: Int
    }

    /// Finds the segment bounds of `path`.
    @inline(__always)
    static func bounds(of path: UnsafeBufferPointer<UInt8>) -> PathBounds {
        let count = path.count
        guard let base = path.baseAddress, count > 0 else { return PathBounds(first: 1, end: 0) }
        let start = base[0] == UInt8(ascii: "/") ? 1 : 0
        var end = start
        // Eight bytes at a time while they fit, then one at a time.
        while end &+ 8 <= count {
            let word = loadWord(base + end)
            let found = byteMask(word, UInt8(ascii: "?")) | byteMask(word, UInt8(ascii: "#"))
            if found != 0 {
                end &+= found.trailingZeroBitCount &>> 3
                return trimmed(base, start: start, end: end)
            }
            end &+= 8
        }
        while end < count {
            let byte = base[end]
            if byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
            end &+= 1
        }
        return trimmed(base, start: start, end: end)
    }

    /// Drops one trailing `/` (but not the one of `//`) and handles the root.
    @inline(__always)
    private static func trimmed(_ base: UnsafePointer<UInt8>, start: Int, end: Int) -> PathBounds {
        var end = end
        if end &- 1 > start && base[end &- 1] == UInt8(ascii: "/") { end &-= 1 }
        return PathBounds(first: start == end ? end &+ 1 : start, end: end)
    }

    /// Eight bytes from `pointer`, first byte lowest.
    @inline(__always)
    static func loadWord(_ pointer: UnsafePointer<UInt8>) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(pointer).loadUnaligned(as: UInt64.self))
    }

    /// A word with the top bit set in each byte of `word` equal to `byte`
    /// (exact up to and including the lowest such byte, which is all callers use).
    @inline(__always)
    static func byteMask(_ word: UInt64, _ byte: UInt8) -> UInt64 {
        let difference = word ^ (0x0101_0101_0101_0101 &* UInt64(byte))
        return (difference &- 0x0101_0101_0101_0101) & ~difference & 0x8080_8080_8080_8080
    }

    /// Finds the terminal matching `path` for one of the methods in `mask`.
    ///
    /// Literal edges win over suffixed variables (longest suffix first), which
    /// win over the plain variable edge at each level; when a branch finds no
    /// route further down, the search backtracks to the next. `captures`
    /// receives, for each variable segment on the winning branch, its start and
    /// end offsets (two `Int`s per variable, `maxVariables` at most), a suffixed
    /// variable's end being where its suffix starts.
    /// Escapes in captured segments are not checked here (see `lookup`).
    ///
    /// - Returns: The terminal index, or `-1`.
    func search(
        _ path: UnsafeBufferPointer<UInt8>,
        methods mask: UInt8,
        captures: UnsafeMutablePointer<Int>
    ) -> Int32 {
        let bounds = Self.bounds(of: path)
        guard let base = path.baseAddress else {
            let terminal = nodes[0].terminal
            return terminal >= 0 && terminalMasks[Int(terminal)] & mask != 0 ? terminal : -1
        }
        return descend(node: 0, position: bounds.first, base: base, end: bounds.end, limit: path.count,
                       mask: mask, captures: captures, variableCount: 0)
    }

    /// The search from one node; recursion happens only where a node has a
    /// matching literal edge or suffix beside another way on.
    private func descend(
        node startNode: Int32,
        position startPosition: Int,
        base: UnsafePointer<UInt8>,
        end: Int,
        limit: Int,
        mask: UInt8,
        captures: UnsafeMutablePointer<Int>,
        variableCount startVariableCount: Int
    ) -> Int32 {
        var nodeIndex = startNode
        var position = startPosition
        var variableCount = startVariableCount
        while true {
            let node = nodes[Int(nodeIndex)]
            if position > end {
                if node.terminal >= 0 && terminalMasks[Int(node.terminal)] & mask != 0 { return node.terminal }
                return -1
            }
            let (segmentEnd, escaped) = Self.segmentEnd(base, from: position, end: end)
            let length = segmentEnd &- position

            var literalChild: Int32 = -1
            if node.literalCount > 0 {
                if escaped {
                    literalChild = findEscapedLiteral(node, UnsafeBufferPointer(start: base + position, count: length))
                } else {
                    let prefix = position &+ 8 <= limit
                        ? Self.loadWord(base + position) & Self.lowBytes(length)
                        : Self.prefixWord(base + position, length)
                    literalChild = findLiteral(node, prefix: prefix, key: base + position, length: length)
                }
            }
            if node.variableChild < 0 && node.suffixCount == 0 {
                guard literalChild >= 0 else { return -1 }
                nodeIndex = literalChild
                position = segmentEnd &+ 1
                continue
            }
            if literalChild >= 0 {
                let found = descend(node: literalChild, position: segmentEnd &+ 1, base: base, end: end, limit: limit,
                                    mask: mask, captures: captures, variableCount: variableCount)
                if found >= 0 { return found }
            }
            // A malformed escape is caught when the values are decoded: every
            // branch through this segment would capture it as a variable too.
            guard length > 0 else { return -1 }
            if node.suffixCount > 0 {
                var index = Int(node.suffixStart)
                let stop = index &+ Int(node.suffixCount)
                while index < stop {
                    let edge = suffixEdges[index]
                    let valueEnd = suffixStart(of: edge, base, from: position, to: segmentEnd, escaped: escaped)
                    if valueEnd > position {
                        captures[2 &* variableCount] = position
                        captures[2 &* variableCount &+ 1] = valueEnd
                        let found = descend(node: edge.child, position: segmentEnd &+ 1, base: base, end: end, limit: limit,
                                            mask: mask, captures: captures, variableCount: variableCount &+ 1)
                        if found >= 0 { return found }
                    }
                    index &+= 1
                }
                guard node.variableChild >= 0 else { return -1 }
            }
            captures[2 &* variableCount] = position
            captures[2 &* variableCount &+ 1] = segmentEnd
            variableCount &+= 1
            nodeIndex = node.variableChild
            position = segmentEnd &+ 1
        }
    }

    /// Where `edge`'s suffix starts in the segment `[position, segmentEnd)`, compared after
    /// percent-decoding (`7%2Ejson` ends with `.json`), or `-1` when the segment does not end
    /// with it. Read backwards, a `%` two bytes before a position always starts an escape,
    /// since `%` is no hexadecimal digit.
    @inline(__always)
    private func suffixStart(of edge: TrieEdge, _ base: UnsafePointer<UInt8>, from position: Int, to segmentEnd: Int,
                             escaped: Bool) -> Int {
        let suffix = keyBytes.baseAddress.unsafelyUnwrapped + Int(edge.keyOffset)
        var remaining = Int(edge.keyLength)
        var index = segmentEnd
        while remaining > 0 {
            guard index > position else { return -1 }
            let byte: UInt8
            if escaped, index &- 3 >= position, base[index &- 3] == UInt8(ascii: "%"),
               let high = PercentEncoding.hexValue(base[index &- 2]), let low = PercentEncoding.hexValue(base[index &- 1]) {
                byte = high &<< 4 | low
                index &-= 3
            } else {
                byte = base[index &- 1]
                index &-= 1
            }
            remaining &-= 1
            guard byte == suffix[remaining] else { return -1 }
        }
        return index
    }

    /// Where the segment starting at `position` ends (the next `/` or `end`),
    /// and whether it holds a `%`.
    @inline(__always)
    private static func segmentEnd(_ base: UnsafePointer<UInt8>, from position: Int, end: Int) -> (Int, Bool) {
        var index = position
        var escaped = false
        while index &+ 8 <= end {
            let word = loadWord(base + index)
            let slashes = byteMask(word, UInt8(ascii: "/"))
            let percents = byteMask(word, UInt8(ascii: "%"))
            if slashes != 0 {
                let bit = slashes.trailingZeroBitCount
                if percents & ((1 &<< UInt64(bit)) &- 1) != 0 { escaped = true }
                return (index &+ (bit &>> 3), escaped)
            }
            if percents != 0 { escaped = true }
            index &+= 8
        }
        while index < end {
            let byte = base[index]
            if byte == UInt8(ascii: "/") { break }
            if byte == UInt8(ascii: "%") { escaped = true }
            index &+= 1
        }
        return (index, escaped)
    }

    /// A mask of the low `length` bytes of a word (all of it from 8 on).
    @inline(__always)
    private static func lowBytes(_ length: Int) -> UInt64 {
        length >= 8 ? ~0 : (1 &<< UInt64(length &* 8)) &- 1
    }

    /// The child reached by the literal edge equal to `key`, or `-1`.
    @inline(__always)
    private func findLiteral(_ node: TrieNode, prefix: UInt64, key: UnsafePointer<UInt8>, length: Int) -> Int32 {
        var index = Int(node.literalStart)
        let stop = index &+ Int(node.literalCount)
        if stop &- index > 8 {
            // Binary search for the first edge whose prefix is not below `prefix`.
            var high = stop
            while index < high {
                let middle = (index &+ high) &>> 1
                if edges[middle].prefix < prefix { index = middle &+ 1 } else { high = middle }
            }
        }
        while index < stop {
            let edge = edges[index]
            if edge.prefix == prefix {
                if Int(edge.keyLength) == length
                    && (length <= 8 || equal(keyBytes.baseAddress.unsafelyUnwrapped + (Int(edge.keyOffset) &+ 8),
                                             key + 8, length &- 8)) {
                    return edge.child
                }
            } else if edge.prefix > prefix {
                return -1
            }
            index &+= 1
        }
        return -1
    }

    /// The child reached by the literal edge equal to the percent-decoded
    /// `segment`, or `-1` (also for a malformed escape).
    private func findEscapedLiteral(_ node: TrieNode, _ segment: UnsafeBufferPointer<UInt8>) -> Int32 {
        PercentEncoding.withDecodedBytes(segment) { decoded in
            guard let decoded, let key = decoded.baseAddress, !decoded.isEmpty else { return -1 }
            let prefix = Self.prefixWord(key, decoded.count)
            return findLiteral(node, prefix: prefix, key: key, length: decoded.count)
        }
    }

    @inline(__always)
    private func equal(_ lhs: UnsafePointer<UInt8>, _ rhs: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        var index = 0
        while index < count {
            if lhs[index] != rhs[index] { return false }
            index &+= 1
        }
        return true
    }
}
