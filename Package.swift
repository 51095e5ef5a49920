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
        .library(name: "Replica", targets: ["Replica"]),
        .library(name: "ReplicaHTTP", targets: ["ReplicaHTTP"]),
        .library(name: "ReplicaServer", targets: ["ReplicaServer"]),
        .executable(name: "replica", targets: ["replica"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        .target(
            name: "Replica",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ReplicaHTTP",
            dependencies: ["Replica"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ReplicaServer",
            dependencies: ["Replica"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "replica",
            dependencies: [
                "Replica",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReplicaTests",
            dependencies: ["Replica"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReplicaCLITests",
            dependencies: [
                "replica",
                "Replica",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
