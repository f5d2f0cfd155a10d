import Foundation
import GraftCore
import GraftModel
import Testing

@testable import GraftGraph

/// An employee class with per-key rules: names have no digits (and are trimmed), salaries end in whole
/// hundreds.
final class RuledEmployee: ManagedObject {
    struct RuleError: Error, CustomStringConvertible {
        let description: String
    }

    override class var propertyValidators: [PropertyValidator] {
        [
            PropertyValidator("name") { (_: RuledEmployee, value: inout Any?) in
                guard let name = value as? String else { return }
                let trimmed = name.trimmingCharacters(in: .whitespaces)
                if trimmed != name { value = trimmed }
                if trimmed.contains(where: \.isNumber) { throw RuleError(description: "'\(trimmed)' has digits") }
            },
            PropertyValidator("salary") { (_: RuledEmployee, value: inout Any?) in
                guard let salary = value as? Decimal else { return }
                if salary % 100 != 0 {
                    throw GraftError(.validationFailed, "\(salary) is not in whole hundreds")
                }
            },
        ]
    }
}

private func % (lhs: Decimal, rhs: Decimal) -> Decimal {
    var quotient = lhs / rhs
    var whole = Decimal()
    NSDecimalRound(&whole, &quotient, 0, .down)
    return lhs - whole * rhs
}

/// An employee class whose rule names a key the entity does not have.
final class MisruledEmployee: ManagedObject {
    override class var propertyValidators: [PropertyValidator] {
        [PropertyValidator("nickname") { (_: MisruledEmployee, _: inout Any?) in }]
    }
}

@Suite struct PropertyValidationTests {
    func employee() throws -> (ObjectContext, ManagedObject) {
        let context = ObjectContext(model: TestModels.company)
        try context.register(RuledEmployee.self, forEntity: "Employee")
        let department = try makeDepartment(context, name: "Sales", employees: 3)
        let employees = department.related("employees")
        for (employee, name) in zip(employees, ["Ann", "Bob", "Cy"]) { try employee.setValue(name, forKey: "name") }
        return (context, try #require(employees.first))
    }

    /// A proposed value and what `validateValue(_:forKey:)` must say of it.
    struct Case: CustomStringConvertible, Sendable {
        let description: String
        let key: String
        let value: @Sendable () -> Any?
        /// The messages expected, in part; empty when the value is valid.
        let errors: [String]
        /// The value handed back, when valid.
        let result: (@Sendable (Any?) -> Bool)?
    }

    static let cases: [Case] = [
        Case(description: "valid name", key: "name", value: { "Ann" }, errors: [], result: { $0 as? String == "Ann" }),
        Case(
            description: "name trimmed by the class's rule", key: "name", value: { "  Ann " }, errors: [],
            result: { $0 as? String == "Ann" }),
        Case(description: "custom rule only", key: "name", value: { "R2D2" }, errors: ["has digits"], result: nil),
        Case(
            description: "model rule only", key: "name", value: { "" }, errors: ["shorter than the minimum"],
            result: nil),
        Case(description: "required", key: "name", value: { nil }, errors: ["is required"], result: nil),
        Case(
            description: "model and custom rules together", key: "salary", value: { -50 },
            errors: ["below the minimum", "whole hundreds"], result: nil),
        Case(
            description: "coerced before the custom rule", key: "salary", value: { 1200 }, errors: [],
            result: { $0 as? Decimal == 1200 }),
        Case(
            description: "wrong type, custom rule not run", key: "salary", value: { "lots" }, errors: ["cannot hold"],
            result: nil),
        Case(description: "required to-one", key: "department", value: { nil }, errors: ["is required"], result: nil),
    ]

    @Test(arguments: cases)
    func validateValueAppliesTheModelsRulesAndTheClasss(_ testCase: Case) throws {
        let (context, employee) = try employee()
        defer { withExtendedLifetime(context) {} }
        var value = testCase.value()
        do {
            try employee.validateValue(&value, forKey: testCase.key)
            #expect(testCase.errors.isEmpty, "expected errors \(testCase.errors)")
            if let result = testCase.result { #expect(result(value), "handed back \(String(describing: value))") }
        } catch let error as GraftError {
            #expect(error.code == .validationFailed)
            let messages = error.underlying.isEmpty ? [error.message] : error.underlying.map(\.message)
            #expect(messages.count == testCase.errors.count, "\(messages)")
            for expected in testCase.errors {
                #expect(messages.contains { $0.contains(expected) }, "\(messages) lacks \(expected)")
            }
            for single in error.underlying.isEmpty ? [error] : error.underlying {
                #expect(single.context.contains(.key(testCase.key)))
                #expect(single.context.contains(.object(employee.label)))
            }
        }
    }

    @Test func validateValueDoesNotSetTheValue() throws {
        let (context, employee) = try employee()
        defer { withExtendedLifetime(context) {} }
        let before = employee.string("name")
        var value: Any? = "  Zed "
        try employee.validateValue(&value, forKey: "name")
        #expect(employee.string("name") == before)
        #expect(throws: GraftError.self) {
            var value: Any? = 1
            try employee.validateValue(&value, forKey: "nickname")
        }
    }

    @Test func saveCombinesTheClasssErrorsWithTheModels() throws {
        let (context, employee) = try employee()
        try employee.setValue("R2D2", forKey: "name")  // the class's rule
        try employee.setValue(Decimal(-150), forKey: "salary")  // both
        #expect {
            try context.save()
        } throws: { error in
            guard let error = error as? GraftError, error.code == .validationFailed else { return false }
            let messages = error.underlying.map(\.message)
            return error.underlying.count == 3
                && messages.contains { $0.contains("has digits") }
                && messages.contains { $0.contains("below the minimum") }
                && messages.contains { $0.contains("whole hundreds") }
                && error.underlying.allSatisfy { $0.context.first == .object(employee.label) }
        }
        try employee.setValue("Rob", forKey: "name")
        try employee.setValue(Decimal(150_000), forKey: "salary")
        try context.save()
    }

    @Test func aRuleForAnUnknownKeyIsRefusedAtRegistration() throws {
        let context = ObjectContext(model: TestModels.company)
        #expect(throws: GraftError.self) { try context.register(MisruledEmployee.self, forEntity: "Employee") }
    }
}
