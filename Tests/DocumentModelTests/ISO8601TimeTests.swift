import Foundation
import Testing
import TestSupport
@testable import DocumentModel

/// ISO 8601 UTC text written by hand, checked against Foundation's formatter.
@Suite struct ISO8601TimeTests {
    @Test func knownInstants() {
        #expect(ISO8601Time.string(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(ISO8601Time.string(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00Z")
        #expect(ISO8601Time.string(Date(timeIntervalSince1970: 1_796_000_000.25), milliseconds: true)
            == "2026-11-30T00:53:20.250Z")
        #expect(ISO8601Time.string(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
        #expect(ISO8601Time.string(Date(timeIntervalSince1970: -0.5), milliseconds: true) == "1969-12-31T23:59:59.500Z")
    }

    @Test func agreesWithFoundationsFormatter() {
        let whole = ISO8601DateFormatter()
        let precise = ISO8601DateFormatter()
        precise.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var rng = SplitMix64(seed: 8601)
        for _ in 0..<5000 {
            // 1970 to 2200, on whole milliseconds (what both forms can show exactly).
            let milliseconds = Double(rng.next() % 7_258_118_400_000)
            let date = Date(timeIntervalSince1970: milliseconds / 1000)
            #expect(ISO8601Time.string(date) == whole.string(from: date), "\(milliseconds)")
            #expect(ISO8601Time.string(date, milliseconds: true) == precise.string(from: date), "\(milliseconds)")
        }
    }
}
