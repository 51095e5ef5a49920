import Foundation
import Replica
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// A failed write leaves a PostgreSQL replica as it was: an error the server raises in the
/// middle of the merge (a full disk, raised by a trigger as PostgreSQL raises it: SQLSTATE
/// 53100) and a connection dropped in the middle of a COPY both roll the whole sync back, and the
/// replica goes on with its next sync.
@Suite("PostgreSQL write faults: a failed write leaves the tables as they were")
struct PostgresWriteFaultTests {
    enum Path: String, CaseIterable, Sendable {
        case importBody = "an import of one body"
        case session = "a three-page session"
        case staleDeletion = "a session deleting stale rows"
        case tombstones = "tombstones"
    }

    static func people(_ ids: ClosedRange<Int>, name: String) -> Data {
        peopleJSON(ids.map { ($0, "\(name) \($0)", $0 % 4) })
    }

    /// Every row of the people table and of the client's records, as PostgreSQL prints them.
    static func content(_ cluster: PostgresCluster, _ url: String) throws -> String {
        try cluster.psql(url, "SELECT (SELECT string_agg(p::text, '|' ORDER BY p.id) FROM people p) || ' / ' "
                         + "|| coalesce((SELECT string_agg(c::text, '|' ORDER BY c.url) FROM replica_http_cache c), '')")
    }

    func run(_ path: Path, on replica: PostgresReplica) async throws {
        switch path {
        case .importBody:
            _ = try await replica.sync(.get, "/people", body: Self.people(1...400, name: "new"))
        case .session:
            let session = try replica.session(.get, "/people")
            for page in 0..<3 {
                _ = try await session.stage(body: Self.people(page * 150 + 1...(page + 1) * 150, name: "page \(page)"),
                                            source: "GET /people?page=\(page + 1)")
            }
            _ = try await session.commit()
        case .staleDeletion:
            let session = try replica.session(.get, "/people")
            _ = try await session.stage(body: Self.people(1...10, name: "seed"), source: "GET /people")
            _ = try await session.commit()
        case .tombstones:
            var job = WriteJob(source: "tombstones")
            job.tombstones = [Tombstones(entity: try replica.entityIndex("Person"), scope: nil,
                                         keys: PrimaryKeys((1...250).map { .integer(Int64($0)) }))]
            _ = try await replica.transact(job)
        }
    }

    @Test("the server's error in the middle of the merge (disk full) rolls the sync back whole", arguments: Path.allCases)
    func serverErrorMidMerge(path: Path) async throws {
        let cluster = try await PostgresCluster.start()
        let url = try await cluster.makeDatabase()
        let replica = try await PostgresReplica.open(url: url, schema: TestStore.schema())
        try await withTeardown {
            _ = try await replica.sync(.get, "/people", body: Self.people(1...300, name: "seed"))
            var records = WriteJob(source: "seed records")
            records.records = [("https://api.example.com/people?page=1", ClientCache.Entry(etag: "\"v1\"", keys: PrimaryKeys([.integer(1)])))]
            _ = try await replica.transact(records)
            let before = try Self.content(cluster, url)
            // Person 150 is the last row the merge writes or deletes before the "disk" fills.
            _ = try cluster.psql(url, """
                CREATE FUNCTION replica_test_full_disk() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF (TG_OP = 'DELETE' AND OLD.id = 150) OR (TG_OP <> 'DELETE' AND NEW.id = 150) THEN
                    RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full';
                  END IF;
                  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
                END $$;
                CREATE TRIGGER replica_test_full_disk BEFORE INSERT OR UPDATE OR DELETE ON people
                  FOR EACH ROW EXECUTE FUNCTION replica_test_full_disk();
                """)
            let error = await #expect(throws: SyncError.self) { try await run(path, on: replica) }
            #expect(error?.code == .database, "\(error.map { "\($0)" } ?? "")")
            #expect(error?.description.contains("No space left on device") == true, "\(error.map { "\($0)" } ?? "")")
            #expect(try Self.content(cluster, url) == before)
            _ = try cluster.psql(url, "DROP TRIGGER replica_test_full_disk ON people")
            try await run(path, on: replica)
            #expect(try Self.content(cluster, url) != before)
        } teardown: {
            await replica.close()
        }
    }

    @Test("a connection dropped in the middle of a COPY rolls the sync back; the next sync reconnects")
    func droppedConnectionMidCopy() async throws {
        let cluster = try await PostgresCluster.start()
        let url = try await cluster.makeDatabase()
        let replica = try await PostgresReplica.open(url: url, schema: TestStore.schema())
        try await withTeardown {
            _ = try await replica.sync(.get, "/people", body: Self.people(1...300, name: "seed"))
            let before = try Self.content(cluster, url)
            // The body arrives in two halves (the first one more than the 1 MiB of COPY text that starts
            // a COPY); the server drops the writer's connection between them.
            let body = Array(Self.people(1...200_000, name: "copied"))
            let half = body.count / 2
            let (chunks, continuation) = AsyncStream<[UInt8]>.makeStream()
            continuation.yield(Array(body[..<half]))
            let syncing = Task { try await replica.sync(.get, "/people", chunks: chunks) }
            let inDatabase = "datname = current_database() AND pid <> pg_backend_pid()"
            try await waitUntil("the sync's COPY under way", timeout: .seconds(60)) {
                (try? cluster.psql(url, "SELECT count(*) FROM pg_stat_activity WHERE \(inDatabase) AND query LIKE 'COPY%'"))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "1"
            }
            _ = try cluster.psql(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE \(inDatabase) AND query LIKE 'COPY%'")
            continuation.yield(Array(body[half...]))
            continuation.finish()
            let error = await #expect(throws: SyncError.self) { _ = try await syncing.value }
            #expect(error?.code == .database, "\(error.map { "\($0)" } ?? "")")
            #expect(try Self.content(cluster, url) == before)
            let next = try await replica.sync(.get, "/people", body: Self.people(1...5, name: "after"))
            #expect(next.changes["Person"]?.updated.integers == [1, 2, 3, 4, 5])
        } teardown: {
            await replica.close()
        }
    }
}
