/// Graft's own word lists, fixed in the source so that fixtures never change under a dependency.
/// Made-up or common words only: no real person is named, and every domain is one reserved for
/// examples (RFC 2606).
enum WordLists {
    static let firstNames = [
        "Ada", "Alan", "Alice", "Amara", "Ana", "Arjun", "Ava", "Ben", "Bruno", "Carla", "Chen", "Chloe", "Dara",
        "David", "Elena", "Emil", "Eva", "Farah", "Felix", "Grace", "Hana", "Hugo", "Ines", "Ivan", "Jade", "Jonas",
        "Kai", "Keiko", "Lara", "Leo", "Lina", "Luca", "Maya", "Mateo", "Mira", "Nadia", "Noah", "Nora", "Olga",
        "Omar", "Paula", "Priya", "Quinn", "Rafael", "Rosa", "Sami", "Sara", "Sofia", "Tariq", "Tess", "Theo",
        "Uma", "Vera", "Victor", "Wen", "Yara", "Yusuf", "Zara", "Zoe", "Milan",
    ]
    static let lastNames = [
        "Abe", "Alvarez", "Bauer", "Becker", "Brown", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad",
        "Hansen", "Ito", "Jensen", "Kaur", "Kim", "Kowalski", "Larsen", "Lopez", "Martin", "Meyer", "Moreau",
        "Nakamura", "Novak", "Okafor", "Olsen", "Park", "Patel", "Perez", "Petrov", "Quinn", "Rossi", "Santos",
        "Schmidt", "Silva", "Singh", "Smith", "Sousa", "Suzuki", "Tanaka", "Torres", "Varga", "Wagner", "Walker",
        "Weber", "Wilson", "Wong", "Yilmaz", "Zhang", "Ziegler",
    ]
    static let cities = [
        "Amsterdam", "Athens", "Austin", "Barcelona", "Berlin", "Bogotá", "Boston", "Cairo", "Cape Town",
        "Chicago", "Copenhagen", "Dublin", "Edinburgh", "Helsinki", "Istanbul", "Kyoto", "Lagos", "Lima", "Lisbon",
        "London", "Lyon", "Madrid", "Melbourne", "Montréal", "Mumbai", "Munich", "Nairobi", "Osaka", "Oslo",
        "Paris", "Porto", "Prague", "Seoul", "Stockholm", "Sydney", "Taipei", "Toronto", "Vienna", "Warsaw",
        "Zürich",
    ]
    static let countries = [
        "Argentina", "Australia", "Austria", "Brazil", "Canada", "Chile", "Denmark", "Egypt", "Finland", "France",
        "Germany", "Ghana", "Greece", "India", "Ireland", "Italy", "Japan", "Kenya", "Mexico", "Netherlands",
        "Norway", "Peru", "Poland", "Portugal", "Spain", "Sweden", "Switzerland", "Turkey", "United Kingdom",
        "United States",
    ]
    static let streets = [
        "Acacia Avenue", "Birch Lane", "Canal Street", "Cedar Road", "Elm Street", "Harbour Way", "High Street",
        "Hill Road", "Lake View", "Maple Drive", "Market Square", "Mill Lane", "Oak Street", "Park Avenue",
        "River Road", "Station Road", "Sunset Boulevard", "Willow Close",
    ]
    static let nouns = [
        "Atlas", "Aurora", "Beacon", "Cascade", "Comet", "Compass", "Delta", "Ember", "Falcon", "Harbor", "Horizon",
        "Juniper", "Keystone", "Lantern", "Meadow", "Meridian", "Nimbus", "Orbit", "Pioneer", "Quartz", "Summit",
        "Tidal", "Vertex", "Willow", "Zenith", "Cobalt", "Granite", "Maple", "Nova", "Onyx",
    ]
    static let departments = [
        "Accounting", "Design", "Engineering", "Facilities", "Finance", "Legal", "Logistics", "Marketing",
        "Operations", "Product", "Purchasing", "Quality", "Research", "Sales", "Security", "Support", "Training",
    ]
    static let lorem = [
        "alpha", "amber", "bright", "calm", "clear", "cloud", "crisp", "dawn", "deep", "early", "field", "fresh",
        "gentle", "golden", "green", "harbor", "light", "long", "lunar", "mild", "morning", "north", "ocean",
        "open", "quiet", "rapid", "river", "round", "silver", "simple", "small", "soft", "spring", "steady",
        "stone", "summer", "swift", "tall", "warm", "wide",
    ]
    static let domains = ["example.com", "example.org", "example.net"]
}
