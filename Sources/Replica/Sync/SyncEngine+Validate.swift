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
        let handle: FileHandle
        var total: Int64?
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            guard let opened = FileHandle(forReadingAtPath: path) else {
                throw SyncError(.input, "cannot open file", source: path)
            }
            handle = opened
            total = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
        }
        let plan = try resolve(target, options: options)
        let chunkSize = max(1, options.chunkSize)
        defer { if path != "-" { try? handle.close() } }
        let next: () throws -> [UInt8]? = {
            do {
                guard let data = try handle.read(upToCount: chunkSize), !data.isEmpty else { return nil }
                return [UInt8](data)
            } catch {
                throw SyncError(.input, "cannot read: \(error.localizedDescription)", source: path)
            }
        }
        let maps = mapping.maps
        return try await parsing(plan, source: path, totalBytes: total, options: options, next: next) { stream in
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
