import Foundation
import Testing
import TestSupport

/// The mesh across simulated hosts (network namespaces with their own avahi-daemon, built by
/// `scripts/netlab`): runs `scripts/mesh-netns-test.sh` (real mDNS discovery, join, kill and
/// partition timings), a short `scripts/chaos` run (random writers and a seeded nemesis, then
/// convergence and the acknowledged-writes ledger) and a short fixed-rate one (`--rate`, no
/// faults) as subprocesses.
///
/// Each script exits 0 (pass), 1 (fail: recorded as an issue with the script's output) or 77
/// (cannot run here: not root, `ip`/`nft`/`avahi-daemon`/`dbus-daemon` missing, node binary not
/// built); on 77 the reason is printed and the test returns. This test itself only starts the
/// scripts; everything they run on the network runs inside the lab's namespaces.
@Suite("Mesh across simulated hosts (network namespaces)", .serialized, .timeLimit(.minutes(5)))
struct NetnsMeshTests {
    /// Runs a lab script. The suite runs these beside hundreds of other tests on two cores: the
    /// scripts' timing targets (measurements, see docs/netlab.md) get twice the time here;
    /// convergence and the ledger stay strict.
    static func run(_ script: String, _ arguments: [String], timeout: TimeInterval) throws -> ScriptRunner.Outcome? {
        let factor = ProcessInfo.processInfo.environment["MESH_TEST_FACTOR"] ?? "2"
        return try ScriptRunner.run(script, arguments, timeout: timeout, environment: ["MESH_TEST_FACTOR": factor])
    }

    /// 0 passes, 77 prints the skip reason, anything else is an issue.
    static func judge(_ script: String, _ outcome: ScriptRunner.Outcome?) {
        if let failure = outcome?.failure(script) { Issue.record(Comment(rawValue: failure)) }
    }

    // The scripts run for minutes: they are waited for off the cooperative pool.
    @Test func discoveryJoinKillAndPartitionTimings() async throws {
        Self.judge("mesh-netns-test.sh", try await offThePool { try Self.run("mesh-netns-test.sh", [], timeout: 150) })
    }

    @Test func shortChaosRunConvergesWithoutLostWrites() async throws {
        let arguments = ["--nodes", "3", "--duration", "40", "--seed", "1"]
        Self.judge("chaos", try await offThePool { try Self.run("chaos", arguments, timeout: 240) })
    }

    /// The open-loop writers (`--rate`, docs/netlab.md): three hosts, no faults, 30 write
    /// attempts/s on the writers' timetables for 15 s; converged and every acknowledged write on
    /// every node, as above. How late the slots went out is reported, not judged: this suite
    /// shares two cores with everything else.
    @Test func shortFixedRateRunConverges() async throws {
        let arguments = ["--nodes", "3", "--duration", "15", "--seed", "2", "--faults", "none", "--rate", "30"]
        let outcome = try await offThePool { try Self.run("chaos", arguments, timeout: 120) }
        Self.judge("chaos", outcome)
        if let outcome, outcome.status == 0 {
            #expect(outcome.output.contains("rate achieved:"), "chaos --rate printed no rate line")
        }
    }
}
