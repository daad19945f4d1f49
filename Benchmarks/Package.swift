// swift-tools-version:6.1
import PackageDescription

// Performance benchmarks of Shoal (ordo-one/benchmark). A package of its own so
// that the main package does not depend on the benchmark tooling.
//
//   cd Benchmarks && swift package benchmark
//
// See README.md for what each benchmark measures and the numbers on the
// reference machine.
let package = Package(
    name: "ShoalBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Shoal", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // Shared fixtures: the 1 KB body, temporary directories, the raw SQLite
        // baseline, a keep-alive HTTP/1.1 client.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "DocumentModel", package: "Shoal"),
                .product(name: "DocumentStore", package: "Shoal"),
                .product(name: "ShoalNode", package: "Shoal"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // Not a benchmark: loops over one write path for perf/callgrind and times its steps.
        .executableTarget(
            name: "ShoalProfile",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "DocumentModel", package: "Shoal"),
                .product(name: "DocumentStore", package: "Shoal"),
                .product(name: "ShoalNode", package: "Shoal"),
                .product(name: "Query", package: "Shoal"),
                .product(name: "Replication", package: "Shoal"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "StoreWrites",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "DocumentModel", package: "Shoal"),
                .product(name: "DocumentStore", package: "Shoal"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Benchmarks/StoreWrites",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "RevTreeOps",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "DocumentModel", package: "Shoal"),
                .product(name: "DocumentStore", package: "Shoal"),
            ],
            path: "Benchmarks/RevTreeOps",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "BulkDocsHTTP",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "DocumentModel", package: "Shoal"),
                .product(name: "DocumentStore", package: "Shoal"),
                .product(name: "ShoalNode", package: "Shoal"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/BulkDocsHTTP",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "SyncFunction",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "DocumentModel", package: "Shoal"),
                .product(name: "DocumentStore", package: "Shoal"),
                .product(name: "ShoalNode", package: "Shoal"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/SyncFunction",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ViewIndexing",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "DocumentModel", package: "Shoal"),
                .product(name: "DocumentStore", package: "Shoal"),
                .product(name: "Query", package: "Shoal"),
            ],
            path: "Benchmarks/ViewIndexing",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "BLIPCodec",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "BLIP", package: "Shoal"),
            ],
            path: "Benchmarks/BLIPCodec",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ReplicationPull",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "DocumentModel", package: "Shoal"),
                .product(name: "DocumentStore", package: "Shoal"),
                .product(name: "Replication", package: "Shoal"),
                .product(name: "ShoalNode", package: "Shoal"),
            ],
            path: "Benchmarks/ReplicationPull",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "NodeProcesses",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "DocumentStore", package: "Shoal"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/NodeProcesses",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "MeshLab",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/MeshLab",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ConflictResolution",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "DocumentModel", package: "Shoal"),
                .product(name: "DocumentStore", package: "Shoal"),
                .product(name: "Replication", package: "Shoal"),
                .product(name: "ShoalNode", package: "Shoal"),
            ],
            path: "Benchmarks/ConflictResolution",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Encryption",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "DocumentModel", package: "Shoal"),
                .product(name: "DocumentStore", package: "Shoal"),
                .product(name: "Replication", package: "Shoal"),
                .product(name: "ShoalNode", package: "Shoal"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/Encryption",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "MangoFind",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "DocumentModel", package: "Shoal"),
                .product(name: "DocumentStore", package: "Shoal"),
                .product(name: "Query", package: "Shoal"),
            ],
            path: "Benchmarks/MangoFind",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
