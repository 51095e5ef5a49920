import CoreMetrics
import Foundation
import ReplicaCore

/// What one ``ReplicaClient/push(concurrency:)`` did with the outbox's pending mutations.
///
/// ```swift
/// let pushed = try await client.push()
/// print(pushed)   // 3 confirmed, 1 rejected, 2 still pending
/// ```
public struct PushResult: Sendable, Hashable, CustomStringConvertible {
    /// Confirmed by the API: they left the outbox, the API's reply merged into their rows.
    public var confirmed: [Mutation] = []
    /// Refused by the API: listed in the outbox as rejected, their changes taken back.
    public var rejected: [Mutation] = []
    /// Still pending: their attempt failed without an answer that decides them (no connection, a
    /// 5xx, a 408 or 429 past the client's retries), or an earlier mutation of the same row did.
    public var pending: [Mutation] = []
    /// The outbox once the push was done.
    public var outbox = OutboxStatus()
    /// The numbers of the mutations among ``pending`` whose own attempt failed (the others waited
    /// behind one of them).
    public var failed: [Int64] = []
    /// Whether nothing was sent because another process sharing the store was sending its
    /// outbox (a service beside this one on the same PostgreSQL database or SQLite file).
    public var sentElsewhere = false

    public init() {}

    public var description: String {
        if sentElsewhere { return "another process is sending the outbox" }
        return "\(confirmed.count) confirmed, \(rejected.count) rejected, \(pending.count) still pending"
    }
}

extension ReplicaClient {
    /// Sends the outbox's pending mutations to the API: each row's in commit order, independent
    /// rows `concurrency` at a time, each request with the mutation's `Idempotency-Key`. A row
    /// whose foreign key names a row created under a temporary key goes after that create is
    /// confirmed, with the API's key (and stays pending, unsent, when the create was refused).
    ///
    /// Processes sharing the store send one at a time: while another one sends (a service beside
    /// this one on the same PostgreSQL database, holding its session advisory lock, or on the
    /// same SQLite file, holding its `flock`), nothing is sent and the result says so
    /// (``PushResult/sentElsewhere``). The hold dies with its process.
    ///
    /// A create is a `POST` to the entity's collection (its `POST` route, else its index route);
    /// an update a `PATCH` of the changed attributes where the schema routes `PATCH` for the
    /// object, else a `PUT`; a delete a `DELETE`, all by the entity's show route. The client's
    /// interceptors apply: with a ``RetryInterceptor``, connection failures, 429s and 503s are
    /// retried with backoff and `Retry-After` (a request with an `Idempotency-Key` is safe to
    /// send again, `POST` included).
    ///
    /// What the API answers decides each mutation, in one transaction with the rows it touches:
    /// - 2xx: confirmed. The reply (completed with the values sent, as ``save(_:_:files:)`` does)
    ///   is written and the mutation leaves the outbox. A create under a temporary key takes the
    ///   API's key: the foreign keys, links and pending mutations that named the temporary key
    ///   name the API's, and the temporary row goes. A `DELETE` answered 404 or 410 is confirmed
    ///   too: the object is gone. Answers that arrive while another confirmation commits are
    ///   confirmed together in the next transaction (a group commit, one page each).
    /// - 412 to the change's `If-Match` (``Mutation/precondition``: the ETag the API gave the row
    ///   when it last confirmed a change of it, if the row still reads so), or 409, for an update
    ///   or a delete: a conflict, which the entity's ``ConflictPolicy`` decides
    ///   (``ClientConfiguration/conflictPolicies``; the server wins by default). A 409 that
    ///   speaks of the idempotency key (the same key still being handled) counts as a failed attempt.
    /// - 400, 403, 404, 409, 412, 422 and the other 4xx but 408 and 429: rejected. The mutation
    ///   stays in the outbox as rejected, with the status and body, and its change is taken back:
    ///   a create's row goes, an update's or a delete's row is read again from the API.
    /// - anything else (no connection, a timeout, a 5xx, a 408 or 429): the mutation stays
    ///   pending with the attempt counted and the error kept, and the row's later mutations wait
    ///   for the next push.
    ///
    /// ```swift
    /// try await store.saveLocally("Person", ["name": .string("Ann")])   // offline
    /// let pushed = try await client.push()                               // online again
    /// pushed.confirmed.first?.key                                        // the temporary key; the row now has the API's
    /// ```
    ///
    /// - Parameter concurrency: How many rows' mutations are sent at once (at least 1).
    /// - Returns: What happened to each mutation that was pending.
    /// - Throws: ``SyncError`` when the store cannot be read or written; a mutation whose answer
    ///   could not be recorded stays pending, and the API's idempotency keys make sending it again safe.
    @discardableResult
    public func push(concurrency: Int = 4) async throws -> PushResult {
        // Nothing to send: no hold to take (nor, on SQLite, a lock file to create beside the database).
        if try await store.outbox(.pending).isEmpty {
            var nothing = PushResult()
            nothing.outbox = try await store.outboxStatus()
            record(nothing)
            return nothing
        }
        // One sender at a time among the processes sharing the store: each mutation is sent once,
        // in order per row.
        guard let result = try await store.backend.sendingOutbox({ try await self.pushHolding(concurrency: concurrency) }) else {
            var elsewhere = PushResult()
            elsewhere.sentElsewhere = true
            elsewhere.outbox = try await store.outboxStatus()
            return elsewhere
        }
        return result
    }

    /// ``push(concurrency:)``, while this process alone sends the outbox.
    private func pushHolding(concurrency: Int) async throws -> PushResult {
        var pending = try await store.outbox(.pending)
        // Creates are marked taken before one is sent: from then on a local delete of the row
        // queues a DELETE behind its create instead of taking the create back.
        if pending.contains(where: { $0.kind == .create && $0.sentAt == nil }) {
            try await store.takeCreatesForSending()
            pending = try await store.outbox(.pending)
        }
        // One chain per row, in commit order; chains are independent of each other.
        var chains: [[Mutation]] = []
        var chainOfRow: [String: Int] = [:]
        for mutation in pending {
            let row = mutation.entity + "\u{0}" + mutation.key.description
            if let index = chainOfRow[row] {
                chains[index].append(mutation)
            } else {
                chainOfRow[row] = chains.count
                chains.append([mutation])
            }
        }
        // A create queued since the mark waits for the next push (a local delete may still take it back).
        chains.removeAll { $0.first.map { $0.kind == .create && $0.sentAt == nil } ?? true }
        var waitsFor = try Self.dependencies(of: chains, store: store)
        // A new row that other rows name goes first, then those rows, then the row's later writes
        // (its delete after the rows that name it, as they were committed before it): each such
        // row's later writes become a chain of their own behind them.
        var headOfTail: [Int: Int] = [:]
        for index in chains.indices where chains[index].count > 1 && chains[index][0].kind == .create {
            let namedBy = waitsFor.indices.filter { waitsFor[$0].contains(index) }
            guard !namedBy.isEmpty else { continue }
            chains.append(Array(chains[index].dropFirst()))
            chains[index] = [chains[index][0]]
            waitsFor.append(Set(namedBy + [index]))
            headOfTail[chains.count - 1] = index
        }
        var result = PushResult()
        // The rows' confirmations, committed together as they come.
        let confirmations = PushConfirmations(store: store)
        try await withThrowingTaskGroup(of: (Int, PushResult).self) { group in
            // Whether each chain that ended made its row (its create was confirmed).
            var made: [Int: Bool] = [:]
            // The chains that ended on a failed attempt (their mutation still pending).
            var failedChains = Set<Int>()
            var started = Set<Int>()
            var running = 0
            // Every chain before this one has started.
            var unstarted = 0
            func startRunnable() {
                while unstarted < chains.count && started.contains(unstarted) { unstarted += 1 }
                var index = unstarted
                while index < chains.count && running < max(1, concurrency) {
                    defer { index += 1 }
                    guard !started.contains(index), waitsFor[index].allSatisfy({ made[$0] != nil }) else { continue }
                    started.insert(index)
                    let chain = chains[index]
                    if let head = headOfTail[index], failedChains.contains(head) {
                        // The row's create is still pending: its later writes wait behind it.
                        result.pending += chain
                        made[index] = true
                        index = unstarted - 1
                        continue
                    }
                    if headOfTail[index] == nil, let unmade = waitsFor[index].sorted().first(where: { made[$0] == false }),
                       let create = chains[unmade].first {
                        // A row it names was not made: sent now, it would carry a key the API never gave.
                        result.pending += chain.map { mutation in
                            var held = mutation
                            held.lastError = "not sent: it names \(create.entity) \(create.key), whose create #\(create.id) the API has not confirmed"
                            return held
                        }
                        made[index] = false
                        index = unstarted - 1   // what waited for this one may go on now (held too)
                        continue
                    }
                    running += 1
                    let rereads = !waitsFor[index].isEmpty
                    let chainIndex = index
                    group.addTask { (chainIndex, try await self.push(chain: chain, rereadingFirst: rereads, confirmations: confirmations)) }
                }
                // Rows that name each other's temporary keys cannot wait for each other: the first goes.
                if running == 0, let stuck = chains.indices.first(where: { !started.contains($0) }) {
                    started.insert(stuck)
                    running += 1
                    let chain = chains[stuck]
                    group.addTask { (stuck, try await self.push(chain: chain, rereadingFirst: true, confirmations: confirmations)) }
                }
            }
            startRunnable()
            while let (index, done) = try await group.next() {
                running -= 1
                if !done.failed.isEmpty { failedChains.insert(index) }
                result.confirmed += done.confirmed
                result.rejected += done.rejected
                result.pending += done.pending
                result.failed += done.failed
                made[index] = chains[index].first.map { first in first.kind != .create || done.confirmed.contains { $0.id == first.id } } ?? true
                startRunnable()
            }
        }
        result.outbox = try await store.outboxStatus()
        record(result)
        return result
    }

    /// The push's metrics (``ReplicaMetrics``): each mutation's outcome, and the outbox after it.
    private func record(_ result: PushResult) {
        let factory = configuration.metricsFactory
        let failed = Set(result.failed)
        for (outcome, mutations) in [("confirmed", result.confirmed), ("rejected", result.rejected),
                                     ("failed", result.pending.filter { failed.contains($0.id) })] {
            var byEntity: [String: Int] = [:]
            for mutation in mutations { byEntity[mutation.entity, default: 0] += 1 }
            for (entity, count) in byEntity {
                Counter(label: ReplicaMetrics.outboxMutations, dimensions: [("entity", entity), ("outcome", outcome)], factory: factory)
                    .increment(by: count)
            }
        }
        let status = result.outbox
        Gauge(label: ReplicaMetrics.outboxPending, factory: factory).record(status.pending)
        Gauge(label: ReplicaMetrics.outboxRejected, factory: factory).record(status.rejected)
        let age = status.oldestPendingAge.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 } ?? 0
        Gauge(label: ReplicaMetrics.outboxOldestPending, factory: factory).record(age)
    }

    /// For each chain, the chains it waits for: those whose create makes a row (under a key the API
    /// has not given yet) that one of its mutations names in a foreign key. A `Car` saved with
    /// `personID` -1 goes once `Person` -1 is confirmed, and then with the API's key, which the
    /// confirmation wrote into its changes.
    static func dependencies(of chains: [[Mutation]], store: any ReplicaStore) throws -> [Set<Int>] {
        var createdBy: [String: Int] = [:]
        for (index, chain) in chains.enumerated() {
            guard let first = chain.first, first.kind == .create else { continue }
            createdBy[first.entity + "\u{0}" + first.key.description] = index
        }
        var waitsFor = [Set<Int>](repeating: [], count: chains.count)
        guard !createdBy.isEmpty else { return waitsFor }
        for (index, chain) in chains.enumerated() {
            for mutation in chain where mutation.kind != .delete {
                let entity = try store.requireEntity(mutation.entity)
                for relationship in entity.relationships where relationship.kind == .toOne {
                    guard let column = relationship.foreignKey, let value = mutation.changes[column], !value.isNull,
                          let other = createdBy[relationship.destination + "\u{0}" + value.description], other != index else { continue }
                    waitsFor[index].insert(other)
                }
            }
        }
        return waitsFor
    }

    /// Sends one row's mutations in order; stops at the first that stays pending. With
    /// `rereadingFirst`, the first is read again from the outbox too (a row it names may have
    /// taken the API's key since the push began).
    private func push(chain: [Mutation], rereadingFirst: Bool = false, confirmations: PushConfirmations) async throws -> PushResult {
        var result = PushResult()
        for (index, listed) in chain.enumerated() {
            // As the outbox holds it now: the confirmation of the one before may have given the row
            // the API's key and moved the row's precondition to the ETag the API answered.
            var mutation = listed
            if index > 0 || rereadingFirst {
                guard let current = try await store.mutation(listed.id), current.state == .pending else { continue }
                mutation = current
            }
            switch try await send(mutation, confirmations: confirmations) {
            case .confirmed:
                result.confirmed.append(mutation)
            case .rejected(let rejection):
                mutation.state = .rejected
                mutation.rejection = rejection
                mutation.attempts += 1
                result.rejected.append(mutation)
            case .failed(let error):
                mutation.attempts += 1
                mutation.lastError = error
                result.pending.append(mutation)
                result.failed.append(mutation.id)
                result.pending += chain[(index + 1)...]
                return result
            }
        }
        return result
    }

    /// How the API decided one mutation.
    private enum Sent {
        /// Confirmed; the row's key now (the API's, for a create under a temporary key).
        case confirmed(AttributeValue?)
        case rejected(Mutation.Rejection)
        case failed(String)
    }

    /// Sends one mutation and records the answer; `depth` counts the conflicts it met on the way.
    private func send(_ mutation: Mutation, confirmations: PushConfirmations, depth: Int = 0) async throws -> Sent {
        let entity = try store.requireEntity(mutation.entity)
        let map = try store.mapping.requireMap(entity.name)
        let wrapped = entity.namespace != nil
        let body = map.encode(mutation.changes, wrapped: wrapped, timeZone: configuration.timeZone)
        let params = Dictionary(uniqueKeysWithValues: body.members.map { ($0.key, Parameter.value($0.value)) })
        let method: HTTPMethod
        let path: String
        switch mutation.kind {
        case .create:
            method = .post
            path = try createRoute(entity).pattern.description
        case .update:
            path = try objectPath(entity, key: mutation.key).path
            let routePath = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
            method = store.routes.match(.patch, routePath) != nil ? .patch : .put
        case .delete:
            method = .delete
            path = try objectPath(entity, key: mutation.key).path
        }
        let source = "\(method) \(path) (mutation #\(mutation.id))"
        let prepared: Prepared
        let request: ClientRequest
        let response: ClientResponse
        let bytes: [UInt8]
        do {
            prepared = try await prepare(path, method: method, params: mutation.kind == .delete ? [:] : params)
            var headers = HeaderFields()
            headers["Idempotency-Key"] = mutation.idempotencyKey
            if mutation.kind != .create, let precondition = mutation.precondition { headers["If-Match"] = precondition }
            request = try await self.request(for: prepared, headers: headers)
            (response, bytes) = try await sendCollecting(request)
        } catch let error as ClientError {
            guard let status = error.status else { return try await failed(mutation, error.description, source: source) }
            if mutation.kind == .delete && (status == 404 || status == 410) {
                _ = try await store.record(confirming(mutation), source: source)
                return .confirmed(mutation.key)
            }
            if status == 409 && error.bodyText.lowercased().contains("idempotenc") {
                // The same key still being handled (a copy sent by a process killed under way):
                // not an answer about the mutation; it is asked again later.
                return try await failed(mutation, error.description, source: source)
            }
            if (status == 412 || status == 409) && mutation.kind != .create && depth < 3 {
                return try await conflict(mutation, status: status, body: error.bodyText, entity: entity, source: source,
                                          confirmations: confirmations, depth: depth)
            }
            guard Self.decides(status) else { return try await failed(mutation, error.description, source: source) }
            let rejection = Mutation.Rejection(status: status, body: error.bodyText)
            try await reject(mutation, rejection, entity: entity, source: source)
            return .rejected(rejection)
        } catch let error as SyncError {
            throw error
        } catch {
            return try await failed(mutation, String(describing: error), source: source)
        }
        if mutation.kind == .delete {
            _ = try await store.record(confirming(mutation), deleting: (try entityIndex(entity), mutation.key), source: source)
            return .confirmed(mutation.key)
        }
        // The reply's object (inside the namespace when it has one), completed with the values sent.
        let sent = wrapped ? body.members.first?.value.objectValue ?? JSONObject() : body
        var merged = JSONObject()
        var rewrap = false
        switch try Self.json(of: bytes, response: response, request: request) {
        case .object(let object)?:
            (merged, rewrap) = Self.unwrapped(object, of: entity)
        default:
            // No object back (204, or not one object): what was sent stands.
            rewrap = wrapped
        }
        for (key, value) in sent where merged[key] == nil { merged[key] = value }
        var work = confirming(mutation)
        var key = mutation.key
        if mutation.kind == .create, !entity.hasCompositeKey, mutation.changes[entity.primaryKey] == nil {
            // A temporary key: the row takes the API's.
            if let id = merged[entity.jsonIDKey].map(AttributeValue.init(keyPart:)), !id.isNull {
                key = id
                work.rekeyed = [(try entityIndex(entity), mutation.key, id)]
            }
        } else if let own = entity.key(from: { mutation.changes[$0] }), entity.hasCompositeKey || merged[entity.jsonIDKey] == nil {
            // The key the mutation gave, in the reply too, so the merged object names its row.
            for (name, part) in zip(entity.primaryKeyNames, entity.hasCompositeKey ? own.compositeKeyParts ?? [] : [own]) {
                guard let mapping = map.attributes.first(where: { $0.name == name }), let jsonKey = mapping.jsonPath.last,
                      merged[jsonKey] == nil else { continue }
                merged[jsonKey] = part.jsonValue
            }
        }
        // The API's version of the row, for the If-Match of its next change: its ETag, else the
        // version attribute the entity declares, as the reply gives it.
        if let etag = try response.headers["ETag"] ?? versionTag(in: merged, of: entity) {
            work.versions = [(try entityIndex(entity), key, etag)]
        }
        let object: JSONValue = rewrap ? .object([entity.namespace ?? "": .object(merged)]) : .object(merged)
        let routePath = prepared.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? prepared.path
        try await confirmations.commit(.init(method: prepared.syncMethod, routePath: routePath, body: Data(object.serializedBytes()),
                                             source: source, work: work))
        return .confirmed(key)
    }

    /// The `If-Match` value of the version an object of the API holds in the entity's
    /// ``Entity/versionAttribute`` (`"3"`), or `nil` when the entity declares none or the object
    /// has none.
    func versionTag(in object: JSONObject, of entity: Entity) throws -> String? {
        guard let name = entity.versionAttribute,
              let path = try store.mapping.requireMap(entity.name).attributes.first(where: { $0.name == name })?.jsonPath,
              let version = Self.value(at: path, in: object) else { return nil }
        return Mutation.versionTag(AttributeValue(keyPart: version))
    }

    /// The value at a JSON key path (`["meta", "version"]`) of an object, or `nil`.
    static func value(at path: [String], in object: JSONObject) -> JSONValue? {
        guard let first = path.first, let value = object[first] else { return nil }
        guard path.count > 1 else { return value }
        guard case .object(let inner) = value else { return nil }
        return Self.value(at: Array(path.dropFirst()), in: inner)
    }

    /// Whether an error status decides a mutation (it is refused): a 4xx but 408 and 429.
    static func decides(_ status: Int) -> Bool {
        (400...499).contains(status) && status != 408 && status != 429
    }

    /// The route a create is sent to: the entity's own `POST` route, else its index route, else
    /// its singleton route.
    func createRoute(_ entity: Entity) throws -> RouteTable.Entry {
        let create = store.routes.entries.first {
            $0.route.method == .post && $0.entity?.name == entity.name && $0.scopeAttributes.isEmpty
        }
        return try create ?? (try? indexRoute(entity)) ?? singletonRoute(entity) ?? indexRoute(entity)
    }

    private func entityIndex(_ entity: Entity) throws -> Int {
        guard let index = store.mapping.maps.firstIndex(where: { $0.entity.name == entity.name }) else {
            throw SyncError(.unknownEntity, "unknown entity '\(entity.name)'")
        }
        return index
    }

    private func confirming(_ mutation: Mutation) -> OutboxWork {
        var work = OutboxWork()
        work.confirmed = [mutation.id]
        return work
    }

    /// Counts a failed attempt; the mutation stays pending.
    private func failed(_ mutation: Mutation, _ error: String, source: String) async throws -> Sent {
        var work = OutboxWork()
        work.failedAttempts = [(mutation.id, error)]
        _ = try await store.record(work, source: source)
        return .failed(error)
    }

    /// Records a rejection and takes the mutation's change back: a create's row goes; an update's
    /// or a delete's row is read again from the API (and goes when the API no longer has it).
    private func reject(_ mutation: Mutation, _ rejection: Mutation.Rejection, entity: Entity, source: String) async throws {
        var work = OutboxWork()
        work.rejected = [(mutation.id, rejection)]
        let index = try entityIndex(entity)
        if mutation.kind == .create {
            _ = try await store.record(work, deleting: (index, mutation.key), source: source)
            return
        }
        // The API's row as it is now, written with the rejection.
        switch try await serverRow(entity, key: mutation.key) {
        case .found(let row):
            try await write(row, of: entity, key: mutation.key, with: work)
        case .gone:
            _ = try await store.record(work, deleting: (index, mutation.key), source: source)
        case .unreadable:
            // The rejection stands; the row waits for the next sync.
            _ = try await store.record(work, source: source)
        }
    }

    /// One object as the API has it now: its show route's answer and ETag.
    struct ServerRow {
        var path: String
        var bytes: [UInt8]
        var etag: String?
    }

    /// What a `GET` of one object found.
    enum Fetched {
        case found(ServerRow)
        /// The API answered 404 or 410.
        case gone
        /// It could not be read (no connection, another status).
        case unreadable(any Error)
    }

    /// `GET`s the row `key` of `entity` from the API.
    ///
    /// - Throws: ``SyncError`` only (the store's); the API's failures are ``Fetched/unreadable(_:)``.
    private func serverRow(_ entity: Entity, key: AttributeValue) async throws -> Fetched {
        do {
            let path = try objectPath(entity, key: key).path
            let prepared = try await prepare(path, method: .get, params: [:])
            let request = try await self.request(for: prepared, headers: HeaderFields())
            let (response, bytes) = try await sendCollecting(request)
            var etag = response.headers["ETag"]
            if etag == nil, entity.versionAttribute != nil, case .object(let object)? = try? JSONValue(parsing: bytes) {
                etag = try versionTag(in: Self.unwrapped(object, of: entity).object, of: entity)
            }
            return .found(ServerRow(path: prepared.path, bytes: bytes, etag: etag))
        } catch let error as ClientError where error.status == 404 || error.status == 410 {
            return .gone
        } catch let error as SyncError {
            throw error
        } catch {
            return .unreadable(error)
        }
    }

    /// Writes the API's row through its show route, with `work` (and its ETag) in the same transaction.
    private func write(_ row: ServerRow, of entity: Entity, key: AttributeValue, with work: OutboxWork) async throws {
        var work = work
        if let etag = row.etag { work.versions.append((try entityIndex(entity), key, etag)) }
        let routePath = row.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? row.path
        let session = try store.session(.get, routePath, options: SyncOptions())
        defer { session.discard() }
        _ = try await session.stage(body: Data(row.bytes), source: "GET \(row.path)")
        _ = try await session.commit(complete: false, records: [], outbox: work)
    }

    /// A change the API refused because the row changed there (412, 409): the entity's
    /// ``ConflictPolicy`` decides, on the API's row as it is now.
    private func conflict(_ mutation: Mutation, status: Int, body: String, entity: Entity, source: String,
                          confirmations: PushConfirmations, depth: Int) async throws -> Sent {
        let rejection = Mutation.Rejection(status: status, body: body)
        let row: ServerRow
        switch try await serverRow(entity, key: mutation.key) {
        case .found(let found):
            row = found
        case .unreadable(let error):
            return try await failed(mutation, "HTTP \(status), and the API's row could not be read: \(error)", source: source)
        case .gone:
            // The API no longer has the row: a delete reached its goal; a change has nothing to change.
            if mutation.kind == .delete {
                _ = try await store.record(confirming(mutation), source: source)
                return .confirmed(mutation.key)
            }
            try await reject(mutation, rejection, entity: entity, source: source)
            return .rejected(rejection)
        }
        var resolution: ConflictResolution
        switch configuration.conflictPolicies[entity.name] ?? .serverWins {
        case .serverWins: resolution = .serverWins
        case .clientWins: resolution = .clientWins
        case .mergeFields: resolution = .send(mutation.changes)
        case .resolve(let decide):
            let map = try store.mapping.requireMap(entity.name)
            var server: [String: AttributeValue]?
            if case .object(let object)? = try? JSONValue(parsing: row.bytes) {
                let inner = entity.namespace.flatMap { object[$0]?.objectValue } ?? object
                if let mapped = try? map.map(inner, at: JSONPointer()) {
                    server = Dictionary(uniqueKeysWithValues: zip(mapped.attributeNames, mapped.values).compactMap { name, value in
                        value.map { (name, $0) }
                    })
                }
            }
            resolution = try await decide(Conflict(mutation: mutation, status: status, body: body, server: server))
        }
        var work = OutboxWork()
        var resent = mutation
        switch resolution {
        case .serverWins:
            work.rejected = [(mutation.id, rejection)]
            try await write(row, of: entity, key: mutation.key, with: work)
            return .rejected(rejection)
        case .clientWins:
            // Over whatever the API has: no precondition, under a new key (a new request).
            work.reissued = [(mutation.id, nil, nil)]
            _ = try await store.record(work, source: source)
            resent.precondition = nil
        case .send(let changes):
            // On the API's row as it is now: its ETag, its values under the change's.
            work.reissued = [(mutation.id, row.etag, changes)]
            try await write(row, of: entity, key: mutation.key, with: work)
            resent.precondition = row.etag
            resent.changes = changes
        }
        guard let reissued = try await store.outbox(.pending, entity: entity.name).first(where: { $0.id == mutation.id }) else {
            return .failed("mutation #\(mutation.id) left the outbox while its conflict was resolved")
        }
        resent.idempotencyKey = reissued.idempotencyKey
        return try await send(resent, confirmations: confirmations, depth: depth + 1)
    }
}
