// swift-tools-version:6.1
// Replica's benchmarks: a package of its own, so the root package's build and
// `swift test` stay fast. It depends on the root package by path, as
// swift-nio's benchmarks do.
//
//     swift run -c release --package-path Benchmarks replica-bench [--quick] [--only NAME] [--json]
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "ReplicaBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Replica", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        // sync-pages' static upstream.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        // The sync workloads time a call's phases (page exchange, parse, merge) from its spans.
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    ],
    targets: [
        // The C floor: the same upserts through SQLite's C API, values already in memory.
        .target(
            name: "CFloor",
            cSettings: [.unsafeFlags(["-O2"])],
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        .executableTarget(
            name: "replica-bench",
            dependencies: [
                "CFloor",
                .product(name: "Replica", package: "Replica"),
                .product(name: "ReplicaServer", package: "Replica"),
                .product(name: "ReplicaHTTP", package: "Replica"),
                .product(name: "ReplicaPostgres", package: "Replica"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
