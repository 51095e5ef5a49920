// swift-tools-version:6.1
import PackageDescription

/// Settings shared by every target, as Hummingbird does.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Replica",
    platforms: [.macOS(.v14)],
    products: [
        // The pipeline, the SQLite store and the client together (`import Replica`), as most programs want them.
        .library(name: "Replica", targets: ["Replica"]),
        // The pipeline alone: JSON, schemas, routes, property maps, sync planning, change sets,
        // observation and the store protocol; no database, no HTTP.
        .library(name: "ReplicaCore", targets: ["ReplicaCore"]),
        // The client: syncing any store with a REST API through a Transport; ReplicaService.
        .library(name: "ReplicaClientKit", targets: ["ReplicaClientKit"]),
        // The embedded SQLite store (GRDB).
        .library(name: "ReplicaSQLite", targets: ["ReplicaSQLite"]),
        // The HTTP transport over AsyncHTTPClient.
        .library(name: "ReplicaHTTP", targets: ["ReplicaHTTP"]),
        // The embedded mock REST server (Hummingbird), its in-memory and SQLite stores.
        .library(name: "ReplicaServer", targets: ["ReplicaServer"]),
        // The mock server's PostgreSQL store.
        .library(name: "ReplicaServerPostgres", targets: ["ReplicaServerPostgres"]),
        // The PostgreSQL store (postgres-nio), shared by a fleet of services.
        .library(name: "ReplicaPostgres", targets: ["ReplicaPostgres"]),
        // Schemas from OpenAPI documents (OpenAPIKit, Yams).
        .library(name: "ReplicaOpenAPI", targets: ["ReplicaOpenAPI"]),
        .executable(name: "replica", targets: ["replica"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // TLS to PostgreSQL: postgres-nio takes an NIOSSLContext built from a TLSConfiguration.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // No traits: OpenAPIKit's default ExternalLoading trait (loading external references) is slow to build and unused.
        .package(url: "https://github.com/mattpolzin/OpenAPIKit.git", from: "6.4.0", traits: []),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-otel/swift-w3c-trace-context.git", from: "1.0.0"),
    ],
    targets: [
        // The pipeline: no database driver, no HTTP, no server, no ArgumentParser.
        .target(
            name: "ReplicaCore",
            dependencies: [
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // The client: requests through a Transport, pagination, retries and rate limits, the
        // client's records, ReplicaService; over the store protocol, knowing no store.
        .target(
            name: "ReplicaClientKit",
            dependencies: [
                "ReplicaCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // The SQLite store: everything that speaks GRDB.
        .target(
            name: "ReplicaSQLite",
            dependencies: [
                "ReplicaCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        // The umbrella: `import Replica` re-exports the pipeline, the SQLite store and the client.
        .target(
            name: "Replica",
            dependencies: ["ReplicaCore", "ReplicaSQLite", "ReplicaClientKit"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ReplicaHTTP",
            dependencies: [
                "ReplicaCore",
                "ReplicaClientKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // The mock server and its in-memory and SQLite stores; no PostgreSQL (see ReplicaServerPostgres).
        .target(
            name: "ReplicaServer",
            dependencies: [
                "ReplicaCore",
                // Its SQLite store reads rows as the SQLite replica does.
                "ReplicaSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ReplicaPostgres",
            dependencies: [
                "ReplicaCore",
                // `openReplicaStore(url:)` opens a file URL as an SQLite replica.
                "ReplicaSQLite",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The mock server's PostgreSQL store (`replica serve --store postgres://…`).
        .target(
            name: "ReplicaServerPostgres",
            dependencies: [
                "ReplicaServer",
                "ReplicaPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // OpenAPI 3.0/3.1 documents (JSON or YAML) imported as schemas.
        .target(
            name: "ReplicaOpenAPI",
            dependencies: [
                "ReplicaCore",
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                .product(name: "OpenAPIKit30", package: "OpenAPIKit"),
                .product(name: "OpenAPIKitCompat", package: "OpenAPIKit"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "replica",
            dependencies: [
                "Replica",
                "ReplicaHTTP",
                "ReplicaOpenAPI",
                "ReplicaServer",
                "ReplicaServerPostgres",
                "ReplicaPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ReplicaExamples",
            dependencies: [
                "Replica",
                "ReplicaHTTP",
                "ReplicaServer",
                "ReplicaPostgres",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // What the test targets share, Foundation only: the package root, temporary directories,
        // waitUntil, awaited teardown, and the throwaway PostgreSQL cluster (one per test process).
        .target(
            name: "ReplicaTestSupport",
            path: "Tests/ReplicaTestSupport",
            swiftSettings: swiftSettings
        ),
        // A fault-injecting SQLite VFS (a full disk, one failing read, write or sync) for the
        // tests that a failed write leaves the store as it was.
        .target(
            name: "CSQLiteFaults",
            path: "Tests/CSQLiteFaults",
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        .testTarget(
            name: "ReplicaTests",
            dependencies: [
                "Replica",
                "ReplicaCore",
                "ReplicaSQLite",
                "ReplicaClientKit",
                "ReplicaTestSupport",
                "CSQLiteFaults",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReplicaOpenAPITests",
            dependencies: ["ReplicaOpenAPI", "Replica",
                "ReplicaCore",
                "ReplicaSQLite",
                "ReplicaClientKit", "ReplicaTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReplicaHTTPTests",
            dependencies: [
                "ReplicaTestSupport",
                "Replica",
                "ReplicaHTTP",
                "ReplicaOpenAPI",
                "ReplicaServer",
                "ReplicaServerPostgres",
                "replica",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "W3CTraceContext", package: "swift-w3c-trace-context"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReplicaServerTests",
            dependencies: [
                "ReplicaTestSupport",
                "Replica",
                "ReplicaServer",
                "ReplicaServerPostgres",
                "replica",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReplicaPostgresTests",
            dependencies: [
                "ReplicaTestSupport",
                "ReplicaPostgres",
                "Replica",
                "ReplicaCore",
                "ReplicaSQLite",
                "ReplicaClientKit",
                "ReplicaHTTP",
                "ReplicaServer",
                "replica",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReplicaCLITests",
            dependencies: [
                "ReplicaTestSupport",
                "replica",
                "Replica",
                "ReplicaCore",
                "ReplicaSQLite",
                "ReplicaClientKit",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReplicaExamplesTests",
            dependencies: [
                "ReplicaExamples",
                "ReplicaPostgres",
                "ReplicaTestSupport",
                "Replica",
                "ReplicaCore",
                "ReplicaSQLite",
                "ReplicaClientKit",
                "ReplicaHTTP",
                "ReplicaServer",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
