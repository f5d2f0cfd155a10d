import Foundation
import OfficesExample

// swift run offices-example [examples/Offices]
// Opens the version-1 Company document with version 2 of the model and prints what happened; writes only
// into a new temporary folder.
let folder = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? "examples/Offices")
let work = FileManager.default.temporaryDirectory.appendingPathComponent("offices-example-\(UUID().uuidString)")
do {
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    print(try OfficesExample.run(folder: folder, workingDirectory: work))
} catch {
    FileHandle.standardError.write(Data("offices-example: \(error)\n".utf8))
    exit(1)
}
