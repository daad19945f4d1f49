import Foundation
import Testing
@testable import ShoalNode

/// The log line's timestamp, written digit by digit: same shape as Sync Gateway's
/// (`2026-11-22T10:00:00.123Z`, UTC) and the current time.
struct ShoalLogHandlerTests {
    @Test func timestampIsISO8601UTCWithMilliseconds() throws {
        let before = Date()
        var line: [UInt8] = []
        ShoalLogHandler.appendTimestamp(to: &line)
        let after = Date()
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil, "\(text)")
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let parsed = try #require(parser.date(from: text))
        #expect(parsed >= before.addingTimeInterval(-0.001) && parsed <= after, "\(text) not between \(before) and \(after)")
    }

    @Test func timestampAppendsToWhatIsThere() {
        var line = Array("x".utf8)
        ShoalLogHandler.appendTimestamp(to: &line)
        #expect(line.count == 1 + 24)
        #expect(line.first == UInt8(ascii: "x"))
    }
}
