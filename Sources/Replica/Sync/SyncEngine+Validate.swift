import Foundation

extension SyncEngine {
    /// Reads a JSON file (or standard input with path `-`) exactly as ``importFile(_:into:options:)``
    /// would — parses it, resolves the target, maps every object to its row — and writes nothing:
    /// no transaction is opened and the store is not touched.
    ///
    /// A dry run: it finds the errors an import would fail with (malformed JSON, an object that
    /// cannot be mapped under ``InvalidObjectPolicy/fail``, a key not stored under
    /// ``SyncOptions/strictKeys``) and counts what it would read. It also times the parse and
    /// map stage alone, without SQLite.
    ///
    /// ```swift
    /// let result = try await engine.validateFile("people.json", into: .route(.get, "/people"))
    /// print(result.objectCount, result.byteCount)   // the change set is empty
    /// ```
    ///
    /// - Parameters:
    ///   - path: The file, or `-` for standard input.
    ///   - target: What an import would write into.
    ///   - options: As for an import; the stale policy has no effect.
    /// - Returns: An empty change set, with the objects and bytes read, skipped objects and
    ///   ignored keys as an import would report them.
    /// - Throws: ``SyncError`` naming the file, as ``importFile(_:into:options:)`` would.
    public func validateFile(_ path: String, into target: ImportTarget,
                             options: SyncOptions = SyncOptions()) async throws -> SyncResult {
        let file = try FileChunks(path: path, chunkSize: options.chunkSize)
        defer { file.close() }
        let plan = try resolve(target, options: options)
        let maps = mapping.maps
        return try await parsing(plan, source: path, totalBytes: file.size, options: options, next: file.next) { stream in
            if case .data = plan.shape {
                return try await Self.awaitData(stream, route: plan.route)
            }
            let summary = try await stream.drain { _ in }
            var result = SyncResult(changes: ChangeSet(), skipped: summary.statistics.skipped,
                                    ignoredKeyCount: summary.statistics.ignoredKeyCount,
                                    objectCount: summary.statistics.objectCount, byteCount: summary.byteCount,
                                    data: nil, route: plan.route, metadata: summary.skeleton,
                                    seenKeys: PrimaryKeys(), scope: plan.scope)
            result.ignoredKeys = summary.statistics.ignored.keys(entityNames: maps.map(\.entity.name))
            return result
        }
    }
}
