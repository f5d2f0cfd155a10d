import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

/// The expressions a mapping model reads into are text the predicate parser reads, and prints back the same.
@Suite struct MappingModelExpressionTests {
    static let mappingModels = [
        "coredataplus/Tests/Resources/SampleModel/Fixtures/V2toV3.cdm",
        "coredataplus/Tests/Resources/SampleModel/MappingModels/V2toV3.xcmappingmodel",
    ]

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)), arguments: mappingModels)
    func everyExpressionParses(path: String) throws {
        let mapping = try MappingModel.load(Corpus.url(path))
        var count = 0
        for entityMapping in mapping.entityMappings {
            let texts =
                [entityMapping.sourceExpression]
                + (entityMapping.attributeMappings + entityMapping.relationshipMappings).map(\.valueExpression)
            for text in texts.compactMap({ $0 }) {
                let expression = try GraftPredicate.Expression.parse(text)
                #expect(expression.description == text, "\(entityMapping.name)")
                count += 1
            }
            if let filter = entityMapping.filterPredicate {
                #expect(try GraftPredicate.parse(filter) == .truePredicate)
            }
        }
        #expect(count == 4 + 13 + 8)
    }

    @Test func fetchExpressionsParse() throws {
        let text =
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Car", "TRUEPREDICATE"), "#
            + "$manager.sourceContext, NO)"
        let expression = try GraftPredicate.Expression.parse(text)
        guard case .fetch(.method(.variable("manager"), let selector, let arguments), let context, false) = expression
        else {
            Issue.record("read as \(expression)")
            return
        }
        #expect(selector == "fetchRequestForSourceEntityNamed:predicateString:")
        #expect(arguments == [.constant(.string("Car")), .constant(.string("TRUEPREDICATE"))])
        #expect(context == .member(.variable("manager"), KeyValuePath(key: "sourceContext")))
        #expect(try GraftPredicate.Expression.parse("fetch($r, $c, YES)").description == "FETCH($r, $c, YES)")
        #expect(
            try GraftPredicate.Expression.parse(text).substituting(["manager": "M"]).description.hasPrefix(
                #"FETCH(FUNCTION("M", "#))

        #expect(throws: GraftError.self) { try GraftPredicate.Expression.parse("FETCH($r, $c, 1)") }
        #expect(throws: GraftError.self) { try GraftPredicate.Expression.parse("FETCH($r, $c)") }
        let failure = #expect(throws: GraftError.self) {
            try GraftPredicate.parse("FETCH($r, $c, NO) == 1").evaluate(with: nil as Any?)
        }
        #expect(failure?.code == .evaluationFailed)
    }
}
