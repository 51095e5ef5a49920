import Foundation

/// An RFC 6901 JSON pointer: the location of a value inside a JSON document.
///
/// Errors use it to say *where* a bad value is.
///
/// ```swift
/// let pointer = JSONPointer.root / "entities" / "User" / "attributes" / 0
/// print(pointer)   // /entities/User/attributes/0
/// ```
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible, ExpressibleByArrayLiteral {
    /// One step of a pointer: an object member or an array index.
    public enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    /// The steps from the document root.
    public var components: [Component]

    /// The pointer to the whole document (`""`).
    public static let root = JSONPointer(components: [])

    public init(components: [Component]) { self.components = components }

    public init(arrayLiteral elements: Component...) { self.components = elements }

    /// Parses the RFC 6901 text form (`/a/b~1c/0`). Numeric tokens become indexes.
    public init?(_ text: String) {
        if text.isEmpty { self.components = []; return }
        guard text.hasPrefix("/") else { return nil }
        var result: [Component] = []
        for token in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            if let index = Int(key), index >= 0, String(index) == key {
                result.append(.index(index))
            } else {
                result.append(.key(key))
            }
        }
        self.components = result
    }

    /// This pointer extended by one member key.
    public static func / (lhs: JSONPointer, rhs: String) -> JSONPointer {
        JSONPointer(components: lhs.components + [.key(rhs)])
    }

    /// This pointer extended by one array index.
    public static func / (lhs: JSONPointer, rhs: Int) -> JSONPointer {
        JSONPointer(components: lhs.components + [.index(rhs)])
    }

    /// The RFC 6901 text form; `""` for the root.
    public var description: String {
        var text = ""
        for component in components {
            text += "/"
            switch component {
            case .key(let key):
                text += key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
            case .index(let index):
                text += String(index)
            }
        }
        return text
    }
}

extension JSONValue {
    /// The value at `pointer`, or `nil` when the path does not exist.
    ///
    /// ```swift
    /// value[pointer: JSONPointer("/users/0/name")!]
    /// ```
    public subscript(pointer pointer: JSONPointer) -> JSONValue? {
        var current = self
        for component in pointer.components {
            switch component {
            case .key(let key):
                guard let next = current[key] else { return nil }
                current = next
            case .index(let index):
                if let next = current[index] {
                    current = next
                } else if let next = current[String(index)] {
                    current = next
                } else {
                    return nil
                }
            }
        }
        return current
    }
}
