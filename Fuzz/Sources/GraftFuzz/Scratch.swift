import Foundation
import Graft

/// The folder where store targets write each input, as readers of stores read files: one folder per
/// process (`graft-fuzz-<pid>` in the temporary folder), emptied when the run ends.
enum Scratch {
    static let folder: URL = FileManager.default.temporaryDirectory
        .appendingPathComponent("graft-fuzz-\(ProcessInfo.processInfo.processIdentifier)")

    /// Writes `contents` to `name` in the scratch folder, replacing what the last input left there
    /// (side files of a store included).
    static func file(named name: String, contents: Data) throws -> URL {
        let manager = FileManager.default
        if !manager.fileExists(atPath: folder.path) {
            try manager.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let url = folder.appendingPathComponent(name)
        for entry in (try? manager.contentsOfDirectory(atPath: folder.path)) ?? [] {
            try? manager.removeItem(at: folder.appendingPathComponent(entry))
        }
        guard manager.createFile(atPath: url.path, contents: contents) else {
            throw GraftError(.io, "cannot write the input to \(url.path)")
        }
        return url
    }

    static func removeAll() {
        try? FileManager.default.removeItem(at: folder)
    }
}
