/// `route-lookup`: lookups per second in a 200-route table (median of several runs, in process).
struct RouteLookupWorkload: Workload {
    let name = "route-lookup"
    let summary = "200-route table, ~1,000 realistic paths, lookups/s (median)"

    /// The lookup rate the project aims for.
    static let target = 5_000_000.0

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        let fixture = try RouteLookupFixture()
        let runs = context.runs ?? (context.quick ? 5 : 9)
        let iterations = context.quick ? 500 : 2_000
        _ = fixture.measure(iterations: iterations / 4)   // warm-up
        var rates: [Double] = []
        for _ in 0..<runs {
            rates.append(fixture.measure(iterations: iterations))
        }
        let rate = median(rates)
        context.log("route-lookup: \(rates.map { Report.formatNumber($0) }.joined(separator: ", ")) lookups/s")
        return [ResultRow(
            workload: name,
            unit: "lookups/s",
            replica: Cell(rate),
            targets: [Target(description: "≥ 5 M lookups/s", met: rate.map { $0 >= Self.target })],
            notes: ["route-lookup: \(fixture.trie.routes.count) routes, \(Report.formatCount(fixture.requests.count)) paths "
                    + "(\(fixture.hits) match), median of \(runs) runs × \(Report.formatCount(iterations)) passes over the paths."]
        )]
    }
}
