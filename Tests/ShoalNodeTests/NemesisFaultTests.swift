import BLIP
import DocumentModel
import Testing

@testable import ShoalNode

/// The nemesis's request values (`NemesisFault`): every kind parses with its settings,
/// anything wrong is refused with a reason, and active faults combine into link settings
/// whatever their order.
@Suite struct NemesisFaultTests {
    static let most = Duration.seconds(600)

    static func parse(_ text: String) throws(NemesisError) -> NemesisFault {
        try NemesisFault(json: try! JSON.parse(text), maxDuration: most)
    }

    @Test func everyKindParsesAndWritesBack() throws {
        let partition = try Self.parse(#"{"fault": "partition", "peers": ["n2", "n3"], "direction": "out", "duration": 12.5}"#)
        #expect(partition.kind == .partition && partition.peers == ["n2", "n3"] && partition.direction == .outbound)
        #expect(partition.duration == .milliseconds(12_500))
        let delay = try Self.parse(#"{"fault": "delay", "ms": 150, "jitter_ms": 20, "duration": 5}"#)
        #expect(delay.delay == .milliseconds(150) && delay.jitter == .milliseconds(20) && delay.peers == nil)
        let loss = try Self.parse(#"{"fault": "loss", "percent": 12.5, "peers": ["n4"], "duration": 5}"#)
        #expect(loss.lossPercent == 12.5)
        let clock = try Self.parse(#"{"fault": "clock", "offset_ms": -3600000, "duration": 5}"#)
        #expect(clock.clockOffset == .seconds(-3600))
        let full = try Self.parse(#"{"fault": "disk_full", "databases": ["db"], "duration": 5}"#)
        #expect(full.databases == ["db"])
        let crash = try Self.parse(#"{"fault": "crash"}"#)
        #expect(crash.duration == NemesisFault.crashDelay)
        for fault in [partition, delay, loss, clock, full, crash, try Self.parse(#"{"fault": "stall", "duration": 1}"#),
                      try Self.parse(#"{"fault": "pause", "duration": 1}"#)] {
            // What `GET /_nemesis` shows parses back to the same fault.
            var object = fault.json.objectValue!
            if fault.kind == .crash { object["duration"] = nil }
            #expect(try NemesisFault(json: .object(object), maxDuration: Self.most) == fault, "\(fault.json)")
        }
    }

    @Test func badRequestsAreRefusedWithAReason() {
        let cases: [(String, String)] = [
            (#"[]"#, "JSON object"),
            (#"{"fault": "meteor", "duration": 1}"#, "must be one of"),
            (#"{"fault": "stall"}"#, "\"duration\""),
            (#"{"fault": "stall", "duration": 0}"#, "\"duration\""),
            (#"{"fault": "stall", "duration": 601}"#, "max_duration"),
            (#"{"fault": "partition", "duration": 5}"#, "needs \"peers\""),
            (#"{"fault": "partition", "peers": [], "duration": 5}"#, "non-empty array"),
            (#"{"fault": "partition", "peers": ["a"], "direction": "sideways", "duration": 5}"#, "both, in or out"),
            (#"{"fault": "delay", "duration": 5}"#, "needs \"ms\""),
            (#"{"fault": "delay", "ms": 1e9, "duration": 5}"#, "\"ms\""),
            (#"{"fault": "loss", "percent": 150, "duration": 5}"#, "percent"),
            (#"{"fault": "clock", "offset_ms": 0, "duration": 5}"#, "non-zero"),
            (#"{"fault": "stall", "ms": 3, "duration": 5}"#, "not a setting of a stall"),
            (#"{"fault": "crash", "duration": 5}"#, "no duration"),
        ]
        for (text, reason) in cases {
            do {
                _ = try Self.parse(text)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.status == 400)
                #expect(error.reason.contains(reason), "\(text): \(error.reason)")
            }
        }
    }

    @Test func activeFaultsCombineInAnyOrder() throws {
        let faults = [
            try Self.parse(#"{"fault": "partition", "peers": ["b"], "duration": 5}"#),
            try Self.parse(#"{"fault": "partition", "peers": ["c"], "direction": "in", "duration": 5}"#),
            try Self.parse(#"{"fault": "delay", "ms": 100, "duration": 5}"#),
            try Self.parse(#"{"fault": "delay", "ms": 40, "jitter_ms": 30, "peers": ["b"], "duration": 5}"#),
            try Self.parse(#"{"fault": "loss", "percent": 5, "peers": ["c"], "duration": 5}"#),
            try Self.parse(#"{"fault": "clock", "offset_ms": 1000, "duration": 5}"#),
        ]
        let b = Nemesis.settings(faults, peer: "b")
        #expect(b == LinkFaults.Settings(cut: true, delay: .milliseconds(100), jitter: .milliseconds(30)))
        let c = Nemesis.settings(faults, peer: "c")
        #expect(c == LinkFaults.Settings(holdInbound: true, delay: .milliseconds(100), lossPercent: 5))
        #expect(Nemesis.settings(faults, peer: "d") == LinkFaults.Settings(delay: .milliseconds(100)))
        #expect(Nemesis.settings(faults.reversed(), peer: "b") == b)
        #expect(Nemesis.settings([try Self.parse(#"{"fault": "pause", "duration": 5}"#)], peer: "x")
            == LinkFaults.Settings(holdInbound: true, holdOutbound: true))
    }
}
