import ArgumentParser
import Foundation
import Logging
import ShoalNode

/// The `shoal` command: `shoal serve` (the default) runs a node.
@main
struct Shoal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shoal",
        abstract: "A peer-to-peer replication mesh node with a Sync Gateway compatible REST API.",
        version: ShoalVersion.string,
        subcommands: [Serve.self, Status.self, Replicate.self, Peers.self, Rekey.self, Keygen.self, Chaos.self],
        defaultSubcommand: Serve.self)
}
