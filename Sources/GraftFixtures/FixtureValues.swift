import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// How one attribute of one entity gets its values: worked out once from the model, the spec and
/// the counts, then asked for each object's value by index. A value depends only on the seed, the
/// entity, the attribute and the object's index (and, for a unique attribute, the object's place
/// among its inheritance tree's kinds), never on other objects.
final class AttributeRecipe: Sendable {
    enum Source: Sendable {
        /// No value (transient, derived, or a type the generator does not make and the model lets be empty).
        case none
        case pinned(Value?)
        case choices([Value?])
        case generated(Kind)
    }

    /// What a generated value looks like, from the attribute's name and type.
    enum Kind: Sendable {
        case personName, firstName, lastName, email, url, phone, city, country, street, postalCode, colour
        case uuidText, title, departmentName, sentence, code, word
        case integer(ClosedRange<Int64>)
        case real(low: Double, high: Double, float: Bool)
        /// Amounts in cents.
        case money(lowCents: Int64, highCents: Int64)
        case date(low: Double, high: Double)
        case bool, uuid, uri, binary(ClosedRange<Int>), archive
    }

    let entity: String
    let attribute: Attribute
    let source: Source
    /// For an attribute made unique: how many kinds share the numbering and this entity's place among them.
    let unique: (stride: Int, offset: Int)?
    let pattern: PatternGenerator?
    let seed: UInt64
    /// Whether an optional attribute is left empty now and then (not when replacing values).
    let leavesSomeEmpty: Bool
    /// The names of the streams this attribute's values draw from, hashed once.
    private let valueNames: UInt64, choiceNames: UInt64, personNames: UInt64
    /// The pattern compiled once, for checking values against it.
    private let compiled: CompiledPattern?

    init(
        entity: String, attribute: Attribute, source: Source, unique: (stride: Int, offset: Int)?,
        pattern: PatternGenerator?, seed: UInt64, leavesSomeEmpty: Bool = true
    ) {
        self.leavesSomeEmpty = leavesSomeEmpty
        self.entity = entity
        self.attribute = attribute
        self.source = source
        self.unique = unique
        self.pattern = pattern
        self.seed = seed
        valueNames = FixtureRandom.hash([entity, attribute.name])
        choiceNames = FixtureRandom.hash([entity, attribute.name, "choice"])
        personNames = FixtureRandom.hash([entity, "person"])
        compiled = pattern.flatMap { CompiledPattern($0.pattern) }
    }

    /// The reference day generated dates lie near: 1 January 2025, 00:00 UTC (seconds since 2001).
    static let referenceDay: Double = 757_382_400

    /// The value of the object at `index`.
    func value(at index: Int) throws -> Value? {
        switch source {
        case .none: return nil
        case .pinned(let value): return value
        case .choices(let values):
            if let unique { return values[(index * unique.stride + unique.offset) % values.count] }
            var random = FixtureRandom(seed: seed, names: choiceNames, index: index)
            return random.pick(values)
        case .generated(let kind):
            var random = FixtureRandom(seed: seed, names: valueNames, index: index)
            // Optional attributes are left empty now and then, so that tests meet empty values; never a
            // unique one or one with a pattern (whose checks are the point of having it).
            if leavesSomeEmpty && attribute.isOptional && unique == nil && attribute.regularExpression == nil
                && random.oneIn(8)
            {
                return nil
            }
            let ordinal = unique.map { index * $0.stride + $0.offset }
            return try make(kind, &random, ordinal: ordinal, index: index)
        }
    }

    private func make(_ kind: Kind, _ random: inout FixtureRandom, ordinal: Int?, index: Int) throws -> Value {
        switch kind {
        case .integer(let range):
            if let ordinal { return .integer(range.lowerBound + Int64(ordinal)) }
            return .integer(random.int(in: range))
        case .real(let low, let high, let float):
            if let ordinal { return .double(low + Double(ordinal)) }
            // Two decimals, within the range.
            let cents = random.int(in: Int64((low * 100).rounded(.up))...Int64((high * 100).rounded(.down)))
            let value = Double(cents) / 100
            return .double(float ? Double(Float(value)) : value)
        case .money(let lowCents, let highCents):
            if let ordinal { return .decimal(Decimal(lowCents) / 100 + Decimal(ordinal)) }
            let cents = random.int(in: lowCents...max(lowCents, highCents))
            return .decimal(
                Decimal(sign: cents < 0 ? .minus : .plus, exponent: -2, significand: Decimal(cents.magnitude)))
        case .date(let low, let high):
            if let ordinal { return .date(Date(timeIntervalSinceReferenceDate: low + Double(ordinal) * 3600)) }
            let seconds = random.int(in: Int64(low.rounded(.up))...Int64(high.rounded(.down)))
            return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
        case .bool:
            if let ordinal { return .bool(ordinal % 2 == 1) }
            return .bool(random.oneIn(2))
        case .uuid:
            return .uuid(Self.uuid(&random))
        case .uri:
            return .uri(
                URL(
                    string:
                        "https://\(random.pick(WordLists.domains))/\(entity.lowercased())/\((ordinal ?? random.below(100_000)) + 1)"
                )!)
        case .binary(let sizes):
            var bytes = random.bytes(random.int(in: sizes))
            if let ordinal {
                // The ordinal's bytes first make every value different.
                let prefix = withUnsafeBytes(of: UInt64(ordinal).bigEndian, Array.init)
                bytes = Array((prefix + bytes).prefix(max(sizes.lowerBound, min(sizes.upperBound, 8 + bytes.count))))
            }
            return .data(Data(bytes))
        case .archive:
            return .data(Self.archive(&random))
        default:
            return .string(try text(kind, &random, ordinal: ordinal, index: index))
        }
    }

    /// A string value: the kind's text, fitted to the attribute's lengths, and to its pattern when the
    /// text does not already match it.
    private func text(_ kind: Kind, _ random: inout FixtureRandom, ordinal: Int?, index: Int) throws -> String {
        let minimum = attribute.minValue?.doubleValue.map { Int($0) } ?? 0
        let maximum = attribute.maxValue?.doubleValue.map { Int($0) }
        var suffix = ordinal.map { " \($0 + 1)" } ?? ""
        // Names and addresses of one object come from one stream, so that its email goes with its name.
        var person = FixtureRandom(seed: seed, names: personNames, index: index)
        var candidate = Self.text(kind, &random, person: &person, ordinal: ordinal, entity: entity)
        if ordinal != nil, case .email = kind { suffix = "" }  // the number is in the address already
        if ordinal != nil, case .uuidText = kind { suffix = "" }
        if let maximum, suffix.utf16.count - 1 > maximum {
            throw GraftError(
                .validationFailed,
                "cannot make \(ordinal! + 1) unique values of at most \(maximum) characters; ask for fewer objects",
                context: [.entity(entity), .key(attribute.name)])
        }
        candidate = Self.fit(candidate, suffix: suffix, minimum: minimum, maximum: maximum, &random)
        guard let pattern, let compiled else { return candidate }
        if compiled.matches(candidate) { return candidate }
        for attempt in 0..<40 {
            let stretch = attempt < 10 ? 4 : attempt < 20 ? 1 : attempt < 30 ? 16 : 64
            var made = try pattern.string(&random, stretch: stretch)
            if let ordinal, made.utf16.count + suffix.utf16.count <= (maximum ?? Int.max) {
                // Unique: the ordinal where the pattern lets it stand.
                for form in ["\(made)\(ordinal + 1)", "\(ordinal + 1)\(made)", "\(made)\(suffix)"]
                where compiled.matches(form) {
                    made = form
                    break
                }
            }
            let length = made.utf16.count
            if length >= minimum && length <= (maximum ?? Int.max) && compiled.matches(made) {
                return made
            }
        }
        throw GraftError(
            .unsupportedFormat,
            "cannot make a value matching the pattern \(pattern.pattern) within the lengths \(minimum)...\(maximum.map(String.init) ?? "any"); "
                + "give the values with --set or choices in a spec",
            context: [.entity(entity), .key(attribute.name)])
    }

    /// The text of `kind`, before fitting.
    private static func text(
        _ kind: Kind, _ random: inout FixtureRandom, person: inout FixtureRandom, ordinal: Int?, entity: String
    ) -> String {
        // The person's names, drawn in the same order whichever of them is asked for.
        func names() -> (first: String, last: String) {
            (person.pick(WordLists.firstNames), person.pick(WordLists.lastNames))
        }
        switch kind {
        case .personName:
            let (first, last) = names()
            return "\(first) \(last)"
        case .firstName: return names().first
        case .lastName: return names().last
        case .email:
            let (first, last) = names()
            let lowerFirst = first.lowercased(), lowerLast = last.lowercased()
            return "\(lowerFirst).\(lowerLast)\(ordinal.map { String($0 + 1) } ?? "")@\(random.pick(WordLists.domains))"
        case .url:
            return "https://\(random.pick(WordLists.domains))/\(random.pick(WordLists.lorem))/\(random.below(10_000))"
        case .phone:
            return "+1 555 01\(random.below(10))\(random.below(10)) \(1000 + random.below(9000))"
        case .city: return random.pick(WordLists.cities)
        case .country: return random.pick(WordLists.countries)
        case .street: return "\(1 + random.below(240)) \(random.pick(WordLists.streets))"
        case .postalCode: return String(10_000 + random.below(90_000))
        case .colour:
            return "#" + random.bytes(3).map { String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined()
        case .uuidText: return uuid(&random).uuidString
        case .title: return "\(random.pick(WordLists.nouns)) \(random.pick(WordLists.lorem).capitalized)"
        case .departmentName: return random.pick(WordLists.departments)
        case .sentence:
            let words = (0..<(4 + random.below(6))).map { _ in random.pick(WordLists.lorem) }
            return words.joined(separator: " ").capitalizedFirst + "."
        case .code:
            let letters = (0..<3).map { _ in String(UnicodeScalar(UInt8(65 + random.below(26)))) }.joined()
            return "\(letters)-\(100 + random.below(900))"
        default: return random.pick(WordLists.lorem)
        }
    }

    /// The text within the lengths (UTF-16 units, as Core Data counts), the suffix kept whole.
    private static func fit(
        _ text: String, suffix: String, minimum: Int, maximum: Int?, _ random: inout FixtureRandom
    )
        -> String
    {
        if minimum == 0 && maximum == nil { return text + suffix }
        var base = text
        while base.utf16.count + suffix.utf16.count < minimum { base += " " + random.pick(WordLists.lorem) }
        if let maximum {
            let room = maximum - suffix.utf16.count
            if room <= 0 { return String(suffix.trimmingCharacters(in: .whitespaces).prefix(max(maximum, 0))) }
            while base.utf16.count > room { base.removeLast() }
            base = base.trimmingCharacters(in: .whitespaces)
            if base.isEmpty && suffix.isEmpty && minimum > 0 { base = String(repeating: "x", count: minimum) }
        }
        var result = base + suffix
        while result.utf16.count < minimum { result += "x" }
        return result
    }

    private static func uuid(_ random: inout FixtureRandom) -> UUID {
        var bytes = random.bytes(16)
        bytes[6] = bytes[6] & 0x0f | 0x40  // version 4
        bytes[8] = bytes[8] & 0x3f | 0x80  // RFC 4122 variant
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// A keyed archive of a small dictionary of strings, as `NSSecureUnarchiveFromData` reads one.
    private static func archive(_ random: inout FixtureRandom) -> Data { random.pick(archives) }

    /// Every dictionary the archives hold, archived once.
    private static let archives: [Data] = ["light", "dark", "auto"].flatMap { theme in
        ["en", "de", "fr", "ja", "pt"].map { language in
            var archiver = KeyedArchiver()
            let keys = ["theme", "language"].map { archiver.encode($0) }
            let values = [theme, language].map { archiver.encode($0) }
            let dictionary = archiver.encodeDictionary(Array(zip(keys, values)).map { (key: $0.0, value: $0.1) })
            return archiver.finish(top: ["root": dictionary]).encode(format: .binary)
        }
    }
}

extension AttributeRecipe {
    /// The kind of value an attribute gets, from its type, name and rules.
    static func kind(for attribute: Attribute, entity: EntityDescription) throws -> Kind? {
        let name = attribute.name.lowercased().replacingOccurrences(of: "_", with: "")
        func has(_ words: String...) -> Bool { words.contains { name.contains($0) } }
        let minimum = attribute.minValue?.doubleValue, maximum = attribute.maxValue?.doubleValue
        switch attribute.type {
        case .integer16, .integer32, .integer64:
            let typeRange = attribute.type.integerRange!
            var low: Int64, high: Int64
            if has("year") {
                (low, high) = (1990, 2030)
            } else if has("age") {
                (low, high) = (18, 80)
            } else if has("rating", "stars", "score") {
                (low, high) = (1, 5)
            } else if has("count", "quantity", "number", "amount") {
                (low, high) = (0, 100)
            } else {
                (low, high) = (1, 1000)
            }
            if let minimum { low = Int64(max(Double(typeRange.lowerBound), minimum.rounded(.up))) }
            if let maximum { high = Int64(min(Double(typeRange.upperBound), maximum.rounded(.down))) }
            if minimum != nil && maximum == nil { high = max(high, low &+ 1000) }
            if maximum != nil && minimum == nil && low > high { low = max(typeRange.lowerBound, high - 1000) }
            low = max(low, typeRange.lowerBound)
            high = min(high, typeRange.upperBound)
            guard low <= high else { throw empty(attribute, entity) }
            return .integer(low...high)
        case .double, .float:
            var low: Double, high: Double
            if has("latitude") {
                (low, high) = (-90, 90)
            } else if has("longitude") {
                (low, high) = (-180, 180)
            } else if has("rating", "score") {
                (low, high) = (0, 5)
            } else {
                (low, high) = (0, 100)
            }
            if let minimum { low = minimum }
            if let maximum { high = maximum }
            if minimum != nil && maximum == nil { high = max(high, low + 100) }
            if maximum != nil && minimum == nil && low > high { low = high - 100 }
            guard low <= high else { throw empty(attribute, entity) }
            return .real(low: low, high: high, float: attribute.type == .float)
        case .decimal:
            var low: Decimal, high: Decimal
            if has("salary", "wage", "income", "pay") {
                (low, high) = (30_000, 150_000)
            } else if has("budget", "revenue") {
                (low, high) = (10_000, 5_000_000)
            } else {
                (low, high) = (1, 1000)
            }
            if let minimum = attribute.minValue.flatMap(decimal) { low = minimum }
            if let maximum = attribute.maxValue.flatMap(decimal) { high = maximum }
            if attribute.minValue != nil && attribute.maxValue == nil && high < low { high = low + 1000 }
            if attribute.maxValue != nil && attribute.minValue == nil && low > high { low = high - 1000 }
            guard low <= high else { throw empty(attribute, entity) }
            // Whole cents within the bounds.
            var lowCents = Int64(max(-9e17, min(9e17, (low.nearestDouble * 100).rounded(.up))))
            if Decimal(lowCents) / 100 < low { lowCents += 1 }
            var highCents = Int64(max(-9e17, min(9e17, (high.nearestDouble * 100).rounded(.down))))
            if Decimal(highCents) / 100 > high { highCents -= 1 }
            return .money(lowCents: lowCents, highCents: max(lowCents, highCents))
        case .date:
            let day = 86_400.0
            var low: Double, high: Double
            if has("birth") {
                (low, high) = (-1_609_459_200, 157_766_400)  // 1950 to 2005
            } else if has("deadline", "due", "end", "expir", "until") {
                (low, high) = (referenceDay, referenceDay + 365 * day)
            } else {
                (low, high) = (referenceDay - 730 * day, referenceDay)
            }
            if let minimum { low = max(low, minimum) }
            if let maximum { high = min(high, maximum) }
            if low > high {
                low = minimum ?? (high - 365 * day)
                high = maximum ?? (low + 365 * day)
            }
            guard low <= high else { throw empty(attribute, entity) }
            return .date(low: low, high: high)
        case .boolean: return .bool
        case .uuid: return .uuid
        case .uri: return .uri
        case .binary:
            let low = Int(minimum ?? 16), high = Int(maximum ?? Double(max(low, 48)))
            guard low <= high else { throw empty(attribute, entity) }
            return .binary(low...max(low, min(high, low + 48)))
        case .transformable: return .archive
        case .string:
            if has("email", "mail") { return .email }
            if has("url", "homepage", "website", "link", "uri") { return .url }
            if has("phone", "mobile", "fax", "tel") { return .phone }
            if has("firstname", "givenname", "forename") { return .firstName }
            if has("lastname", "surname", "familyname") { return .lastName }
            if has("city", "town", "location") { return .city }
            if has("country") { return .country }
            if has("street", "address") { return .street }
            if has("zip", "postal", "postcode") { return .postalCode }
            if has("color", "colour") { return .colour }
            if has("uuid", "guid") { return .uuidText }
            if has("title", "subject", "headline") { return .title }
            if has(
                "description", "notes", "note", "summary", "text", "body", "comment", "message", "content", "details",
                "bio")
            {
                return .sentence
            }
            if has("code", "sku", "reference") { return .code }
            if name == "name" || name.hasSuffix("name") || name == "fullname" {
                let entityName = entity.name.lowercased()
                let people = [
                    "person", "employee", "user", "author", "contact", "customer", "member", "student", "teacher",
                    "manager", "owner", "friend", "player", "patient", "artist", "flunky", "staff", "client", "people",
                ]
                if people.contains(where: { entityName.contains($0) })
                    || entity.ancestorIndices.isEmpty == false
                        && people.contains(where: { entityName.hasSuffix($0) })
                {
                    return .personName
                }
                if entityName.contains("department") || entityName.contains("team") || entityName.contains("division") {
                    return .departmentName
                }
                return .title
            }
            return .word
        case .undefined, .objectID, .composite:
            return nil
        }
    }

    /// A bound as a decimal number.
    private static func decimal(_ value: Value) -> Decimal? {
        switch value {
        case .decimal(let number): return number
        case .integer(let number): return Decimal(number)
        case .double(let number): return Decimal(string: String(number), locale: Locale(identifier: "en_US_POSIX"))
        default: return nil
        }
    }

    private static func empty(_ attribute: Attribute, _ entity: EntityDescription) -> GraftError {
        GraftError(
            .validationFailed, "the model's minimum is above its maximum, so no value can satisfy it",
            context: [.entity(entity.name), .key(attribute.name)])
    }
}

/// A pattern compiled by ICU (as Core Data matches values against it), kept for the whole fixture, with
/// the answers for texts already asked about (values repeat: names and emails come from word lists).
final class CompiledPattern: @unchecked Sendable {
    // NSRegularExpression is immutable once made and safe to use from several threads; `known` is
    // guarded by `lock`.
    private let regex: NSRegularExpression
    private var known: [String: Bool] = [:]
    private let lock = NSLock()
    /// How many answers are kept at most.
    private static let capacity = 100_000

    init?(_ pattern: String) {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return nil }
        self.regex = regex
    }

    /// Whether the whole of `text` matches (as `MATCHES` does).
    func matches(_ text: String) -> Bool {
        if let answer = lock.withLock({ known[text] }) { return answer }
        let range = NSRange(text.startIndex..., in: text)
        let answer = regex.firstMatch(in: text, options: [.anchored], range: range)?.range == range
        lock.withLock {
            if known.count < Self.capacity { known[text] = answer }
        }
        return answer
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }

    fileprivate var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
