import Foundation
import Testing
import TestSupport

/// Chaos as users run it on their own hosts: `shoal chaos` against three running nodes,
/// every fault through the nodes' own nemesis (`/_nemesis`), no lab and no root
/// (`scripts/chaos-hosts-local`: supervised node processes on loopback, restarted after a
/// crash fault as systemd restarts the Debian package's node). The run must converge with
/// every acknowledged write on every node, no phantom revision, one winner everywhere and
/// every fault lifted; with a client writer of each BLIP generation (Couchbase Lite 3's
/// CBMobile_3 and 4's CBMobile_4, played by Shoal nodes dialing as clients), cut off and
/// killed too, holding the nodes' winners at the end.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ChaosHostsTests {
    @Test func shoalChaosAgainstThreeSupervisedNodesPasses() async throws {
        let arguments = [
            "--nodes", "3", "--", "--duration", "25", "--rate", "20", "--seed", "5",
            "--faults", "partition,isolate,kill,pause,loss,oneway,slow,clock,heal,disk", "--fault-interval", "2,4",
            "--clients", "1",
        ]
        let outcome = try await offThePool { try ScriptRunner.run("chaos-hosts-local", arguments, timeout: 240) }
        if let failure = outcome?.failure("chaos-hosts-local") { Issue.record(Comment(rawValue: failure)) }
        if let outcome, outcome.status == 0 {
            #expect(outcome.output.contains("RESULT: PASS"))
            #expect(outcome.output.contains("faults injected:"))
            #expect(outcome.output.contains("ledger verify:      passed"))
            #expect(outcome.output.contains("every client holds the nodes' documents with the same winners"))
        }
    }
}
