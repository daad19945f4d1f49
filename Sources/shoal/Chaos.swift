import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `shoal chaos`: a seeded chaos run against running nodes on real hosts, given their admin
/// URLs: seeded writers (at a fixed rate with `--rate`) and a seeded nemesis through each
/// node's `/_nemesis` (which their configs must enable), then the checks (every
/// acknowledged write on every node, no phantom revision, one winner everywhere, every node
/// in step) and the report of `scripts/chaos`: it runs that engine (Python 3, installed
/// with Shoal in /usr/lib/shoal/chaos) with `--hosts`.
struct Chaos: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run seeded writers and a seeded nemesis against running nodes, then check they converged.",
        discussion: """
            Every fault goes through the nodes' own nemesis (POST /_nemesis on the admin port), which \
            is off unless a node's config says "nemesis": {"enabled": true}; every fault has a deadline \
            after which the node lifts it by itself. The run writes test documents to --db. A crash \
            fault (kill) needs nodes a supervisor restarts (the Debian package's systemd unit does). \
            See docs/operations.md "Chaos on your own hosts".
            """)

    @Argument(help: "The nodes' admin URLs, e.g. http://10.0.0.1:4985 (at least two).")
    var hosts: [String]

    @Option(help: "Seconds of chaos.")
    var duration: Double = 60

    @Option(help: "The seed of every choice (writers, faults, hosts).")
    var seed: Int = 1

    @Option(help: "Writes per second in all, on seeded timetables (default: closed-loop writers).")
    var rate: Double?

    @Option(help: "Fault kinds, comma-separated (partition,isolate,kill,pause,longpause,loss,oneway,flap,slow,clock,heal,disk) or none.")
    var faults: String?

    @Option(name: .customLong("fault-interval"), help: "Seconds between faults: A,B (uniform).")
    var faultInterval: String?

    @Option(name: .customLong("fault-max"), help: "Each fault's deadline in seconds (the nodes lift it then).")
    var faultMax: Double?

    @Option(help: "The database to write to.")
    var db = "db"

    @Option(help: "Seconds to wait for convergence after the final heal.")
    var wait: Double?

    @Option(help: "Client writers of each BLIP generation (Couchbase Lite 3 and 4, played by local Shoal nodes dialing as clients).")
    var clients: Int?

    func validate() throws {
        guard hosts.count >= 2 else { throw ValidationError("give the admin URLs of at least two nodes") }
        for url in hosts where !(url.hasPrefix("http://") || url.hasPrefix("https://")) {
            throw ValidationError("\(url) is not an http:// or https:// admin URL")
        }
    }

    func run() throws {
        guard let engine = Self.engine() else {
            throw ValidationError("the chaos engine is not installed (looked in /usr/lib/shoal/chaos and beside this binary's source tree; SHOAL_CHAOS_ENGINE names it)")
        }
        guard let python = Self.python() else { throw ValidationError("python3 is not installed") }
        var arguments = [python, engine, "--hosts", hosts.joined(separator: ","), "--duration", "\(duration)",
                         "--seed", "\(seed)", "--db", db]
        if let rate { arguments += ["--rate", "\(rate)"] }
        if let faults { arguments += ["--faults", faults] }
        if let faultInterval { arguments += ["--fault-interval", faultInterval] }
        if let faultMax { arguments += ["--fault-max", "\(faultMax)"] }
        if let wait { arguments += ["--wait", "\(wait)"] }
        if let clients { arguments += ["--clients", "\(clients)"] }
        // The client writers run this very binary.
        setenv("SHOAL_BIN", URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path, 0)
        // The engine takes over this process (its exit status is the run's).
        let argv = arguments.map { strdup($0) } + [nil]
        execv(python, argv)
        throw ValidationError("could not run \(python): \(String(cString: strerror(errno)))")
    }

    /// The engine: `SHOAL_CHAOS_ENGINE`, the installed one, or `scripts/chaos` of the source
    /// tree this binary was built in.
    static func engine() -> String? {
        let files = FileManager.default
        if let given = ProcessInfo.processInfo.environment["SHOAL_CHAOS_ENGINE"] {
            return files.isReadableFile(atPath: given) ? given : nil
        }
        var candidates = ["/usr/lib/shoal/chaos/chaos"]
        var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(directory.appendingPathComponent("scripts/chaos").path)
            directory.deleteLastPathComponent()
        }
        return candidates.first { files.isReadableFile(atPath: $0) }
    }

    static func python() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":") + ["/usr/bin"]).map { "\($0)/python3" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
