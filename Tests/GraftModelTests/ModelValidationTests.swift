import Foundation
import GraftCore
import Testing

@testable import GraftModel

@Suite struct ModelValidationTests {
    private func rejection(_ entities: [Entity], sourceLocation: SourceLocation = #_sourceLocation) -> GraftError? {
        do {
            _ = try Model(entities: entities)
            Issue.record("the model was accepted", sourceLocation: sourceLocation)
            return nil
        } catch let error as GraftError {
            #expect(error.code == .invalidModel, sourceLocation: sourceLocation)
            return error
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    private func mentions(_ error: GraftError?, entity: String, key: String?, _ text: String) -> Bool {
        guard let error else { return false }
        let all = error.underlying.isEmpty ? [error] : error.underlying
        return all.contains {
            $0.context.contains(.entity(entity)) && (key == nil || $0.context.contains(.key(key!)))
                && $0.message.contains(text)
        }
    }

    @Test func unknownDestination() {
        let error = rejection([Entity(name: "A", relationships: [Relationship(name: "b", destination: "B")])])
        #expect(mentions(error, entity: "A", key: "b", "destination entity 'B' does not exist"))
    }

    @Test func inverseThatDoesNotPointBack() {
        let error = rejection([
            Entity(name: "A", relationships: [Relationship(name: "b", destination: "B", inverse: "a")]),
            Entity(
                name: "B",
                relationships: [
                    Relationship(name: "a", destination: "A", inverse: "other"),
                    Relationship(name: "other", destination: "A"),
                ]),
        ])
        #expect(mentions(error, entity: "A", key: "b", "does not point back"))
        #expect(mentions(error, entity: "B", key: "a", "inverse relationship 'other' does not exist"))
    }

    @Test func inverseLeadingElsewhere() {
        let error = rejection([
            Entity(name: "A", relationships: [Relationship(name: "b", destination: "B", inverse: "c")]),
            Entity(name: "B", relationships: [Relationship(name: "c", destination: "C", inverse: "b")]),
            Entity(name: "C", relationships: [Relationship(name: "b", destination: "B", inverse: "c")]),
        ])
        #expect(mentions(error, entity: "A", key: "b", "leads to 'C', not back to 'A'"))
    }

    @Test func cardinalityThatCannotBe() {
        let error = rejection([
            Entity(
                name: "A",
                relationships: [
                    Relationship(name: "one", destination: "A", isOrdered: true),
                    Relationship(name: "many", destination: "A", isToMany: true, minCount: 5, maxCount: 2),
                    Relationship(name: "bad", destination: "A", minCount: 2),
                ])
        ])
        #expect(mentions(error, entity: "A", key: "one", "cannot be ordered"))
        #expect(mentions(error, entity: "A", key: "many", "minimum count 5 is above maximum count 2"))
        #expect(mentions(error, entity: "A", key: "bad", "cannot require 2"))
    }

    @Test func duplicateNames() {
        let error = rejection([
            Entity(
                name: "A", attributes: [Attribute(name: "x", type: .string), Attribute(name: "x", type: .integer16)]),
            Entity(name: "A"),
        ])
        #expect(mentions(error, entity: "A", key: nil, "entity name is used twice"))
        let inherited = rejection([
            Entity(name: "P", attributes: [Attribute(name: "x", type: .string)]),
            Entity(name: "C", parent: "P", relationships: [Relationship(name: "x", destination: "P")]),
        ])
        #expect(mentions(inherited, entity: "C", key: "x", "already inherited"))
    }

    @Test func inheritanceCycleAndUnknownParent() {
        let error = rejection([
            Entity(name: "A", parent: "B"), Entity(name: "B", parent: "A"), Entity(name: "C", parent: "Z"),
        ])
        #expect(mentions(error, entity: "A", key: nil, "cycle"))
        #expect(mentions(error, entity: "C", key: nil, "parent entity 'Z' does not exist"))
    }

    @Test func everyProblemIsReportedAtOnce() {
        let error = rejection([
            Entity(
                name: "A",
                relationships: [
                    Relationship(name: "x", destination: "Nowhere"),
                    Relationship(name: "y", destination: "Elsewhere"),
                ],
                uniquenessConstraints: [["missing"]])
        ])
        #expect(error?.underlying.count == 3)
    }

    @Test func entityOrderIsCoreDatasNumbering() throws {
        let model = try Model(entities: [
            Entity(name: "Zebra"), Entity(name: "Cat", parent: "Animal"), Entity(name: "Animal"),
            Entity(name: "Bird", parent: "Animal"), Entity(name: "Kitten", parent: "Cat"),
        ])
        #expect(model.descriptions.map(\.name) == ["Animal", "Bird", "Cat", "Kitten", "Zebra"])
        let kitten = try #require(model.entity(named: "Kitten"))
        #expect(kitten.ancestorIndices.map { model.descriptions[$0].name } == ["Cat", "Animal"])
        #expect(model.entity(named: "Animal")!.descendantIndices.count == 3)
    }
}
