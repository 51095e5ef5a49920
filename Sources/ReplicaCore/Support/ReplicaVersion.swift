/// The version of the Replica package, in one place: the client's default `User-Agent` is
/// `replica/` followed by it.
///
/// ```swift
/// print("replica \(ReplicaVersion.current)")   // replica 0.1.0
/// ```
public enum ReplicaVersion {
    /// The package's version (semantic versioning).
    public static let current = "0.1.0"
}
