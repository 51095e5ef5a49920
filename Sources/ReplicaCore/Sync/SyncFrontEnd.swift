import Foundation

/// What every store's writer shares: the schema's routes and property maps, resolving what a
/// sync targets, and parsing a response on its own thread into planned row batches.
///
/// ``SQLiteReplica`` writes the batches through GRDB, `PostgresReplica` copies them into
/// PostgreSQL: every store reads JSON the same way.
package struct SyncFrontEnd: Sendable {
    package let routes: RouteTable
    package let mapping: SchemaMapping
    package let planner: RowPlanner

    /// - Throws: ``RouteError`` or ``MappingError`` when the schema's routes or maps cannot be built.
    package init(schema: Schema, transforms: TransformRegistry = TransformRegistry()) throws {
        self.routes = try RouteTable(schema: schema)
        self.mapping = try SchemaMapping(schema: schema, transforms: transforms)
        self.planner = RowPlanner(mapping: mapping)
    }

    /// The keys of skipped objects by entity index: they count as seen.
    package func skippedKeys(_ summary: ReaderSummary) -> [Int: PrimaryKeys] {
        summary.statistics.skippedKeys(planner: planner)
    }
}

/// What a sync resolved to before reading any byte.
package struct SyncPlan: Sendable {
    package var shape: ResponseShape
    package var scope: RouteScope?
    package var route: Route?
    /// Entities whose stale rows a complete collection deletes.
    package var staleEntities: Set<Int>
    package var targetEntity: Int?
    package var collectKeys = false
    /// ``SyncOptions/busyTimeout``: how long the write waits for another writer's lock.
    package var busyTimeout: Double?
}

extension SyncFrontEnd {
    /// What `target` means under `options`, before any byte is read.
    ///
    /// - Throws: ``SyncError`` (`.noRoute`, `.unknownEntity`).
    package func resolve(_ target: ImportTarget, options: SyncOptions) throws -> SyncPlan {
        var plan = try resolveTarget(target, options: options)
        if options.format == .ndjson, let route = plan.route, plan.targetEntity == nil {
            throw SyncError(.unexpectedShape, "NDJSON holds one object per line, but the route \(route.method) \(route.path) "
                            + "targets \(route.target): import NDJSON into an entity, or through a route that targets one")
        }
        if options.format == .ndjson, case .typed = plan.shape, let route = plan.route {
            throw SyncError(.unexpectedShape, "NDJSON holds one object per line, but the route \(route.method) \(route.path) "
                            + "routes objects by their '\(route.discriminator?.key ?? "type")': import NDJSON into one entity")
        }
        plan.collectKeys = options.collectKeys
        plan.busyTimeout = options.busyTimeout
        return plan
    }

    private func resolveTarget(_ target: ImportTarget, options: SyncOptions) throws -> SyncPlan {
        switch target {
        case .entity(let name, let values):
            guard let index = planner.index(of: name) else {
                throw SyncError(.unknownEntity, "unknown entity '\(name)' (the schema has "
                                + mapping.maps.map(\.entity.name).joined(separator: ", ") + ")")
            }
            let entity = mapping.maps[index].entity
            var conditions: [RouteScope.Condition] = []
            for (attribute, value) in values.sorted(by: { $0.key < $1.key }) {
                guard entity.attribute(named: attribute) != nil else {
                    throw SyncError(.unknownEntity, "entity '\(entity.name)' has no attribute '\(attribute)' to scope by")
                }
                conditions.append(RouteScope.Condition(attribute: attribute, value: value))
            }
            let scope = RouteScope(entity: entity.name, conditions: conditions,
                                   isSingleObject: entity.primaryKeyNames.allSatisfy { part in conditions.contains { $0.attribute == part } })
            let stale = (options.stalePolicy ?? .keep) == .delete && !scope.isSingleObject
            return SyncPlan(shape: .entity(index, patterns: [.root]), scope: scope, route: nil,
                            staleEntities: stale ? [index] : [], targetEntity: index)
        case .route(let method, let path):
            let resolution: RouteResolution
            do {
                resolution = try routes.resolve(method, path)
            } catch {
                throw SyncError(.noRoute, error.message, source: "\(method) \(path)", underlying: error)
            }
            let entry = resolution.entry
            let stale = (options.stalePolicy ?? entry.route.stalePolicy) == .delete
            switch entry.route.target {
            case .data:
                return SyncPlan(shape: .data(envelope: entry.envelope), scope: nil, route: entry.route,
                                staleEntities: [], targetEntity: nil)
            case .many:
                return SyncPlan(shape: .many(envelope: entry.envelope), scope: nil, route: entry.route,
                                staleEntities: stale ? Set(mapping.maps.indices) : [], targetEntity: nil)
            case .entity(let name):
                guard let index = planner.index(of: name) else {
                    throw SyncError(.unknownEntity, "route \(entry.pattern) targets unknown entity '\(name)'")
                }
                let prefix = entry.envelope.map { JSONPathPattern.Component.key($0) }
                let namespaces = mapping.maps[index].namespaceKeys
                var patterns: [JSONPathPattern] = []
                for key in [namespaces.collection, namespaces.object].compactMap({ $0 }) {
                    let pattern = JSONPathPattern(prefix + [.key(key)])
                    if !patterns.contains(pattern) { patterns.append(pattern) }
                }
                if patterns.isEmpty { patterns = [JSONPathPattern(prefix)] }
                let deletesStale = stale && !resolution.scope.isSingleObject
                if deletesStale {
                    // A route the schema lets delete is scoped by then; a stale policy given for one sync is checked here.
                    let unscoped = RouteTable.unscopedVariables(of: entry.pattern, in: mapping.maps[index].entity,
                                                                convention: routes.schema.keyConvention)
                    if !unscoped.isEmpty {
                        throw SyncError(.noRoute, RouteTable.unscopedMessage(route: "route \(entry.route.method) \(entry.pattern)",
                                                                             entity: mapping.maps[index].entity, variables: unscoped)
                                        + "; or keep stale rows for this sync", source: "\(method) \(path)")
                    }
                }
                if let discriminator = entry.route.discriminator {
                    let typed = try typedShape(discriminator, target: index, route: entry.route, envelope: entry.envelope)
                    return SyncPlan(shape: .typed(typed), scope: resolution.scope, route: entry.route,
                                    staleEntities: deletesStale ? [index] : [], targetEntity: index)
                }
                return SyncPlan(shape: .entity(index, patterns: patterns), scope: resolution.scope, route: entry.route,
                                staleEntities: deletesStale ? [index] : [], targetEntity: index)
            }
        }
    }
}

extension SyncFrontEnd {
    /// Where a discriminated route's objects are, and the entity index of each type.
    ///
    /// - Throws: ``SyncError`` (`.unknownEntity`) for a type naming no entity of the schema.
    func typedShape(_ discriminator: Discriminator, target: Int, route: Route, envelope: [String]) throws -> TypedShape {
        var entities: [String: Int] = [:]
        for (type, name) in discriminator.entities {
            guard let index = planner.index(of: name) else {
                throw SyncError(.unknownEntity, "route \(route.method) \(route.path) routes type '\(type)' to unknown entity '\(name)'")
            }
            entities[type] = index
        }
        // JSON:API's collection is `data`, unless the route names another envelope.
        let collection = discriminator.layout == .jsonAPI && route.envelope == nil ? ["data"] : envelope
        return TypedShape(target: target, key: discriminator.key, layout: discriminator.layout, entities: entities,
                          collection: JSONPathPattern(collection.map { .key($0) }),
                          included: discriminator.included.map { JSONPathPattern(pointer: $0) })
    }
}

extension JSONPathPattern {
    /// The pattern matching exactly the place `pointer` names.
    init(pointer: JSONPointer) {
        self.init(pointer.components.map { component in
            switch component {
            case .key(let key): return .key(key)
            case .index(let index): return .index(index)
            }
        })
    }
}

extension SyncFrontEnd {
    /// Parses one response on its own thread while `consume` takes its batches, and returns
    /// only once that thread has ended, whatever happened: no parsing thread outlives a call
    /// (or reads a file handle the caller closes afterwards). `observe` sees each batch on the
    /// parsing thread, before `consume` does.
    ///
    /// - Throws: ``SyncError`` (`.cancelled` when the task was cancelled), or what the input or
    ///   `consume` threw (the write driver maps a store's errors before they get here).
    package func parsing<T: Sendable>(_ plan: SyncPlan, source: String, totalBytes: Int64?, options: SyncOptions,
                              channel: ChunkChannel? = nil, priorClaims: [ClaimKey: ChildClaimRecord] = [:],
                              next: @escaping () throws -> [UInt8]?,
                              observe: (@Sendable (RowBatch) -> Void)? = nil,
                              consume: @escaping @Sendable (ParsedStream) async throws -> T) async throws -> T {
        let stream = ParsedStream()
        let manyRoutes = routes.entries.filter { $0.route.target == .many }.map { "\($0.route.method) \($0.pattern)" }
        let reader = ResponseReader(planner: planner, shape: plan.shape, scope: plan.scope, options: options, source: source,
                                    manyRoutes: manyRoutes, priorClaims: priorClaims)
        let nextChunk = UncheckedBox(next)
        let ended = stream.ended
        let output = ReaderOutput(queue: stream.queue, parsed: stream.parsed, observe: observe)
        let thread = Thread {
            do {
                try reader.run(next: nextChunk.value, totalBytes: totalBytes, queue: output, pool: stream.pool,
                               cancellation: stream.cancellation)
            } catch {
                stream.failure.withLock { if $0 == nil { $0 = error } }
            }
            stream.queue.finish()
            ended.signal()
        }
        thread.name = "Replica.parser"
        thread.stackSize = 4 << 20
        thread.start()
        let abort: @Sendable () -> Void = {
            stream.cancellation.set()
            stream.queue.finish()
            channel?.finish(throwing: CancellationError())
        }
        do {
            let result = try await withTaskCancellationHandler {
                try await consume(stream)
            } onCancel: {
                abort()
            }
            await ended.wait()
            return result
        } catch {
            // Cancelled from outside (the task), not by the abort below that every failure makes:
            // a database error (a lock held too long) is never reported as a cancellation.
            let cancelled = Task.isCancelled || error is CancellationError
            abort()
            await ended.wait()
            if error is StreamStalled { throw error }
            if cancelled, !(error is SyncError) || (error as? SyncError)?.code == .cancelled {
                throw SyncError(.cancelled, "cancelled; nothing was written", source: source)
            }
            throw error
        }
    }

    package static func awaitData(_ stream: ParsedStream, route: Route?) async throws -> SyncResult {
        let summary = try await stream.drain { _ in }
        return SyncResult(changes: ChangeSet(), skipped: [], ignoredKeyCount: 0, objectCount: 0,
                          byteCount: summary.byteCount, data: summary.skeleton, route: route,
                          metadata: nil, seenKeys: PrimaryKeys(), scope: nil)
    }

}
