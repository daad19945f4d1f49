// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Shoal",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "shoal", targets: ["shoal"]),
        .library(name: "DocumentModel", targets: ["DocumentModel"]),
        .library(name: "DocumentStore", targets: ["DocumentStore"]),
        .library(name: "BLIP", targets: ["BLIP"]),
        .library(name: "Replication", targets: ["Replication"]),
        .library(name: "Mesh", targets: ["Mesh"]),
        .library(name: "Discovery", targets: ["Discovery"]),
        .library(name: "RESTServer", targets: ["RESTServer"]),
        .library(name: "ShoalNode", targets: ["ShoalNode"]),
        .library(name: "JSEngine", targets: ["JSEngine"]),
        .library(name: "AccessControl", targets: ["AccessControl"]),
        .library(name: "Query", targets: ["Query"]),
        .library(name: "AdminUI", targets: ["AdminUI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // Pure values: JSON, canonical encoding, RevID, RevTree, winner order. No I/O.
        .target(name: "DocumentModel"),
        // The process's threads for blocking work (off Swift's cooperative pool) and the
        // probe that measures how late that pool runs ready tasks. Knows nothing else.
        .target(name: "Blocking"),
        // The encrypting SQLite VFS (AES-256-GCM pages, OpenSSL's libcrypto from Debian's libssl-dev).
        .target(
            name: "CSQLiteCrypt",
            linkerSettings: [.linkedLibrary("crypto"), .linkedLibrary("sqlite3")]
        ),
        // SQLite storage (GRDB over the system libsqlite3): documents, revisions, sequences, attachments.
        .target(
            name: "DocumentStore",
            dependencies: [
                "Blocking",
                "CSQLiteCrypt",
                "DocumentModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the hot INSERT (DirectBinding.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The system zlib (raw deflate for BLIP compression, CRC32).
        .systemLibrary(name: "CZlib"),
        // CRC-32 for BLIP's checksums: folded with PCLMULQDQ where the CPU has it, else zlib's.
        .target(name: "CCRC32", linkerSettings: [.linkedLibrary("z")]),
        // BLIP 3 codec and connection over WebSocket. Knows nothing about documents.
        .target(
            name: "BLIP",
            dependencies: [
                "CCRC32",
                "CZlib",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "WSCore", package: "swift-websocket"),
                .product(name: "WSClient", package: "swift-websocket"),
            ],
            exclude: ["BLIP.md"]
        ),
        // Couchbase Lite's replication protocol over BLIP: push, pull, checkpoints, replicators.
        .target(
            name: "Replication",
            dependencies: [
                "BLIP",
                "Blocking",
                "DocumentModel",
                "DocumentStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "WSClient", package: "swift-websocket"),
            ],
            exclude: ["Replication.md"]
        ),
        // The system Duktape 2.7 (Debian: duktape-dev), an ES5 JavaScript engine.
        .systemLibrary(name: "CDuktape"),
        // JavaScript functions (js conflict resolvers, sync functions): one Duktape heap and
        // thread per function, a time budget per call, host functions.
        .target(name: "JSEngine", dependencies: ["Blocking", "CDuktape", "DocumentModel"], exclude: ["JSEngine.md"]),
        // Users, roles, channels, the sync function, authentication (ARCHITECTURE.md §6).
        .target(
            name: "AccessControl",
            dependencies: [
                "Blocking",
                "DocumentModel",
                "DocumentStore",
                "JSEngine",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["AccessControl.md"]
        ),
        // CouchDB map/reduce views: design documents, collation, persistent indexes in the
        // database's SQLite file, view queries (docs/queries.md).
        .target(
            name: "Query",
            dependencies: [
                "Blocking",
                "DocumentModel",
                "DocumentStore",
                "JSEngine",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Avahi's client library (avahi-client: one D-Bus connection to avahi-daemon).
        .systemLibrary(name: "CAvahi"),
        // DNS-SD register/browse/resolve through the host's avahi-daemon, static peers. Knows nothing of documents.
        .target(
            name: "Discovery",
            dependencies: ["CAvahi", .product(name: "Logging", package: "swift-log")],
            exclude: ["Discovery.md"]
        ),
        // A tiny program that runs discovery in a simulated host (multi-host discovery test).
        .executableTarget(
            name: "DiscoveryProbe",
            dependencies: ["Discovery", .product(name: "Logging", package: "swift-log")],
            path: "scripts/discovery-probe"
        ),
        // The mesh: which peers to connect (dial rule, bounded degree), one replication per peer.
        .target(
            name: "Mesh",
            dependencies: [
                "BLIP",
                "Discovery",
                "DocumentModel",
                "DocumentStore",
                "Replication",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The admin web UI: HTML, CSS and JavaScript modules compiled into the binary,
        // and the small type that serves them (mounted by RESTServer on the admin port).
        .target(
            name: "AdminUI",
            resources: [
                .embedInCode("Resources/index.html"),
                .embedInCode("Resources/admin.css"),
                .embedInCode("Resources/app.js"),
                .embedInCode("Resources/api.js"),
                .embedInCode("Resources/dom.js"),
                .embedInCode("Resources/live.js"),
                .embedInCode("Resources/charts.js"),
                .embedInCode("Resources/mesh.js"),
                .embedInCode("Resources/documents.js"),
                .embedInCode("Resources/revtree.js"),
                .embedInCode("Resources/conflicts.js"),
                .embedInCode("Resources/sync.js"),
                .embedInCode("Resources/users.js"),
                .embedInCode("Resources/replications.js"),
                .embedInCode("Resources/metrics.js"),
            ]
        ),
        // HTTP API (public + admin listeners), Sync Gateway / CouchDB compatible.
        .target(
            name: "RESTServer",
            dependencies: [
                "AdminUI",
                "AccessControl",
                "Blocking",
                "Query",
                "BLIP",
                "DocumentModel",
                "DocumentStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // Composition root: configuration, databases, listeners, lifecycle.
        .target(
            name: "ShoalNode",
            dependencies: [
                "AccessControl",
                "Blocking",
                "DocumentModel",
                "DocumentStore",
                "JSEngine",
                "BLIP",
                "Mesh",
                "Query",
                "Replication",
                "RESTServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "shoal",
            dependencies: [
                "BLIP",
                "DocumentModel",
                "DocumentStore",
                "ShoalNode",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Shared test helpers: temporary directories and stores, a node on ephemeral ports, a socket HTTP client,
        // a static file server and headless Chromium over the DevTools protocol (browser tests).
        .target(
            name: "TestSupport",
            dependencies: [
                "Blocking",
                "DocumentModel",
                "DocumentStore",
                "ShoalNode",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "WSClient", package: "swift-websocket"),
            ]
        ),
        .testTarget(name: "DocumentModelTests", dependencies: ["DocumentModel", "TestSupport"]),
        .testTarget(name: "BlockingTests", dependencies: ["Blocking"]),
        .testTarget(
            name: "DocumentStoreTests",
            dependencies: [
                "Blocking", "CSQLiteCrypt", "DocumentStore", "TestSupport", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "BLIPTests",
            dependencies: [
                "BLIP", "TestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "ReplicationTests", dependencies: ["Replication", "BLIP", "TestSupport"]),
        .testTarget(name: "MeshTests", dependencies: ["Mesh", "ShoalNode", "TestSupport"]),
        .testTarget(name: "DiscoveryTests", dependencies: ["Discovery", "DiscoveryProbe", "TestSupport"]),
        .testTarget(
            name: "RESTServerTests",
            dependencies: ["RESTServer", "TestSupport"]
        ),
        // Depends on the executable so that `swift test` builds it for the crash test.
        .testTarget(name: "JSEngineTests", dependencies: ["JSEngine", "DocumentModel"]),
        .testTarget(name: "QueryTests", dependencies: ["Query", "DocumentModel", "DocumentStore", "TestSupport"]),
        .testTarget(name: "AccessControlTests", dependencies: ["AccessControl", "DocumentStore", "TestSupport"]),
        .testTarget(name: "ShoalNodeTests", dependencies: ["ShoalNode", "TestSupport", "shoal", "BLIP", "Replication", "AccessControl"]),
    ],
    swiftLanguageModes: [.v6]
)
