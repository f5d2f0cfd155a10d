import Foundation
import GraftModel

extension Clipboard {
    /// Everything a document says besides its objects: what a streaming reader gives before the first
    /// object, and what a streaming writer needs before it writes one.
    public struct Header: Hashable, Sendable {
        /// The model the objects were copied from (see ``Clipboard/entities``).
        public var entities: [EntityInfo]
        /// The source model's version identifiers.
        public var versionIdentifiers: [String]
        /// The source store's UUID, if the objects came from a store.
        public var sourceStore: String?
        /// The local ids of the objects that were chosen.
        public var roots: [String]
        /// Objects left out of the copy but pointed to by copied objects.
        public var references: [Reference]
        /// The whole source model in Xcode's `contents` format, if the document carries it.
        public var modelContents: Data?

        public init(
            entities: [EntityInfo], versionIdentifiers: [String] = [], sourceStore: String? = nil,
            roots: [String] = [], references: [Reference] = [], modelContents: Data? = nil
        ) {
            self.entities = entities
            self.versionIdentifiers = versionIdentifiers
            self.sourceStore = sourceStore
            self.roots = roots
            self.references = references
            self.modelContents = modelContents
        }
    }

    /// The document without its objects.
    public var header: Header {
        get {
            Header(
                entities: entities, versionIdentifiers: versionIdentifiers, sourceStore: sourceStore, roots: roots,
                references: references, modelContents: modelContents)
        }
        set {
            entities = newValue.entities
            versionIdentifiers = newValue.versionIdentifiers
            sourceStore = newValue.sourceStore
            roots = newValue.roots
            references = newValue.references
            modelContents = newValue.modelContents
        }
    }

    /// A document of `header` and `objects`.
    public init(header: Header, objects: [Object]) {
        self.init(
            entities: header.entities, versionIdentifiers: header.versionIdentifiers,
            sourceStore: header.sourceStore, roots: header.roots, objects: objects, references: header.references,
            modelContents: header.modelContents)
    }
}
