import Foundation
import Replica

/// The demo's generated blog: users, their posts and the comments on them, reproducible from a seed.
/// Objects use the API's JSON keys (`user_id`, `created_at`), as the mock server serves them.
struct DemoData {
    var users: [JSONValue] = []
    var posts: [JSONValue] = []
    var comments: [JSONValue] = []
    /// The ids of the featured user's posts (the user the live view follows).
    var featuredPosts: [Int64] = []

    /// The user whose posts the live view shows; given more posts than the others.
    static let featuredUser: Int64 = 1
    /// Posts of the featured user.
    static let featuredPostCount = 18

    /// Generates `userCount` users with 0–8 posts each (the featured user gets
    /// ``featuredPostCount``) and 0–3 comments per post.
    init(userCount: Int, seed: UInt64) {
        var random = DemoRandom(seed: seed)
        let start = Date(timeIntervalSince1970: 1_790_000_000)   // 2026-09-21
        var postID: Int64 = 1
        var commentID: Int64 = 1
        for index in 1 ... max(1, userCount) {
            let id = Int64(index)
            let first = random.pick(Self.firstNames), last = random.pick(Self.lastNames)
            let friends = (0 ..< random.int(in: 0 ... 4)).map { _ in JSONValue.int(Int64(random.int(in: 1 ... max(1, userCount)))) }
            users.append(.object([
                "user_id": .int(id),
                "name": .string("\(first) \(last)"),
                "email": .string("\(first.lowercased()).\(last.lowercased())\(id)@example.com"),
                "avatar_sm": .string("https://avatars.example.com/\(id)/sm.png"),
                "friends": .array(friends),
                "created_at": .string(Self.timestamp(start.addingTimeInterval(-Double(random.int(in: 0 ... 3_000)) * 3_600))),
            ]))
            let postCount = id == Self.featuredUser ? Self.featuredPostCount : random.int(in: 0 ... 8)
            for _ in 0 ..< postCount {
                let post = Self.post(id: postID, userID: id, at: start.addingTimeInterval(-Double(random.int(in: 0 ... 60 * 24 * 60)) * 60),
                                     random: &random)
                posts.append(post)
                if id == Self.featuredUser { featuredPosts.append(postID) }
                for _ in 0 ..< random.int(in: 0 ... 3) {
                    comments.append(.object([
                        "id": .int(commentID),
                        "post_id": .int(postID),
                        "user_id": .int(Int64(random.int(in: 1 ... max(1, userCount)))),
                        "body": .string(random.pick(Self.remarks)),
                        "created_at": .string(Self.timestamp(start.addingTimeInterval(Double(random.int(in: 1 ... 600)) * 60))),
                    ]))
                    commentID += 1
                }
                postID += 1
            }
        }
    }

    /// The data as the mock server loads it: collections keyed by resource.
    var json: JSONValue { .object(["users": .array(users), "posts": .array(posts), "comments": .array(comments)]) }

    /// A post object (without `id` when `id` is nil, for creating one).
    static func post(id: Int64?, userID: Int64, at date: Date, random: inout DemoRandom) -> JSONValue {
        var object: JSONObject = [
            "user_id": .int(userID),
            "title": .string(title(&random)),
            "body": .string(random.pick(remarks)),
            "published": .bool(random.int(in: 0 ... 9) < 7),
            "tags": .array(distinctTags(count: random.int(in: 0 ... 2), random: &random).map(JSONValue.string)),
            "created_at": .string(timestamp(date)),
        ]
        if let id { object["id"] = .int(id) }
        return .object(object)
    }

    static func distinctTags(count: Int, random: inout DemoRandom) -> [String] {
        var chosen: [String] = []
        while chosen.count < min(count, tags.count) {
            let tag = random.pick(tags)
            if !chosen.contains(tag) { chosen.append(tag) }
        }
        return chosen
    }

    static func title(_ random: inout DemoRandom) -> String {
        "\(random.pick(openings)) \(random.pick(subjects)) \(random.pick(endings))"
    }

    /// `2026-09-21T13:46:40Z` (UTC, whole seconds).
    static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    static let firstNames = ["Ada", "Alan", "Grace", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Frances", "Edsger",
                             "Radia", "Donald", "Hedy", "John", "Karen", "Niklaus", "Sophie", "Tim", "Annie", "Bjarne"]
    static let lastNames = ["Lovelace", "Turing", "Hopper", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson", "Allen",
                            "Dijkstra", "Perlman", "Knuth", "Lamarr", "Backus", "Jones", "Wirth", "Wilson", "Lee", "Easley"]
    static let openings = ["Notes on", "Rethinking", "A field guide to", "Why I like", "Benchmarking", "Debugging",
                           "Ten years of", "The case for", "Living with", "Shipping"]
    static let subjects = ["SQLite", "streaming JSON", "live queries", "upserts", "Swift actors", "route tables",
                           "conditional GETs", "WAL mode", "diffing", "terminal UIs", "mock servers", "Dispatch queues"]
    static let endings = ["on Linux", "in production", "the hard way", "at scale", "for fun", "in one transaction",
                          "without tears", "done right"]
    static let remarks = ["Great write-up, thanks!", "This matches what we saw.", "Could you share the benchmark?",
                          "Tried it, works on Linux too.", "What about memory?", "Bookmarked.", "Nice diagrams.",
                          "We do the same with a cron job.", "Is there a follow-up?", "Short and clear."]
    static let tags = ["swift", "sqlite", "json", "linux", "performance", "testing", "api"]
}

/// The demo's generator: seeded, so the demo's data is the same on every run.
typealias DemoRandom = SeededRandom

extension SeededRandom {
    mutating func int(in range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0 ..< values.count, using: &self)] }
}
