/// An HTTP request method that a route can be registered for.
///
/// ```swift
/// let method = HTTPMethod("patch")   // .patch (parsing ignores case)
/// print(HTTPMethod.get)              // GET
/// ```
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `GET`: read a resource or a collection.
    case get = "GET"
    /// `POST`: create a resource in a collection.
    case post = "POST"
    /// `PUT`: replace a resource.
    case put = "PUT"
    /// `PATCH`: update part of a resource.
    case patch = "PATCH"
    /// `DELETE`: remove a resource.
    case delete = "DELETE"
    /// `HEAD`: `GET` without the body.
    case head = "HEAD"
    /// `OPTIONS`: ask what the resource supports.
    case options = "OPTIONS"

    /// Parses a method name, ignoring ASCII case.
    ///
    /// ```swift
    /// HTTPMethod("Delete")   // .delete
    /// HTTPMethod("BREW")     // nil
    /// ```
    ///
    /// - Parameters:
    ///   - name: The method name as sent on the wire (`GET`, `get`, `Get`, …).
    /// - Returns: `nil` when the name is not one of the supported methods.
    public init?(_ name: some StringProtocol) {
        guard name.utf8.count <= 7, name.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        self.init(rawValue: String(name).uppercased())
    }

    /// The method's bit in a method set (`1 << index`), used by the route trie.
    var bit: UInt8 {
        switch self {
        case .get: 1 << 0
        case .post: 1 << 1
        case .put: 1 << 2
        case .patch: 1 << 3
        case .delete: 1 << 4
        case .head: 1 << 5
        case .options: 1 << 6
        }
    }

    /// The method's position in `allCases`, used by the route trie.
    var index: Int {
        switch self {
        case .get: 0
        case .post: 1
        case .put: 2
        case .patch: 3
        case .delete: 4
        case .head: 5
        case .options: 6
        }
    }

    /// The upper-case method name.
    public var description: String { rawValue }
}
