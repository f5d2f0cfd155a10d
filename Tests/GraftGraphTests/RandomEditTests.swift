import Foundation
import GraftCore
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftGraph

@Suite struct RandomEditTests {
    /// Applies thousands of random edits — inserts, to-one and to-many edits from either side, ordered
    /// moves, deletions with cascades, undo, redo, saves and rollbacks — and checks after every one that
    /// each inverse is consistent.
    @Test(arguments: [UInt64(1), 2, 3, 20_261_130])
    func randomEditsKeepEveryInverseConsistent(seed: UInt64) throws {
        var random = RepeatableRandomNumberGenerator(
            seed: ProcessInfo.processInfo.environment["GRAFT_SEED"].flatMap(UInt64.init) ?? seed)
        let model = TestModels.kinds
        let context = ObjectContext(model: model)
        var objects: [ManagedObject] = []
        let concrete = model.descriptions.filter { !$0.isAbstract }

        func live(_ entity: String? = nil) -> [ManagedObject] {
            objects.filter { $0.context === context && !$0.isDeleted && (entity == nil || $0.entity.name == entity) }
        }

        for step in 0..<3_000 {
            let choice = Int.random(in: 0..<100, using: &random)
            do {
                switch choice {
                case 0..<15:
                    let entity = concrete.randomElement(using: &random)!
                    let object = try context.insert(entity)
                    if let name = entity.attributes.first?.name { try object.setValue("o\(step)", forKey: name) }
                    objects.append(object)
                case 15..<55:
                    guard let object = live().randomElement(using: &random),
                        let relationship = object.entity.relationships.randomElement(using: &random)
                    else { continue }
                    let destination = model.destination(of: relationship).name
                    let candidates = live().filter { model.isKind($0.entity, of: model.entity(named: destination)!) }
                    if relationship.isToMany {
                        let set = try object.relatedObjects(forKey: relationship.name)
                        let current = try set.allObjects()
                        switch Int.random(in: 0..<4, using: &random) {
                        case 0: if let target = current.randomElement(using: &random) { try set.remove(target) }
                        case 1 where relationship.isOrdered && !candidates.isEmpty:
                            try set.insert(
                                candidates.randomElement(using: &random)!,
                                at: Int.random(in: 0...current.count, using: &random))
                        case 2:
                            let chosen = candidates.shuffled(using: &random).prefix(
                                Int.random(in: 0...3, using: &random))
                            try object.setValue(Array(chosen), forKey: relationship.name)
                        default: if let target = candidates.randomElement(using: &random) { try set.insert(target) }
                        }
                    } else {
                        let target = Bool.random(using: &random) ? nil : candidates.randomElement(using: &random)
                        try object.setValue(target, forKey: relationship.name)
                    }
                case 55..<65:
                    if let object = live().randomElement(using: &random) { try context.delete(object) }
                case 65..<78:
                    context.undo()
                case 78..<86:
                    context.redo()
                case 86..<90:
                    if Bool.random(using: &random) {
                        context.beginUndoGrouping()
                        for object in live().shuffled(using: &random).prefix(3) where object.entity.name == "Person" {
                            try object.setValue("g\(step)", forKey: "name")
                        }
                        context.endUndoGrouping()
                    }
                case 90..<96:
                    // Every Person needs a name to save; give one where missing.
                    for person in live("Person") where person.string("name") == nil {
                        try person.setValue("p\(step)", forKey: "name")
                    }
                    try context.save()
                default:
                    context.rollback()
                }
            } catch let error as GraftError {
                Issue.record("step \(step) (seed \(seed)) threw \(error)")
                return
            }
            do {
                try context.checkInvariants()
            } catch {
                Issue.record("step \(step) (seed \(seed)): \(error)")
                return
            }
        }
        #expect(objects.count > 100)
    }
}
