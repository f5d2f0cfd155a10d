import Foundation
import GraftCore

/// Writes a model as the `contents` XML of an `.xcdatamodel`, in the layout Xcode uses, so that
/// reading the result gives an equal model.
///
/// For example:
///
/// ```swift
/// let xml = XcdatamodelWriter.contents(of: model)
/// try FileAccess.writeAtomically(xml, to: folder.appendingPathComponent("contents"))
/// ```
public enum XcdatamodelWriter {
    /// The `contents` document for `model`.
    public static func contents(of model: Model) -> Data {
        var out = XMLText()
        out.line(0, #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#)
        var modelAttributes: [(String, String?)] = [
            ("type", "com.apple.IDECoreDataModeler.DataModel"), ("documentVersion", "1.0"),
            ("lastSavedToolsVersion", "22758"), ("systemVersion", "23E224"), ("minimumToolsVersion", "Automatic"),
            ("sourceLanguage", "Swift"),
        ]
        if let identifier = model.versionIdentifiers.first {
            modelAttributes.append(("userDefinedModelVersionIdentifier", identifier))
        }
        out.open(0, "model", modelAttributes)
        for entity in model.entities { write(entity, to: &out) }
        for template in model.fetchRequestTemplates {
            out.empty(
                1, "fetchRequest",
                [("name", template.name), ("entity", template.entity), ("predicateString", template.predicate)])
        }
        for configuration in model.configurations {
            out.open(1, "configuration", [("name", configuration.name)])
            for name in configuration.entities { out.empty(2, "memberEntity", [("name", name)]) }
            out.close(1, "configuration")
        }
        out.close(0, "model")
        return Data(out.text.utf8)
    }

    /// Writes an `.xcdatamodel` folder (holding `contents`) at `url`.
    public static func write(_ model: Model, to url: URL) throws {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw GraftError(
                .io, "cannot create the folder: \(error.localizedDescription)", context: [.file(url.relativePath)])
        }
        try FileAccess.writeAtomically(contents(of: model), to: url.appendingPathComponent("contents"))
    }

    private static func write(_ entity: Entity, to out: inout XMLText) {
        let attributes: [(String, String?)] = [
            ("name", entity.name), ("representedClassName", entity.className), ("parentEntity", entity.parent),
            ("isAbstract", entity.isAbstract ? "YES" : nil), ("versionHashModifier", entity.versionHashModifier),
            ("elementID", entity.renamingIdentifier), ("syncable", "YES"),
            ("coreSpotlightDisplayNameExpression", entity.coreSpotlightDisplayName),
        ]
        let isEmpty =
            entity.attributes.isEmpty && entity.relationships.isEmpty && entity.fetchedProperties.isEmpty
            && entity.uniquenessConstraints.isEmpty && entity.compoundIndexes.isEmpty && entity.fetchIndexes.isEmpty
            && entity.userInfo.isEmpty
        if isEmpty {
            out.empty(1, "entity", attributes)
            return
        }
        out.open(1, "entity", attributes)
        for attribute in entity.attributes { write(attribute, to: &out) }
        for relationship in entity.relationships {
            // Declarations that do not apply are written back as the model had them (Relationship.Inapplicable).
            let maxCount = relationship.inapplicable.maxCount ?? relationship.maxCount
            let fields: [(String, String?)] = [
                ("name", relationship.name), ("optional", relationship.isOptional ? "YES" : nil),
                ("transient", relationship.isTransient ? "YES" : nil), ("toMany", relationship.isToMany ? "YES" : nil),
                ("ordered", relationship.isOrdered || relationship.inapplicable.isOrdered ? "YES" : nil),
                ("minCount", relationship.minCount != 0 ? String(relationship.minCount) : nil),
                ("maxCount", relationship.isToMany ? (maxCount != 0 ? String(maxCount) : nil) : "1"),
                ("deletionRule", relationship.deleteRule.modelName), ("destinationEntity", relationship.destination),
                ("inverseName", relationship.inverse),
                ("inverseEntity", relationship.inverse == nil ? nil : relationship.destination),
                ("versionHashModifier", relationship.versionHashModifier),
                ("elementID", relationship.renamingIdentifier),
                ("spotlightIndexingEnabled", relationship.isIndexedBySpotlight ? "YES" : nil),
            ]
            writeWithUserInfo(2, "relationship", fields, relationship.userInfo, to: &out)
        }
        for property in entity.fetchedProperties {
            out.open(2, "fetchedProperty", [("name", property.name), ("optional", property.isOptional ? "YES" : nil)])
            out.empty(
                3, "fetchRequest",
                [
                    ("name", "fetchedPropertyFetchRequest"), ("entity", property.entity),
                    ("predicateString", property.predicate),
                ])
            writeUserInfo(3, property.userInfo, to: &out)
            out.close(2, "fetchedProperty")
        }
        for index in entity.fetchIndexes {
            out.open(2, "fetchIndex", [("name", index.name)])
            for element in index.elements {
                out.empty(
                    3, "fetchIndexElement",
                    [
                        ("property", element.property), ("type", element.kind),
                        ("order", element.isAscending ? "ascending" : "descending"),
                    ])
            }
            out.close(2, "fetchIndex")
        }
        if !entity.compoundIndexes.isEmpty {
            out.open(2, "compoundIndexes", [])
            for index in entity.compoundIndexes {
                out.open(3, "compoundIndex", [])
                for property in index { out.empty(4, "index", [("value", property)]) }
                out.close(3, "compoundIndex")
            }
            out.close(2, "compoundIndexes")
        }
        if !entity.uniquenessConstraints.isEmpty {
            out.open(2, "uniquenessConstraints", [])
            for constraint in entity.uniquenessConstraints {
                out.open(3, "uniquenessConstraint", [])
                for property in constraint { out.empty(4, "constraint", [("value", property)]) }
                out.close(3, "uniquenessConstraint")
            }
            out.close(2, "uniquenessConstraints")
        }
        writeUserInfo(2, entity.userInfo, to: &out)
        out.close(1, "entity")
    }

    private static func write(_ attribute: Attribute, to out: inout XMLText) {
        var fields: [(String, String?)] = [
            ("name", attribute.name), ("optional", attribute.isOptional ? "YES" : nil),
            ("transient", attribute.isTransient ? "YES" : nil), ("attributeType", attribute.type.modelName),
        ]
        if attribute.type == .date {
            fields += [
                ("defaultDateTimeInterval", attribute.defaultValue.map(seconds)),
                ("minDateTimeInterval", attribute.minValue.map(seconds)),
                ("maxDateTimeInterval", attribute.maxValue.map(seconds)),
            ]
        } else {
            fields += [
                ("defaultValueString", attribute.defaultValue.map(ValueText.format)),
                ("minValueString", attribute.minValue.map(ValueText.format)),
                ("maxValueString", attribute.maxValue.map(ValueText.format)),
            ]
        }
        fields += [
            ("regularExpressionString", attribute.regularExpression), ("indexed", attribute.isIndexed ? "YES" : nil),
            ("allowsExternalBinaryDataStorage", attribute.allowsExternalBinaryDataStorage ? "YES" : nil),
            ("preserveAfterDeletion", attribute.preservesValueInHistoryOnDeletion ? "YES" : nil),
            ("valueTransformerName", attribute.valueTransformerName), ("customClassName", attribute.customClassName),
            ("derived", attribute.isDerived ? "YES" : nil), ("derivationExpression", attribute.derivationExpression),
            ("versionHashModifier", attribute.versionHashModifier), ("elementID", attribute.renamingIdentifier),
            ("usesScalarValueType", attribute.usesScalarValueType.map { $0 ? "YES" : "NO" }),
            ("spotlightIndexingEnabled", attribute.isIndexedBySpotlight ? "YES" : nil),
        ]
        writeWithUserInfo(2, "attribute", fields, attribute.userInfo, to: &out)
    }

    private static func seconds(_ value: Value) -> String {
        if case .date(let date) = value { return ValueText.formatSeconds(date.timeIntervalSinceReferenceDate) }
        return ValueText.format(value)
    }

    private static func writeWithUserInfo(
        _ depth: Int, _ name: String, _ fields: [(String, String?)], _ info: [String: String], to out: inout XMLText
    ) {
        if info.isEmpty {
            out.empty(depth, name, fields)
        } else {
            out.open(depth, name, fields)
            writeUserInfo(depth + 1, info, to: &out)
            out.close(depth, name)
        }
    }

    private static func writeUserInfo(_ depth: Int, _ info: [String: String], to out: inout XMLText) {
        guard !info.isEmpty else { return }
        out.open(depth, "userInfo", [])
        for key in info.keys.sorted() { out.empty(depth + 1, "entry", [("key", key), ("value", info[key]!)]) }
        out.close(depth, "userInfo")
    }
}

/// A little indenting XML text builder for small documents.
struct XMLText {
    private(set) var text = ""

    mutating func line(_ depth: Int, _ content: String) {
        text += String(repeating: "    ", count: depth) + content + "\n"
    }

    mutating func open(_ depth: Int, _ name: String, _ attributes: [(String, String?)]) {
        line(depth, "<\(name)\(Self.attributes(attributes))>")
    }

    mutating func empty(_ depth: Int, _ name: String, _ attributes: [(String, String?)]) {
        line(depth, "<\(name)\(Self.attributes(attributes))/>")
    }

    mutating func close(_ depth: Int, _ name: String) {
        line(depth, "</\(name)>")
    }

    static func attributes(_ attributes: [(String, String?)]) -> String {
        attributes.compactMap { name, value in value.map { " \(name)=\"\(escape($0))\"" } }.joined()
    }

    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            case "\t": out += "&#9;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }
}
