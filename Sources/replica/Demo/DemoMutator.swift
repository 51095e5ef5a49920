import Foundation
import Replica

/// Another user of the API: keeps changing the featured user's posts on the server over HTTP, as a
/// real client would, so that the local replica only learns of it by syncing.
actor DemoMutator {
    /// What the mutator did so far.
    struct Tally: Sendable {
        var created = 0
        var retitled = 0
        var republished = 0
        var redated = 0
        var deleted = 0
        var failed = 0
        var total: Int { created + retitled + republished + redated + deleted }

        var summary: String {
            "\(total) server changes (\(created) created, \(retitled) retitled, \(republished) published or unpublished, "
                + "\(redated) redated, \(deleted) deleted\(failed > 0 ? ", \(failed) failed" : ""))"
        }
    }

    private let transport: any Transport
    private let baseURL: URL
    private var posts: [Int64]
    private var random: DemoRandom
    private(set) var tally = Tally()

    init(transport: any Transport, baseURL: URL, posts: [Int64], seed: UInt64) {
        self.transport = transport
        self.baseURL = baseURL
        self.posts = posts
        self.random = DemoRandom(seed: seed ^ 0x00DE_3000)
    }

    /// Makes one change every `interval` until cancelled.
    func run(every interval: Duration) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
            await changeOnce()
        }
    }

    /// One random change: create, retitle, publish/unpublish, move in time, or delete a post
    /// (never fewer than 8 posts, never more than 40).
    func changeOnce() async {
        let roll = random.int(in: 0 ... 99)
        do {
            if posts.count < 8 || (roll < 25 && posts.count < 40) {
                let post = DemoData.post(id: nil, userID: DemoData.featuredUser, at: Date(), random: &random)
                let created = try await send(.post, "/users/\(DemoData.featuredUser)/posts", body: post)
                if case .int(let id)? = created?["post"]?["id"] ?? created?["id"] { posts.append(id) }
                tally.created += 1
            } else if roll < 50 {
                try await send(.patch, "/posts/\(random.pick(posts))", body: ["title": .string(DemoData.title(&random))])
                tally.retitled += 1
            } else if roll < 75 {
                try await send(.patch, "/posts/\(random.pick(posts))", body: ["published": .bool(random.int(in: 0 ... 1) == 1)])
                tally.republished += 1
            } else if roll < 88 || posts.count <= 8 {
                let date = Date().addingTimeInterval(-Double(random.int(in: 0 ... 60 * 24 * 60)) * 60)
                try await send(.patch, "/posts/\(random.pick(posts))", body: ["created_at": .string(DemoData.timestamp(date))])
                tally.redated += 1
            } else {
                let index = random.int(in: 0 ... posts.count - 1)
                try await send(.delete, "/posts/\(posts[index])", body: nil)
                posts.remove(at: index)
                tally.deleted += 1
            }
        } catch {
            // A change cut short by the end of the demo did not fail.
            if Task.isCancelled { return }
            tally.failed += 1
        }
    }

    /// Sends a request and returns the JSON it answered, if any.
    @discardableResult
    private func send(_ method: HTTPMethod, _ path: String, body: JSONValue?) async throws -> JSONValue? {
        var headers = HeaderFields()
        var requestBody = RequestBody.none
        if let body {
            headers.add("Content-Type", "application/json")
            requestBody = .bytes(Array(body.serialized().utf8))
        }
        let request = ClientRequest(method: method, url: baseURL.appendingPathComponent(String(path.dropFirst())),
                                    headers: headers, body: requestBody, timeout: .seconds(10))
        let response = try await transport.send(request)
        let bytes = try await response.body.collect(upTo: 1 << 20)
        guard (200 ..< 300).contains(response.status) else {
            throw CLIError("\(method) \(path): HTTP \(response.status)")
        }
        return bytes.isEmpty ? nil : try? JSONValue(parsing: bytes)
    }
}
