// swift-tools-version: 6.0
import PackageDescription

/// Graft: Core Data–style object graphs, models and stores, without Apple's framework.
///
/// The module layout follows ARCHITECTURE.md: thin system-library targets at the bottom, a pure-Swift
/// model and object graph above them, and the `graft` command on top.
let package = Package(
    name: "Graft",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "Graft", targets: ["Graft"]),
        .executable(name: "graft", targets: ["graft"]),
    ],
    targets: [
        // System libraries: a module map and a shim header each, nothing else.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl"])]
        ),

        // Errors, property lists (binary, XML, OpenStep text) and keyed archives.
        .target(name: "GraftCore"),
        // Entities, attributes, relationships; model files; version hashes.
        .target(name: "GraftModel", dependencies: ["GraftCore", "CLibXML2", "CZlib", "CCrypto"]),
        // The object graph: contexts, managed objects, predicates, undo, the store protocols.
        .target(name: "GraftGraph", dependencies: ["GraftModel"]),
        // Core Data's SQLite store.
        .target(name: "GraftSQLite", dependencies: ["GraftGraph", "CSQLite"]),
        // Core Data's XML store.
        .target(name: "GraftXML", dependencies: ["GraftGraph", "CLibXML2"]),
        // Core Data's binary store (NSBinaryStoreType).
        .target(name: "GraftBinary", dependencies: ["GraftGraph"]),
        // Moving documents between formats: format detection, conversion, verification (later: selection,
        // clipboard documents, pasting).
        .target(name: "GraftInterchange", dependencies: ["GraftGraph", "GraftSQLite", "GraftXML", "GraftBinary"]),
        // Fixtures for tests: object graphs generated from a model.
        .target(name: "GraftFixtures", dependencies: ["GraftGraph", "GraftInterchange"]),
        // Old documents, new model: migration between model versions.
        .target(name: "GraftMigration", dependencies: ["GraftGraph", "GraftInterchange"]),
        // The public face.
        .target(
            name: "Graft",
            dependencies: [
                "GraftCore", "GraftModel", "GraftGraph", "GraftSQLite", "GraftXML", "GraftBinary", "GraftInterchange",
                "GraftFixtures", "GraftMigration",
            ]),
        // The command line: argument parsing, help and the subcommands.
        .target(name: "GraftCLI", dependencies: ["Graft"]),
        .executableTarget(name: "graft", dependencies: ["GraftCLI"]),

        // The Swift examples (examples/…): each a library the tests run and a small program.
        .target(name: "OfficesExample", dependencies: ["Graft"], path: "examples/Offices/Sources/OfficesExample"),
        .executableTarget(
            name: "offices-example", dependencies: ["OfficesExample"], path: "examples/Offices/Sources/offices-example"),

        // Helpers shared by the tests: where the corpus and the examples are.
        .target(name: "GraftTestSupport", dependencies: ["CSQLite"], path: "Tests/GraftTestSupport"),
        .testTarget(name: "GraftCoreTests", dependencies: ["GraftCore", "GraftTestSupport"]),
        .testTarget(name: "GraftModelTests", dependencies: ["GraftModel", "GraftTestSupport"]),
        .testTarget(name: "GraftGraphTests", dependencies: ["GraftGraph", "GraftTestSupport"]),
        .testTarget(name: "GraftCLITests", dependencies: ["GraftCLI", "GraftTestSupport"]),
        .testTarget(name: "GraftSQLiteTests", dependencies: ["GraftSQLite", "GraftTestSupport"]),
        .testTarget(name: "GraftBinaryTests", dependencies: ["GraftBinary", "GraftTestSupport"]),
        .testTarget(name: "GraftInterchangeTests", dependencies: ["GraftInterchange", "GraftTestSupport"]),
        .testTarget(name: "GraftFixturesTests", dependencies: ["GraftFixtures", "CSQLite", "GraftTestSupport"]),
        .testTarget(
            name: "GraftMigrationTests",
            dependencies: ["GraftMigration", "GraftFixtures", "CSQLite", "GraftTestSupport"]),
        .testTarget(name: "GraftTests", dependencies: ["Graft", "GraftTestSupport", "OfficesExample"]),
        .testTarget(
            name: "GraftXMLTests", dependencies: ["GraftXML", "GraftTestSupport"], exclude: ["Invalid", "Valid"]),
    ],
    swiftLanguageModes: [.v6]
)
