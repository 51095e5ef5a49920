import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// The write driver's one decision about stale rows, without a store: which entities a job
/// deletes from, inside which scope, keeping which keys.
@Suite("Write jobs: stale deletions")
struct WriteJobTests {
    let blog: BlogFixture

    init() throws {
        blog = try BlogFixture()
    }

    func plan(_ path: String, options: SyncOptions = SyncOptions()) throws -> SyncPlan {
        try blog.engine.frontEnd.resolve(.route(.get, path), options: options)
    }

    func summary(complete: Set<Int>, skipped: [SkippedObject] = []) -> ReaderSummary {
        var summary = ReaderSummary()
        summary.completeCollections = complete
        summary.statistics.skipped = skipped
        return summary
    }

    /// A job writing `GET /users/3/posts`, whose complete collection deletes stale posts; its plan and the posts' entity index.
    func postsJob() throws -> (WriteJob, SyncPlan, Int) {
        let plan = try plan("/users/3/posts")
        var job = WriteJob(source: "GET /users/3/posts")
        job.stale = .completeCollections(plan)
        return (job, plan, try #require(plan.targetEntity))
    }

    @Test("a complete collection of a scoped route deletes inside its scope, keeping skipped objects' keys")
    func completeCollection() throws {
        let (job, plan, post) = try postsJob()
        let skipped = SkippedObject(entity: "Post", pointer: .root, reason: "no title", key: .integer(7))
        let (deletions, skippedKeys) = job.deletions(after: summary(complete: [post], skipped: [skipped]), frontEnd: blog.engine.frontEnd)
        #expect(deletions.map(\.entity) == [post])
        #expect(deletions.first?.scope == plan.scope)
        #expect(deletions.first?.keeping.integers == [7])
        #expect(deletions.first?.includesWritten == false)
        #expect(deletions.first?.allWritten == false)
        #expect(skippedKeys[post]?.integers == [7])
    }

    @Test("without skipped objects every kept key is a written row; an incomplete collection deletes nothing")
    func nothingSkipped() throws {
        let (job, _, post) = try postsJob()
        let (deletions, _) = job.deletions(after: summary(complete: [post]), frontEnd: blog.engine.frontEnd)
        #expect(deletions.map(\.allWritten) == [true])
        #expect(deletions.first?.keepingBeyondWritten.isEmpty == true)
        #expect(job.deletions(after: summary(complete: []), frontEnd: blog.engine.frontEnd).deletions.isEmpty)
        #expect(job.deletions(after: nil, frontEnd: blog.engine.frontEnd).deletions.isEmpty)
    }

    @Test("a route that keeps stale rows deletes nothing, however complete its collection")
    func keepPolicy() throws {
        let plan = try plan("/users/3/posts", options: SyncOptions(stalePolicy: .keep))
        var job = WriteJob(source: "GET /users/3/posts")
        job.stale = .completeCollections(plan)
        let post = try #require(plan.targetEntity)
        #expect(job.deletions(after: summary(complete: [post]), frontEnd: blog.engine.frontEnd).deletions.isEmpty)
    }

    @Test("fixed deletions (a session's, an explicit one) are taken as they are; no stale rule deletes nothing")
    func fixed() {
        let deletion = StaleDeletion(entity: 1, scope: nil, keeping: PrimaryKeys([.integer(1), .integer(2)]),
                                     includesWritten: true, allWritten: false)
        var job = WriteJob(source: "session")
        job.stale = .fixed([deletion])
        #expect(job.deletions(after: nil, frontEnd: blog.engine.frontEnd).deletions.map(\.keeping) == [deletion.keeping])
        job.stale = .none
        #expect(job.deletions(after: summary(complete: [0, 1]), frontEnd: blog.engine.frontEnd).deletions.isEmpty)
    }

    @Test("the keys a store keeps: its written rows plus the kept keys, or the kept keys alone when they include the written ones")
    func keysToKeep() {
        let written = PrimaryKeys([.integer(1), .integer(2)])
        let extra = StaleDeletion(entity: 0, scope: nil, keeping: PrimaryKeys([.integer(9)]), includesWritten: false, allWritten: false)
        #expect(extra.keysToKeep(written: written).integers == [1, 2, 9])
        #expect(extra.keepingBeyondWritten.integers == [9])
        let seen = StaleDeletion(entity: 0, scope: nil, keeping: PrimaryKeys([.integer(1), .integer(2), .integer(5)]),
                                 includesWritten: true, allWritten: false)
        var askedForWritten = false
        let kept = seen.keysToKeep(written: { askedForWritten = true; return written }())
        #expect(kept.integers == [1, 2, 5])
        #expect(!askedForWritten, "a session's seen keys already include what it wrote")
        let staged = StaleDeletion(entity: 0, scope: nil, keeping: written, includesWritten: true, allWritten: true)
        #expect(staged.keepingBeyondWritten.isEmpty)
    }
}
