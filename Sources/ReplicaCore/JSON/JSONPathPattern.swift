import Foundation

/// Where in a document a ``JSONStreamParser`` looks for values to deliver.
///
/// A pattern is a path of components from the root. The value at a matching
/// path is delivered element by element when it is an array, or whole
/// otherwise. The empty pattern (``root``) matches the top-level value.
///
/// ```swift
/// let posts: JSONPathPattern = [.key("data"), .key("posts")]   // {"data": {"posts": [...]}}
/// let many: JSONPathPattern = [.anyKey]                        // {"users": [...], "posts": [...]}
/// let nested: JSONPathPattern = [.anyIndex, .anyKey]           // [{"User": [...], "Post": [...]}]
/// ```
public struct JSONPathPattern: Sendable, Hashable, ExpressibleByArrayLiteral, CustomStringConvertible {
    /// One step of a pattern.
    public enum Component: Sendable, Hashable {
        /// The object member with this key.
        case key(String)
        /// Any object member.
        case anyKey
        /// The array element at this index.
        case index(Int)
        /// Any array element.
        case anyIndex
    }

    /// The steps from the root.
    public var components: [Component]

    /// The pattern matching the top-level value.
    public static let root = JSONPathPattern([])

    /// A pattern with these steps.
    ///
    /// ```swift
    /// let pattern = JSONPathPattern([.key("data"), .anyKey])
    /// ```
    ///
    /// - Parameters:
    ///   - components: The steps from the root.
    public init(_ components: [Component]) { self.components = components }

    public init(arrayLiteral elements: Component...) { self.components = elements }

    /// A pointer-like text form: `/data/*` for `[.key("data"), .anyKey]`, `/*[]` for any index.
    public var description: String {
        if components.isEmpty { return "(root)" }
        return components.map { component -> String in
            switch component {
            case .key(let key): return "/" + key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
            case .anyKey: return "/*"
            case .index(let index): return "/\(index)"
            case .anyIndex: return "/*[]"
            }
        }.joined()
    }

    /// Whether step `level` accepts `component`.
    func accepts(_ component: JSONPointer.Component, at level: Int) -> Bool {
        guard level < components.count else { return false }
        switch (components[level], component) {
        case (.anyKey, .key), (.anyIndex, .index): return true
        case (.key(let expected), .key(let key)): return expected == key
        case (.index(let expected), .index(let index)): return expected == index
        default: return false
        }
    }
}

/// One place where a ``JSONStreamParser`` pattern matched.
///
/// ```swift
/// for match in parser.matches where match.isStreamedArray { print(match.pointer, match.elementCount) }
/// ```
public struct JSONStreamMatch: Sendable, Hashable {
    /// Where the matched value is.
    public var pointer: JSONPointer
    /// The index of the pattern that matched, in the parser's `patterns`.
    public var patternIndex: Int
    /// `true` when the value was an array whose elements were streamed; `false` when it was delivered whole.
    public var isStreamedArray: Bool
    /// Elements delivered so far (1 for a value delivered whole).
    public var elementCount: Int

    /// Makes a match record.
    ///
    /// ```swift
    /// let match = JSONStreamMatch(pointer: JSONPointer("/users")!, patternIndex: 0, isStreamedArray: true, elementCount: 2)
    /// ```
    ///
    /// - Parameters:
    ///   - pointer: Where the matched value is.
    ///   - patternIndex: Which pattern matched.
    ///   - isStreamedArray: Whether its elements were streamed.
    ///   - elementCount: How many elements were delivered.
    public init(pointer: JSONPointer, patternIndex: Int, isStreamedArray: Bool, elementCount: Int) {
        self.pointer = pointer
        self.patternIndex = patternIndex
        self.isStreamedArray = isStreamedArray
        self.elementCount = elementCount
    }
}
