// DiscoveryProbe: runs one ServiceDiscovery and prints its events, one per line, for
// scripts/discovery-netns-test.sh. Not part of the product.
//
//   DiscoveryProbe --id NODE --group GROUP [--port 4984] [--db a,b] [--retry-ms 2000]
//                  [--resolve-only a,b [--resolve-later c,d]] [--rest-ms MS]
//
// --resolve-only resolves on demand: only the peers listed (instance names) are resolved,
// every browsed peer is printed BROWSED; SIGHUP switches to the --resolve-later list.
// --rest-ms sets DiscoveryConfiguration.browseRestsAfter (the browse and answered lookups
// rest that long after the browse opened; SIGUSR1's refresh() opens them again).
//
// Output lines (times are wall-clock milliseconds since the epoch, comparable across hosts):
//   <ms> START <id>
//   <ms> BROWSED <nodeID>
//   <ms> ADDED <nodeID> <host> <port> <db,db> <proto>
//   <ms> UPDATED <nodeID> <host> <port> <db,db> <proto>
//   <ms> REMOVED <nodeID>
//   <ms> UNAVAILABLE <reason>
//   <ms> AVAILABLE
//   <ms> STOPPED
// Signals: SIGTERM/SIGINT stop cleanly (goodbye) and exit 0; SIGUSR1 calls refresh();
// SIGUSR2 advertises the databases plus "extra".
import Discovery
import Dispatch
import Foundation
import Logging

func milliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data("\(milliseconds()) \(line)\n".utf8))
}

var options: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard flag.hasPrefix("--"), let value = arguments.popFirst() else {
        FileHandle.standardError.write(Data("usage: DiscoveryProbe --id ID --group G [--port P] [--db a,b] [--retry-ms MS]\n".utf8))
        exit(2)
    }
    options[String(flag.dropFirst(2))] = value
}
guard let nodeID = options["id"], let group = options["group"] else {
    FileHandle.standardError.write(Data("DiscoveryProbe: --id and --group are required\n".utf8))
    exit(2)
}
let databases = (options["db"] ?? "db").split(separator: ",").map(String.init)
var configuration = DiscoveryConfiguration(
    nodeID: nodeID,
    group: group,
    port: Int(options["port"] ?? "4984") ?? 4984,
    databases: databases
)
if let retry = options["retry-ms"].flatMap(Int.init) {
    configuration.retryInterval = .milliseconds(retry)
}
func nameSet(_ option: String?) -> Set<String>? {
    option.map { Set($0.split(separator: ",").map(String.init)) }
}
if let rest = options["rest-ms"].flatMap(Int.init) {
    configuration.browseRestsAfter = .milliseconds(rest)
}
let resolveOnly = nameSet(options["resolve-only"])
let resolveLater = nameSet(options["resolve-later"]) ?? []
configuration.resolveOnDemand = resolveOnly != nil

LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = ProcessInfo.processInfo.environment["PROBE_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .info
    return handler
}

let discovery = ServiceDiscovery(configuration: configuration, logger: Logger(label: "Discovery"))
let events = discovery.events()

func describe(_ peer: DiscoveredPeer) -> String {
    "\(peer.nodeID) \(peer.host) \(peer.port) \(peer.databases.joined(separator: ",")) \(peer.protocolVersion ?? "-")"
}

for signalNumber in [SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGHUP] { signal(signalNumber, SIG_IGN) }
var sources: [DispatchSourceSignal] = []
for signalNumber in [SIGTERM, SIGINT] {
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
    source.setEventHandler { @Sendable in
        Task {
            await discovery.stop()
            say("STOPPED")
            exit(0)
        }
    }
    source.resume()
    sources.append(source)
}
let refreshSource = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global())
refreshSource.setEventHandler { @Sendable in
    say("REFRESH")
    discovery.refresh()
}
refreshSource.resume()
let updateSource = DispatchSource.makeSignalSource(signal: SIGUSR2, queue: .global())
updateSource.setEventHandler { @Sendable in
    say("UPDATE")
    discovery.update(databases: databases + ["extra"])
}
updateSource.resume()
let resolveSource = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
resolveSource.setEventHandler { @Sendable in
    say("RESOLVE \(resolveLater.sorted().joined(separator: ","))")
    discovery.resolve(only: resolveLater)
}
resolveSource.resume()

say("START \(nodeID)")
discovery.start()
if let resolveOnly { discovery.resolve(only: resolveOnly) }
for await event in events {
    switch event {
    case .browsed(let id): say("BROWSED \(id)")
    case .added(let peer): say("ADDED \(describe(peer))")
    case .updated(let peer): say("UPDATED \(describe(peer))")
    case .removed(let id): say("REMOVED \(id)")
    case .daemonUnavailable(let reason): say("UNAVAILABLE \(reason)")
    case .daemonAvailable: say("AVAILABLE")
    }
}
// The stream ends only after stop(); the signal handler exits.
while true { sleep(60) }
