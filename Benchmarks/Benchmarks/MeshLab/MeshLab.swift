// Many nodes as users run them on a LAN: `Benchmarks/scripts/mesh-lab` brings up a mesh
// of 48 release `shoal serve` processes, each in a network namespace of its own with its
// own avahi-daemon (scripts/netlab), and measures
//
//   start → everywhere     from the first node's start until a document written on node 1
//                          (as soon as every node answers) is on all 48;
//   heal → converged       the lab split into 4 groups (every pair of groups cut), 100 new
//                          documents written in each group, every group holding its own;
//                          then the heal, until every node has all 400;
//   idle RSS / CPU         of each node of the converged mesh, over 10 s.
//
// It needs root and avahi-daemon; without root (or with SHOAL_MESH_LAB_NODES=0) the
// benchmark reports nothing. SHOAL_MESH_LAB_NODES sets the size (default 48). The
// baseline in the same run is the partition's spread inside each group (the same mesh,
// the same documents, before the heal): what a write costs to cross a side of the mesh.

import Benchmark
import BenchmarkSupport
import Foundation

let startToEverywhere = BenchmarkMetric.custom("start → everywhere ms", polarity: .prefersSmaller, useScalingFactor: false)
let writeToEverywhere = BenchmarkMetric.custom("write → everywhere ms", polarity: .prefersSmaller, useScalingFactor: false)
let groupSpread = BenchmarkMetric.custom("partition: group spread ms", polarity: .prefersSmaller, useScalingFactor: false)
let healToConverged = BenchmarkMetric.custom("heal → converged ms", polarity: .prefersSmaller, useScalingFactor: false)
/// From the moment netlab lifted the partitions (its `lifted` event) rather than from the
/// start of `netlab heal`, whose own start takes seconds on a loaded machine.
let liftedToConverged = BenchmarkMetric.custom("lifted → converged ms", polarity: .prefersSmaller, useScalingFactor: false)
let idleRSS = BenchmarkMetric.custom("idle RSS MB (median)", polarity: .prefersSmaller, useScalingFactor: false)
let idleCPU = BenchmarkMetric.custom("idle CPU ms/s (median)", polarity: .prefersSmaller, useScalingFactor: false)

/// Runs the lab script once and returns its numbers.
func runMeshLab(nodes: Int) throws -> [String: Double] {
    let root = NodeProcess.rootDirectory
    let binary = try NodeProcess.releaseBinary()
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("mesh-lab-\(getpid()).json")
    let process = Process()
    process.executableURL = root.appendingPathComponent("Benchmarks/scripts/mesh-lab")
    process.arguments = ["--nodes", String(nodes), "--json", output.path]
    process.environment = NodeProcess.userEnvironment.merging(["SHOAL_BIN": binary]) { _, new in new }
    process.standardOutput = FileHandle.standardError
    try process.run()
    process.waitUntilExit()
    defer { try? FileManager.default.removeItem(at: output) }
    guard process.terminationStatus == 0 else { throw BenchmarkFailure("mesh-lab failed (\(process.terminationStatus))") }
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [String: Any] ?? [:]
    return object.compactMapValues { ($0 as? NSNumber)?.doubleValue }
}

let benchmarks: @Sendable () -> Void = {
    let nodes = Int(ProcessInfo.processInfo.environment["SHOAL_MESH_LAB_NODES"] ?? "") ?? 48
    guard nodes > 1, getuid() == 0 else { return }
    let metrics = [startToEverywhere, writeToEverywhere, groupSpread, healToConverged, liftedToConverged, idleRSS, idleCPU]
    Benchmark("mesh-lab-\(nodes)", configuration: .init(
        metrics: metrics, tags: ["nodes": String(nodes)],
        units: Dictionary(uniqueKeysWithValues: metrics.map { ($0, BenchmarkUnits.count) }),
        warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(900), maxIterations: 1
    )) { benchmark in
        let result = try runMeshLab(nodes: nodes)
        func milliseconds(_ key: String) -> Int { Int(((result[key] ?? .nan) * 1000).rounded()) }
        benchmark.measurement(startToEverywhere, milliseconds("start_to_everywhere_s"))
        benchmark.measurement(writeToEverywhere, milliseconds("write_to_everywhere_s"))
        benchmark.measurement(groupSpread, milliseconds("partition_group_spread_max_s"))
        benchmark.measurement(healToConverged, milliseconds("heal_to_converged_s"))
        benchmark.measurement(liftedToConverged, milliseconds("lifted_to_converged_s"))
        benchmark.measurement(idleRSS, Int((result["idle_rss_mb_p50"] ?? 0).rounded()))
        benchmark.measurement(idleCPU, Int((result["idle_cpu_ms_per_s_p50"] ?? 0).rounded()))
    }
}
