import Foundation
import NIOCore
import NIOPosix

extension MeshManager {
    /// How long a probe waits for a peer's TCP handshake. A LAN answers in
    /// milliseconds; a host across a partition (packets dropped) never does.
    static let probeTimeout = TimeAmount.seconds(3)

    /// True when a TCP connection to the host and port of `url` (`ws://`, `wss://`)
    /// opens within `probeTimeout`; the connection is closed at once, nothing is sent.
    public static func tcpProbe(_ url: String) async -> Bool {
        guard let components = URLComponents(string: url), let host = components.host else { return false }
        let secure = components.scheme?.lowercased() == "wss" || components.scheme?.lowercased() == "https"
        let port = components.port ?? (secure ? 443 : 80)
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(probeTimeout)
                .connect(host: host, port: port).get()
            try? await channel.close()
            return true
        } catch {
            return false
        }
    }
}
