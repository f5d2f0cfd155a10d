// The public face of Graft: one import gives models, the object graph, stores and errors.
@_exported import GraftBinary
@_exported import GraftCore
@_exported import GraftFixtures
@_exported import GraftGraph
@_exported import GraftInterchange
@_exported import GraftMigration
@_exported import GraftModel
@_exported import GraftSQLite
@_exported import GraftXML
