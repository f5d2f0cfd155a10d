import Foundation

extension XMLPropertyList {
    /// Decodes an XML property-list document.
    ///
    /// For example:
    ///
    /// ```swift
    /// let plist = try XMLPropertyList.decode(Data("<plist version=\"1.0\"><true/></plist>".utf8))
    /// // plist == .bool(true)
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` with the line of the problem when the document is not
    ///   well-formed XML, uses an element a property list does not have, or holds a value that does
    ///   not parse (an integer out of range, a bad date, invalid base64, a key without a value).
    public static func decode(_ data: Data) throws -> PropertyList {
        let root: XMLElement
        do {
            root = try XMLTree.parse(data)
        } catch var error as GraftError {
            error.message = "XML property list: " + error.message
            throw error
        }
        return try decode(element: root)
    }

    /// Decodes a `<plist>` element — or a bare value element such as `<dict>` — from a parsed XML tree.
    ///
    /// Use it for property lists embedded in other documents, such as the `<metadata>` of a Core
    /// Data XML store.
    ///
    /// For example:
    ///
    /// ```swift
    /// let root = try XMLTree.parse(storeData)
    /// if let plist = root.child(named: "databaseInfo")?.child(named: "metadata")?.child(named: "plist") {
    ///     let metadata = try XMLPropertyList.decode(element: plist)
    /// }
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` with the line of the offending element.
    public static func decode(element: XMLElement) throws -> PropertyList {
        if element.name == "plist" {
            guard element.children.count == 1 else {
                throw error("<plist> must hold exactly one value, but holds \(element.children.count)", element)
            }
            return try value(element.children[0], depth: 1)
        }
        return try value(element, depth: 1)
    }

    private static func value(_ element: XMLElement, depth: Int) throws -> PropertyList {
        switch element.name {
        case "string":
            return .string(element.text)
        case "integer":
            guard let integer = PropertyListText.integer(element.text) else {
                throw error("'\(excerpt(element.text))' is not an integer in −2⁶³ … 2⁶⁴−1", element)
            }
            return integer
        case "real":
            guard let real = PropertyListText.real(element.text) else {
                throw error("'\(excerpt(element.text))' is not a real number", element)
            }
            return .real(real)
        case "true":
            return .bool(true)
        case "false":
            return .bool(false)
        case "date":
            guard let date = PropertyListText.date(element.text) else {
                throw error("'\(excerpt(element.text))' is not a date of the form 2001-01-01T00:00:00Z", element)
            }
            return .date(date)
        case "data":
            return .data(try base64(element))
        case "array":
            guard depth < maximumDepth else {
                throw error("containers are nested more than \(maximumDepth) deep", element)
            }
            var elements: [PropertyList] = []
            elements.reserveCapacity(element.children.count)
            for child in element.children { elements.append(try value(child, depth: depth + 1)) }
            return .array(elements)
        case "dict":
            guard depth < maximumDepth else {
                throw error("containers are nested more than \(maximumDepth) deep", element)
            }
            let children = element.children
            var dictionary = PropertyList.Dictionary(minimumCapacity: children.count / 2)
            var position = 0
            while position < children.count {
                let keyElement = children[position]
                guard keyElement.name == "key" else {
                    throw error("expected <key> in <dict>, found <\(keyElement.name)>", keyElement)
                }
                guard position + 1 < children.count else {
                    throw error("the key '\(excerpt(keyElement.text))' has no value", keyElement)
                }
                dictionary[keyElement.text] = try value(children[position + 1], depth: depth + 1)
                position += 2
            }
            // A keyed-archive reference is written as a dictionary with the single key CF$UID.
            if dictionary.count == 1, let uid = dictionary["CF$UID"], let number = uid.uint64Value {
                return .uid(number)
            }
            return .dictionary(dictionary)
        case "key":
            throw error("<key> outside a <dict>", element)
        case "plist":
            throw error("<plist> inside a property list", element)
        default:
            throw error("unknown element <\(element.name)>", element)
        }
    }

    private static func base64(_ element: XMLElement) throws -> Data {
        // White space between the characters and missing padding are tolerated.
        guard let data = Base64.decode(element.text) else {
            throw error("the contents of <data> are not valid base64", element)
        }
        return data
    }

    private static func excerpt(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }

    private static func error(_ message: String, _ element: XMLElement) -> GraftError {
        GraftError(.malformedInput, "XML property list: " + message, context: [.line(element.line)])
    }
}
