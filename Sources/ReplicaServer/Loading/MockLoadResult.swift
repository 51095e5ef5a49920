/// What a data load stored and rejected, per resource.
///
/// ```swift
/// let result = try await server.load(json: data)
/// print(result.loaded, result.rejected) // 12 1
/// ```
public struct MockLoadResult: Sendable, Hashable, CustomStringConvertible {
    /// Objects stored, per resource name.
    public var loadedByResource: [String: Int] = [:]
    /// Objects rejected (not an object, no known property, a wrongly typed value), per resource name.
    public var rejectedByResource: [String: Int] = [:]
    /// Top-level keys that name no resource (their objects are counted as rejected under that key).
    public var unknownResources: [String] = []
    /// The first few rejections, as `resource[index]: reason`.
    public var rejections: [String] = []

    /// Objects stored in all.
    public var loaded: Int { loadedByResource.values.reduce(0, +) }
    /// Objects rejected in all.
    public var rejected: Int { rejectedByResource.values.reduce(0, +) }

    /// Adds another load's counts to these.
    mutating func add(_ other: MockLoadResult) {
        loadedByResource.merge(other.loadedByResource, uniquingKeysWith: +)
        rejectedByResource.merge(other.rejectedByResource, uniquingKeysWith: +)
        unknownResources += other.unknownResources.filter { !unknownResources.contains($0) }
        rejections += other.rejections.prefix(max(0, 20 - rejections.count))
    }

    public var description: String {
        "loaded \(loaded), rejected \(rejected)" + (unknownResources.isEmpty ? "" : " (unknown resources: \(unknownResources.joined(separator: ", ")))")
    }
}
