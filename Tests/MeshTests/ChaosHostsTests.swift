import Foundation
import Testing
import TestSupport

/// Chaos as users run it on their own hosts: `shoal chaos` against three running nodes,
/// every fault through the nodes' own nemesis (`/_nemesis`), no lab and no root
/// (`scripts/chaos-hosts-local`: supervised node processes on loopback, restarted after a
/// crash fault as systemd restarts the Debian package's node). Each run must converge with
/// every acknowledged write on every node, no phantom revision, one winner everywhere and
/// every fault lifted.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ChaosHostsTests {
    static func run(_ arguments: [String], expecting lines: [String]) async throws {
        let outcome = try await offThePool { try ScriptRunner.run("chaos-hosts-local", arguments, timeout: 240) }
        if let failure = outcome?.failure("chaos-hosts-local") { Issue.record(Comment(rawValue: failure)) }
        if let outcome, outcome.status == 0 {
            for line in ["RESULT: PASS", "faults injected:", "ledger verify:      passed"] + lines {
                #expect(outcome.output.contains(line), "no '\(line)' in the report")
            }
        }
    }

    /// Every fault kind, partitions with conflicting edits on both sides included.
    @Test func shoalChaosAgainstThreeSupervisedNodesPasses() async throws {
        try await Self.run([
            "--nodes", "3", "--", "--duration", "25", "--rate", "20", "--seed", "5",
            "--faults", "partition,isolate,kill,pause,loss,oneway,slow,clock,heal,disk", "--fault-interval", "2,4",
        ], expecting: [])
    }

    /// A client writer of each BLIP generation (Couchbase Lite 3's CBMobile_3 and 4's
    /// CBMobile_4, played by Shoal nodes dialing as clients), cut off and killed too: what
    /// they stored reaches every node, and they end with the nodes' winners (also of the
    /// shared documents whose conflicts the nodes resolved).
    @Test func clientWritersOfBothGenerationsWriteThroughTheChaos() async throws {
        try await Self.run([
            "--nodes", "3", "--", "--duration", "25", "--rate", "20", "--seed", "6",
            "--faults", "partition,isolate,kill,pause,loss,oneway,slow,clock,heal,disk", "--fault-interval", "2,4",
            "--clients", "1",
        ], expecting: ["every client holds the nodes' documents with the same winners"])
    }
}
