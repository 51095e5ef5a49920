import Foundation

/// Syncing JSON into any store: written once, run through the store's one transaction.
extension ReplicaStore {
    /// Syncs one response body through the route of `path`, in one transaction.
    ///
    /// ```swift
    /// let result = try await store.sync(.get, "/users/3/posts", body: Data(json.utf8))
    /// print(result.changes["Post"]?.inserted.count ?? 0)
    /// ```
    ///
    /// - Parameters:
    ///   - method: The request's method.
    ///   - path: The request's path; its route says what the body holds.
    ///   - body: The response body.
    ///   - options: Stale policy override, invalid-object policy, progress.
    /// - Returns: What changed; for DATA routes, the parsed JSON in ``SyncResult/data``.
    /// - Throws: ``SyncError``; the store is then exactly as before.
    public func sync(_ method: HTTPMethod = .get, _ path: String, body: Data,
                     options: SyncOptions = SyncOptions()) async throws -> SyncResult {
        let plan = try backend.frontEnd.resolve(.route(method, path), options: options)
        let chunkSize = max(1, options.chunkSize)
        var offset = 0
        return try await run(plan, source: "\(method) \(path)", totalBytes: Int64(body.count), options: options) {
            guard offset < body.count else { return nil }
            let end = min(body.count, offset + chunkSize)
            defer { offset = end }
            return [UInt8](body[body.startIndex + offset ..< body.startIndex + end])
        }
    }

    /// Syncs a response body that arrives as a sequence of byte chunks (an HTTP body), parsing as it streams.
    ///
    /// Rows are written as the body arrives, in one transaction. On SQLite, a body that pauses
    /// for longer than ``SyncOptions/streamingPatience`` (0.1 s) is rolled back and staged
    /// outside the store's writer instead, then merged in one short transaction at its end: a
    /// stalled response holds up other writers for that long at most. On PostgreSQL the rows
    /// stream into the connection's temporary tables, which lock nothing.
    ///
    /// ```swift
    /// let result = try await store.sync(.get, "/users", chunks: response.body)
    /// ```
    ///
    /// - Throws: ``SyncError``, or the sequence's own error; the store is then exactly as before.
    public func sync<Chunks: AsyncSequence & Sendable>(_ method: HTTPMethod = .get, _ path: String, chunks: Chunks,
                                                       options: SyncOptions = SyncOptions()) async throws -> SyncResult
    where Chunks.Element == [UInt8] {
        try await importChunks(chunks, into: .route(method, path), source: "\(method) \(path)", options: options)
    }

    /// Imports a JSON file (or standard input with path `-`) in bounded memory, in one transaction.
    ///
    /// A file named `.ndjson` or `.jsonl` is read as NDJSON (one value per line) unless
    /// ``SyncOptions/format`` says otherwise; see ``InputFormat``.
    ///
    /// ```swift
    /// let result = try await store.importFile("people.json", into: .entity("Person"))
    /// let events = try await store.importFile("events.ndjson", into: .entity("Event"))
    /// ```
    ///
    /// - Throws: ``SyncError`` naming the file; the store is then exactly as before.
    public func importFile(_ path: String, into target: ImportTarget,
                           options: SyncOptions = SyncOptions()) async throws -> SyncResult {
        let (file, plan, options) = try openInput(path, target: target, options: options)
        defer { file.close() }
        return try await run(plan, source: path, totalBytes: file.size, options: options, next: file.next)
    }

    /// The file (or standard input) an import or a dry run reads, what its target resolves to,
    /// and the options with the input's format decided (by the file name unless given).
    private func openInput(_ path: String, target: ImportTarget,
                           options: SyncOptions) throws -> (file: FileChunks, plan: SyncPlan, options: SyncOptions) {
        var options = options
        options.format = options.format ?? InputFormat(path: path)
        let file = try FileChunks(path: path, chunkSize: options.chunkSize)
        do {
            return (file, try backend.frontEnd.resolve(target, options: options), options)
        } catch {
            file.close()
            throw error
        }
    }

    /// Imports JSON from any async sequence of byte chunks (an HTTP body, a pipe), parsed and
    /// written as it arrives (see ``sync(_:_:chunks:options:)`` for what a pause does).
    /// With ``SyncOptions/format`` `.ndjson` it reads one value per line (``InputFormat/ndjson``).
    ///
    /// ```swift
    /// let result = try await store.importChunks(body, into: .entity("Person"), source: url.absoluteString)
    /// ```
    ///
    /// - Throws: ``SyncError``, or the sequence's own error; the store is then exactly as before.
    public func importChunks<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, into target: ImportTarget,
                                                               source: String = "input",
                                                               options: SyncOptions = SyncOptions()) async throws -> SyncResult
    where Chunks.Element == [UInt8] {
        let plan = try backend.frontEnd.resolve(target, options: options)
        let channel = ChunkChannel()
        let feeder = channel.feed(from: chunks)
        defer { feeder.cancel() }
        return try await withTaskCancellationHandler {
            try await importStreaming(plan, source: source, options: options, channel: channel)
        } onCancel: {
            channel.finish(throwing: CancellationError())
        }
    }

    /// Reads a JSON file (or standard input with path `-`) exactly as ``importFile(_:into:options:)``
    /// would — parses it, resolves the target, maps every object to its row — and writes nothing:
    /// no transaction is opened and the store is not touched.
    ///
    /// A dry run: it finds the errors an import would fail with (malformed JSON, an object that
    /// cannot be mapped under ``InvalidObjectPolicy/fail``, a key not stored under
    /// ``SyncOptions/strictKeys``) and counts what it would read.
    ///
    /// ```swift
    /// let result = try await store.validateFile("people.json", into: .route(.get, "/people"))
    /// print(result.objectCount, result.byteCount)   // the change set is empty
    /// ```
    ///
    /// - Returns: An empty change set, with the objects and bytes read, skipped objects and
    ///   ignored keys as an import would report them.
    /// - Throws: ``SyncError`` naming the file, as ``importFile(_:into:options:)`` would.
    public func validateFile(_ path: String, into target: ImportTarget,
                             options: SyncOptions = SyncOptions()) async throws -> SyncResult {
        let (file, plan, options) = try openInput(path, target: target, options: options)
        defer { file.close() }
        let names = mapping.maps.map(\.entity.name)
        return try await backend.frontEnd.parsing(plan, source: path, totalBytes: file.size, options: options,
                                                  next: file.next) { stream in
            if case .data = plan.shape { return try await SyncFrontEnd.awaitData(stream, route: plan.route) }
            let summary = try await stream.drain { _ in }
            var result = SyncResult(changes: ChangeSet(), skipped: summary.skipped, ignoredKeyCount: summary.ignoredKeyCount,
                                    objectCount: summary.objectCount, byteCount: summary.byteCount, data: nil,
                                    route: plan.route, metadata: summary.skeleton, seenKeys: PrimaryKeys(), scope: plan.scope)
            result.ignoredKeys = summary.ignoredKeys(entityNames: names)
            return result
        }
    }

    /// The completion-handler form of ``sync(_:_:body:options:)``, delivering on `queue`.
    ///
    /// ```swift
    /// store.sync(.get, "/users", body: data, queue: .main) { result in print(result) }
    /// ```
    public func sync(_ method: HTTPMethod = .get, _ path: String, body: Data, options: SyncOptions = SyncOptions(),
                     queue: DispatchQueue, completion: @escaping @Sendable (Result<SyncResult, any Error>) -> Void) {
        Task {
            let result: Result<SyncResult, any Error>
            do {
                result = .success(try await sync(method, path, body: body, options: options))
            } catch {
                result = .failure(error)
            }
            queue.async { completion(result) }
        }
    }

    /// Starts a sync session of `path`: pages staged one by one (a slow page holds no lock),
    /// then committed together in one transaction, or not at all.
    ///
    /// ```swift
    /// let session = try store.session(.get, "/people")
    /// _ = try await session.stage(body: firstPage)
    /// _ = try await session.stage(body: secondPage)
    /// let result = try await session.commit(complete: true)
    /// ```
    ///
    /// - Parameters:
    ///   - method: The request's method.
    ///   - path: The path; its route says what the pages hold.
    ///   - options: Options for every page.
    /// - Returns: An empty session.
    /// - Throws: ``SyncError`` when no route matches.
    public func session(_ method: HTTPMethod = .get, _ path: String, options: SyncOptions = SyncOptions()) throws -> SyncSession {
        try session(.route(method, path), source: "\(method) \(path)", options: options)
    }

    /// Starts a sync session writing into `target` (an entity, optionally scoped, or a route).
    ///
    /// ```swift
    /// let session = try store.session(.entity("Person"), source: "people feed")
    /// ```
    ///
    /// - Throws: ``SyncError`` when the target is unknown.
    public func session(_ target: ImportTarget, source: String = "input", options: SyncOptions = SyncOptions()) throws -> SyncSession {
        SyncSession(store: self, plan: try backend.frontEnd.resolve(target, options: options), options: options, source: source)
    }

    /// Deletes one row (after the API deleted its object) in one transaction, and publishes
    /// the change set (on PostgreSQL, under the table's advisory lock, announced to every process).
    ///
    /// ```swift
    /// try await store.delete("Post", key: .integer(7))
    /// try await store.delete("Ref", key: .compositeKey([.string("octocat"), .string("Hello-World"), .string("refs/heads/main")]))
    /// ```
    ///
    /// - Parameters:
    ///   - entity: The entity name.
    ///   - key: The row's primary key; for a composite key, ``AttributeValue/compositeKey(_:)`` of all its parts.
    /// - Returns: The committed change set (empty when no such row was stored).
    /// - Throws: ``SyncError`` (an unknown entity, `.invalidKey` for a key of the wrong shape, a
    ///   database error naming the store).
    @discardableResult
    public func delete(_ entity: String, key: AttributeValue) async throws -> ChangeSet {
        var job = WriteJob(source: "delete \(entity) \(key)")
        let index = try entityIndex(entity)
        if let problem = mapping.maps[index].entity.keyProblem(key) { throw SyncError(.invalidKey, problem) }
        job.deletedRow = (index, key)
        return try await transact(job).changes
    }

    /// Deletes rows of `entity` inside `scope` whose keys are not in `keeping`, in one
    /// transaction, and publishes the change set: how a collection spread over several pages
    /// drops its stale rows once the last page arrived.
    ///
    /// ```swift
    /// var seen = PrimaryKeys()
    /// for page in pages { seen.formUnion(try await store.sync(.get, page, body: data, options: keys).seenKeys) }
    /// try await store.deleteStale("Post", scope: scope, keeping: seen)
    /// ```
    ///
    /// - Returns: The committed change set (deleted keys).
    /// - Throws: ``SyncError``.
    @discardableResult
    public func deleteStale(_ entity: String, scope: RouteScope?, keeping: PrimaryKeys) async throws -> ChangeSet {
        var job = WriteJob(source: "delete stale \(entity)")
        job.stale = .fixed([StaleDeletion(entity: try entityIndex(entity), scope: scope, keeping: keeping,
                                          includesWritten: true, allWritten: false)])
        return try await transact(job).changes
    }
}
