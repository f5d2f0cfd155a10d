import Foundation
import GraftCore

extension MappingModel {
    /// Reads a mapping model from a file or folder, told by its name and content:
    ///
    /// - a compiled `.cdm` (a keyed archive of an `NSMappingModel`, binary or XML property list);
    /// - an `.xcmappingmodel` folder (Xcode's source form), or the `xcmapping.xml` inside one.
    ///
    /// Both forms of one mapping model give equal values, except that the version hashes of a source
    /// form come from the models it keeps, and are `nil` when it keeps none.
    ///
    /// For example:
    ///
    /// ```swift
    /// let compiled = try MappingModel.load(URL(fileURLWithPath: "V2toV3.cdm"))
    /// let source = try MappingModel.load(URL(fileURLWithPath: "V2toV3.xcmappingmodel"))
    /// print(compiled == source)   // true
    /// ```
    ///
    /// - Throws: `GraftError.fileNotFound` when nothing is at `url`; `GraftError.unsupportedFormat` for a
    ///   file or folder that is not a mapping model; `GraftError.malformedInput` for a truncated or corrupt
    ///   one, naming the file and what is wrong (the entity mapping, key, line).
    public static func load(_ url: URL) throws -> MappingModel {
        let path = url.relativePath
        let kind = FileAccess.kind(of: url)
        guard kind.exists else {
            throw GraftError(.fileNotFound, "no such file or folder", context: [.file(path)])
        }
        if kind.isDirectory {
            let document = url.appendingPathComponent("xcmapping.xml")
            guard FileAccess.kind(of: document).exists else {
                if url.pathExtension.lowercased() == "xcmappingmodel" {
                    throw GraftError(
                        .malformedInput, "the .xcmappingmodel folder has no xcmapping.xml", context: [.file(path)])
                }
                throw GraftError(
                    .unsupportedFormat,
                    "is a folder but not a mapping model (an .xcmappingmodel with an xcmapping.xml)",
                    context: [.file(path)])
            }
            return try read(xcmapping: FileAccess.read(document), path: document.relativePath)
        }
        let data = try FileAccess.read(url)
        let head = data.prefix(1024)
        if head.starts(with: Array("bplist".utf8)) {
            return try read(compiled: data, path: path)
        }
        // An xcmapping.xml holds a property list too (its store metadata), after its <database>.
        if url.lastPathComponent.lowercased() == "xcmapping.xml" || head.range(of: Data("<database".utf8)) != nil {
            return try read(xcmapping: data, path: path)
        }
        if url.pathExtension.lowercased() == "cdm" || head.range(of: Data("<plist".utf8)) != nil {
            return try read(compiled: data, path: path)
        }
        throw GraftError(
            .unsupportedFormat,
            "is not a mapping model Graft reads (a compiled .cdm, an .xcmappingmodel folder or its xcmapping.xml)",
            context: [.file(path)])
    }
}
