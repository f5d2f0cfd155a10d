import Foundation
import GraftCore
import Testing

@Suite struct Base64Tests {
    @Test func agreesWithFoundationAndReadsBack() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<100 {
            let data = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let text = Base64.encode(data)
            #expect(text == data.base64EncodedString())
            #expect(text.count == Base64.encodedLength(length))
            #expect(Base64.decode(text) == data)
            // Padding may be left out.
            #expect(Base64.decode(String(text.prefix { $0 != "=" })) == data)
        }
    }

    @Test func refusesWhatNoEncoderWrites() {
        for bad in ["@@@", "QQ=Q", "QQ===", "Q", "QUJD\u{1}", "=QUJD", "QUJ=D"] {
            #expect(Base64.decode(bad) == nil, "\(bad)")
        }
        #expect(Base64.decode(" QU\nJD\tRA== ") == Data("ABCD".utf8))
        #expect(Base64.decode("") == Data())
    }
}
