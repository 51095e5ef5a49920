/// A trie node: its literal edges (a run in `edges`, sorted by prefix), its
/// suffixed-variable edges (a run in `suffixEdges`, longest suffix first), its
/// variable child and its terminal (the routes ending here), `-1` for none.
struct TrieNode {
    var literalStart: Int32
    var literalCount: Int32
    var suffixStart: Int32
    var suffixCount: Int32
    var variableChild: Int32
    var terminal: Int32
}

/// A literal edge: the segment's first eight UTF-8 bytes packed in a word
/// (zero-padded), its length, the rest of its bytes (a run in `keyBytes`),
/// and the child node. A node's edges are sorted by `(prefix, length)`.
/// A suffixed-variable edge uses `keyOffset` and `keyLength` for its whole
/// suffix, and no prefix.
struct TrieEdge {
    var prefix: UInt64
    var keyOffset: Int32
    var keyLength: Int32
    var child: Int32
}

/// The frozen, flat form of a route trie: plain buffers that lookups read
/// through pointers, without reference counting or bounds checks.
///
/// `@unchecked Sendable`: every buffer is allocated and filled in `init`,
/// never written afterwards and freed in `deinit`; concurrent reads of
/// memory nobody writes are safe.
@usableFromInline
final class RouteTrieStorage: @unchecked Sendable {
    let nodes: UnsafeMutableBufferPointer<TrieNode>
    let edges: UnsafeMutableBufferPointer<TrieEdge>
    let suffixEdges: UnsafeMutableBufferPointer<TrieEdge>
    let keyBytes: UnsafeMutableBufferPointer<UInt8>
    /// Per terminal: the methods that have a route there (`HTTPMethod.bit`).
    let terminalMasks: UnsafeMutableBufferPointer<UInt8>
    /// Per terminal: `methodCount` route indexes by `HTTPMethod.index`, `-1` for none.
    let terminalRoutes: UnsafeMutableBufferPointer<Int32>
    /// Per terminal: the lowest route index (the first registered) ending there.
    let terminalFirstRoute: UnsafeMutableBufferPointer<Int32>
    /// The most variables any pattern has: the capture buffer's size.
    let maxVariables: Int
    /// Per route: its variable names, in pattern order.
    let variableNames: [[String]]

    static let methodCount = HTTPMethod.allCases.count

    /// Builds the trie. Conflicting routes must have been refused before:
    /// for one method and one shape, the first route wins.
    init(routes: [(method: HTTPMethod, pattern: RoutePattern)]) {
        let root = BuildNode()
        var maxVariables = 0
        self.variableNames = routes.map(\.pattern.variables)
        for (routeIndex, route) in routes.enumerated() {
            maxVariables = max(maxVariables, route.pattern.variables.count)
            var node = root
            for segment in route.pattern.segments {
                switch segment {
                case .literal(let text):
                    node = node.literalChild(Array(text.utf8))
                case .variable:
                    node = node.variableChild()
                case .suffixedVariable(_, let suffix):
                    node = node.suffixChild(Array(suffix.utf8))
                }
            }
            node.add(route: Int32(routeIndex), method: route.method)
        }
        self.maxVariables = maxVariables

        // Number the nodes breadth first, then lay them out.
        var order: [BuildNode] = [root]
        var cursor = 0
        while cursor < order.count {
            let node = order[cursor]
            node.literals.sort { $0.prefix != $1.prefix ? $0.prefix < $1.prefix : $0.key.count < $1.key.count }
            for edge in node.literals {
                edge.node.number = Int32(order.count)
                order.append(edge.node)
            }
            // Longest suffix first: `:name.tar.gz` is tried before `:name.gz`.
            node.suffixed.sort { $0.key.count != $1.key.count ? $0.key.count > $1.key.count : $0.key.lexicographicallyPrecedes($1.key) }
            for edge in node.suffixed {
                edge.node.number = Int32(order.count)
                order.append(edge.node)
            }
            if let variable = node.variable {
                variable.number = Int32(order.count)
                order.append(variable)
            }
            cursor += 1
        }

        var nodes: [TrieNode] = []
        var edges: [TrieEdge] = []
        var suffixEdges: [TrieEdge] = []
        var keyBytes: [UInt8] = []
        var masks: [UInt8] = []
        var terminalRouteList: [Int32] = []
        var firsts: [Int32] = []
        nodes.reserveCapacity(order.count)
        for node in order {
            let literalStart = Int32(edges.count)
            for edge in node.literals {
                edges.append(TrieEdge(
                    prefix: edge.prefix,
                    keyOffset: Int32(keyBytes.count),
                    keyLength: Int32(edge.key.count),
                    child: edge.node.number
                ))
                keyBytes.append(contentsOf: edge.key)
            }
            let suffixStart = Int32(suffixEdges.count)
            for edge in node.suffixed {
                suffixEdges.append(TrieEdge(prefix: 0, keyOffset: Int32(keyBytes.count), keyLength: Int32(edge.key.count),
                                            child: edge.node.number))
                keyBytes.append(contentsOf: edge.key)
            }
            var terminal: Int32 = -1
            if node.mask != 0 {
                terminal = Int32(masks.count)
                masks.append(node.mask)
                terminalRouteList.append(contentsOf: node.routes)
                firsts.append(node.routes.filter { $0 >= 0 }.min() ?? -1)
            }
            nodes.append(TrieNode(
                literalStart: literalStart,
                literalCount: Int32(node.literals.count),
                suffixStart: suffixStart,
                suffixCount: Int32(node.suffixed.count),
                variableChild: node.variable?.number ?? -1,
                terminal: terminal
            ))
        }
        self.nodes = Self.freeze(nodes)
        self.edges = Self.freeze(edges)
        self.suffixEdges = Self.freeze(suffixEdges)
        self.keyBytes = Self.freeze(keyBytes)
        self.terminalMasks = Self.freeze(masks)
        self.terminalRoutes = Self.freeze(terminalRouteList)
        self.terminalFirstRoute = Self.freeze(firsts)
    }

    deinit {
        nodes.deallocate()
        edges.deallocate()
        suffixEdges.deallocate()
        keyBytes.deallocate()
        terminalMasks.deallocate()
        terminalRoutes.deallocate()
        terminalFirstRoute.deallocate()
    }

    /// A heap copy of `array` (at least one element long, so the pointer is never nil).
    private static func freeze<Element>(_ array: [Element]) -> UnsafeMutableBufferPointer<Element> {
        let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: max(array.count, 1))
        _ = buffer.initialize(from: array)
        return UnsafeMutableBufferPointer(rebasing: buffer[0..<array.count])
    }

    /// The first eight bytes of a segment packed into a word, zero-padded
    /// (little-endian order, so the first byte is the low byte).
    @inline(__always)
    static func prefixWord(_ bytes: UnsafePointer<UInt8>, _ length: Int) -> UInt64 {
        if length >= 8 { return loadWord(bytes) }
        var word: UInt64 = 0
        var index = 0
        while index < length {
            word |= UInt64(bytes[index]) &<< UInt64(8 &* index)
            index += 1
        }
        return word
    }
}

/// A mutable trie node used only while building.
private final class BuildNode {
    final class Edge {
        let key: [UInt8]
        let prefix: UInt64
        let node: BuildNode

        init(key: [UInt8], node: BuildNode) {
            self.key = key
            self.prefix = key.withUnsafeBufferPointer { buffer in
                buffer.baseAddress.map { RouteTrieStorage.prefixWord($0, buffer.count) } ?? 0
            }
            self.node = node
        }
    }

    var literals: [Edge] = []
    var literalIndex: [[UInt8]: Int] = [:]
    var suffixed: [Edge] = []
    var variable: BuildNode?
    var routes = [Int32](repeating: -1, count: RouteTrieStorage.methodCount)
    var mask: UInt8 = 0
    var number: Int32 = 0

    func literalChild(_ key: [UInt8]) -> BuildNode {
        if let index = literalIndex[key] { return literals[index].node }
        let child = BuildNode()
        literalIndex[key] = literals.count
        literals.append(Edge(key: key, node: child))
        return child
    }

    func suffixChild(_ suffix: [UInt8]) -> BuildNode {
        if let edge = suffixed.first(where: { $0.key == suffix }) { return edge.node }
        let child = BuildNode()
        suffixed.append(Edge(key: suffix, node: child))
        return child
    }

    func variableChild() -> BuildNode {
        if let variable { return variable }
        let child = BuildNode()
        variable = child
        return child
    }

    func add(route: Int32, method: HTTPMethod) {
        guard routes[method.index] < 0 else { return }
        routes[method.index] = route
        mask |= method.bit
    }
}
