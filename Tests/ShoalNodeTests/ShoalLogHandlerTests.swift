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

/// Journal detection: `JOURNAL_STREAM` must name the very file stderr is.
struct ShoalLogHandlerJournalTests {
    @Test func detectsTheJournalStreamByDeviceAndInode() throws {
        let path = NSTemporaryDirectory() + "shoal-journal-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(path, O_CREAT | O_RDWR, 0o600)
        #expect(fd >= 0)
        defer { close(fd); unlink(path) }
        var info = stat()
        #expect(fstat(fd, &info) == 0)
        let matching = ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"]
        #expect(ShoalLogHandler.detectFormat(environment: matching, descriptor: fd) == .journal)
        #expect(ShoalLogHandler.detectFormat(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino + 1)"], descriptor: fd) == .plain)
        #expect(ShoalLogHandler.detectFormat(environment: ["JOURNAL_STREAM": "garbage"], descriptor: fd) == .plain)
        #expect(ShoalLogHandler.detectFormat(environment: [:], descriptor: fd) == .plain)
    }

    @Test func prioritiesFollowSyslog() {
        #expect(ShoalLogHandler.syslogPriority(.critical) == 2)
        #expect(ShoalLogHandler.syslogPriority(.error) == 3)
        #expect(ShoalLogHandler.syslogPriority(.warning) == 4)
        #expect(ShoalLogHandler.syslogPriority(.notice) == 5)
        #expect(ShoalLogHandler.syslogPriority(.info) == 6)
        #expect(ShoalLogHandler.syslogPriority(.debug) == 7)
    }
}
