// swift-tools-version: 6.0
import PackageDescription

// Benchmarks are programs, not timed tests: each prints its figures beside a baseline measured in the
// same run. Build and run from this folder: `swift run -c release convert-benchmark`.
let package = Package(
    name: "GraftBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "Graft", path: "..")],
    targets: [
        .target(
            name: "BenchmarkSupport", dependencies: [.product(name: "Graft", package: "Graft")],
            path: "Sources/BenchmarkSupport"),
        .executableTarget(
            name: "copypaste-benchmark",
            dependencies: ["BenchmarkSupport", .product(name: "Graft", package: "Graft")],
            path: "Sources/CopyPasteBenchmark"),
        .executableTarget(
            name: "foundation-baseline", dependencies: [.product(name: "Graft", package: "Graft")],
            path: "Sources/FoundationBaseline"),
        .executableTarget(
            name: "fetch-benchmark",
            dependencies: ["BenchmarkSupport", .product(name: "Graft", package: "Graft")],
            path: "Sources/FetchBenchmark"),
        .executableTarget(
            name: "fixtures-benchmark",
            dependencies: ["BenchmarkSupport", .product(name: "Graft", package: "Graft")],
            path: "Sources/FixturesBenchmark"),
        .executableTarget(
            name: "migration-benchmark",
            dependencies: ["BenchmarkSupport", .product(name: "Graft", package: "Graft")],
            path: "Sources/MigrationBenchmark"),
        .executableTarget(
            name: "convert-benchmark",
            dependencies: ["BenchmarkSupport", .product(name: "Graft", package: "Graft")],
            path: "Sources/ConvertBenchmark"),
    ],
    swiftLanguageModes: [.v6]
)
