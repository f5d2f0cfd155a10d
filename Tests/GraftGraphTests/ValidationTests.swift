import Foundation
import GraftCore
import GraftModel
import Testing

@testable import GraftGraph

@Suite struct ValidationTests {
    @Test func aFailingSaveReportsEveryErrorWithObjectAndKey() throws {
        let context = ObjectContext(model: TestModels.company)
        let department = try context.insert("Department")
        try department.setValue("", forKey: "name")  // shorter than 1
        try department.setValue(5000, forKey: "code")  // above 999
        let employee = try context.insert("Employee")
        try employee.setValue(-1, forKey: "salary")  // below 0
        try employee.setValue("not an address", forKey: "email")  // regular expression
        try employee.setValue(1.5, forKey: "workload")  // above 1
        try employee.setValue(department, forKey: "department")  // 1 employee, minimum 3
        // name and hireDate are missing.

        let error = try #require(throws: GraftError.self) { try context.save() }
        #expect(error.code == .validationFailed)
        let messages = error.underlying.map(\.description)
        let expected = [
            ("name", "shorter than the minimum 1"), ("code", "above the maximum 999"),
            ("employees", "fewer than the minimum 3"), ("salary", "below the minimum 0"),
            ("email", "does not match"), ("workload", "above the maximum 1"), ("hireDate", "is required"),
        ]
        for (key, text) in expected {
            #expect(
                error.underlying.contains { $0.context.contains(.key(key)) && $0.message.contains(text) },
                "missing \(key): \(text) in \(messages)")
        }
        #expect(
            error.underlying.allSatisfy {
                $0.context.first.map { if case .object = $0 { true } else { false } } ?? false
            })
        // Nothing was saved.
        #expect(context.hasChanges)
        #expect(employee.objectID.isTemporary)
    }

    @Test func integerRangesFollowTheAttributeType() throws {
        let attribute = Attribute(name: "code", type: .integer16)
        #expect(AttributeRules.violations(of: .integer(32767), for: attribute).isEmpty)
        #expect(AttributeRules.violations(of: .integer(32768), for: attribute).count == 1)
        #expect(AttributeRules.violations(of: .string("x"), for: attribute).count == 1)
    }

    @Test func relationshipCountsAndRequiredRelationships() throws {
        let context = ObjectContext(model: TestModels.company)
        let department = try makeDepartment(context, name: "Big", employees: 41)
        let loner = try context.insert("Employee")
        try loner.setValue("Loner", forKey: "name")
        try loner.setValue(Int64(999), forKey: "employeeID")
        try loner.setValue(Date(), forKey: "hireDate")
        let error = try #require(throws: GraftError.self) { try context.save() }
        #expect(
            error.underlying.contains {
                $0.context.contains(.key("employees")) && $0.message.contains("more than the maximum 40")
            })
        #expect(
            error.underlying.contains { $0.context.contains(.key("department")) && $0.message.contains("required") })
        #expect(error.underlying.count == 2)
        _ = department
    }

    @Test func aValidGraphSaves() throws {
        let context = ObjectContext(model: TestModels.company)
        try makeDepartment(context, name: "Sales", employees: 3)
        try context.save()
        #expect(!context.hasChanges)
    }
}
