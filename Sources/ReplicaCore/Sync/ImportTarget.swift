import Foundation

/// What an import writes into: an entity (optionally inside a scope) or the route of a path.
public enum ImportTarget: Sendable, Hashable {
    /// A top-level array (or one object) of this entity; `scope` fills attributes objects lack
    /// and bounds stale-row deletion.
    case entity(String, scope: [String: AttributeValue] = [:])
    /// The response of this path, read as its route says (envelope, namespace, DATA, MANY).
    case route(HTTPMethod, String)
}
