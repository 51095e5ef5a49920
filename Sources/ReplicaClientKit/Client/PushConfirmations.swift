import Foundation
import ReplicaCore

/// The confirmations of one push, committed in groups (a group commit): while one transaction
/// commits, the confirmations that arrive wait, and the next transaction writes all of them, one
/// session per route. Rows are sent concurrently, so with `concurrency` rows in flight a push
/// commits about one transaction per round of answers rather than one per mutation.
///
/// Each confirmation's caller waits until its own transaction committed (a row's next mutation is
/// sent only then). A group whose transaction fails is written again one confirmation at a time,
/// so that each gets its own outcome and one bad answer holds no other back.
actor PushConfirmations {
    /// One confirmed mutation's answer, as the API's row to write, with its outbox work.
    struct Confirmation: Sendable {
        /// The method and route path the answer is synced through.
        var method: HTTPMethod
        var routePath: String
        /// The API's object, as JSON.
        var body: Data
        /// The request, for errors.
        var source: String
        /// The mutation leaving the outbox, its new key and its version.
        var work: OutboxWork
    }

    private struct Waiting {
        var confirmation: Confirmation
        var continuation: CheckedContinuation<Void, any Error>
    }

    private let store: any ReplicaStore
    private var waiting: [Waiting] = []
    private var isCommitting = false

    init(store: any ReplicaStore) {
        self.store = store
    }

    /// Writes `confirmation` in the next transaction and returns once that committed.
    ///
    /// - Throws: ``SyncError`` when the answer could not be written (the mutation stays pending).
    func commit(_ confirmation: Confirmation) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            waiting.append(Waiting(confirmation: confirmation, continuation: continuation))
            guard !isCommitting else { return }
            isCommitting = true
            Task { await self.drain() }
        }
    }

    /// Commits what waits, group after group, until nothing does.
    private func drain() async {
        while !waiting.isEmpty {
            let batch = waiting
            waiting = []
            // One session (one transaction) per route, in the order the routes first came.
            var order: [String] = []
            var groups: [String: [Waiting]] = [:]
            for item in batch {
                let route = "\(item.confirmation.method) \(item.confirmation.routePath)"
                if groups[route] == nil { order.append(route) }
                groups[route, default: []].append(item)
            }
            for route in order {
                let group = groups[route] ?? []
                do {
                    try await write(group.map(\.confirmation))
                    for item in group { item.continuation.resume() }
                } catch {
                    guard group.count > 1 else {
                        group.first?.continuation.resume(throwing: error)
                        continue
                    }
                    for item in group {
                        do {
                            try await write([item.confirmation])
                            item.continuation.resume()
                        } catch {
                            item.continuation.resume(throwing: error)
                        }
                    }
                }
            }
        }
        isCommitting = false
    }

    /// Writes the answers of one route in one session: each a page, the outbox work of all.
    private func write(_ confirmations: [Confirmation]) async throws {
        guard let first = confirmations.first else { return }
        var work = OutboxWork()
        for confirmation in confirmations { work.absorb(confirmation.work) }
        let session = try store.session(first.method, first.routePath, options: SyncOptions(collectKeys: true))
        defer { session.discard() }
        for confirmation in confirmations {
            _ = try await session.stage(body: confirmation.body, source: confirmation.source)
        }
        _ = try await session.commit(complete: false, records: [], outbox: work)
    }
}
