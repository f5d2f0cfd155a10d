// swift-tools-version: 6.0
import PackageDescription

// libFuzzer targets for every reader of Graft, in one program: `graft-fuzz TARGET [libFuzzer flags]`.
// It is built with the address sanitizer and libFuzzer's coverage instrumentation over the whole of
// Graft, which `swift build` alone does not do: build and run it with `scripts/fuzz` (see README.md).
let package = Package(
    name: "GraftFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "Graft", path: "..")],
    targets: [
        // SQLite for the sqlite-values target, which edits a copy of a real store before Graft reads it.
        .systemLibrary(
            name: "CSQLiteFuzz", path: "Sources/CSQLiteFuzz", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .executableTarget(
            name: "graft-fuzz", dependencies: ["CSQLiteFuzz", .product(name: "Graft", package: "Graft")],
            path: "Sources/GraftFuzz"),
    ],
    swiftLanguageModes: [.v6]
)
