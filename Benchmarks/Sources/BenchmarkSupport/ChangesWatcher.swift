import Foundation
import NIOCore

/// Follows one node's `_changes?feed=longpoll` over a keep-alive connection, remembering
/// the last sequence seen, to time when a given document shows up there.
///
/// `ChangesWatcher` owns its connection and its `since`; one caller at a time.
public final class ChangesWatcher: @unchecked Sendable {
    private let client: KeepAliveHTTPClient
    private var since = "0"

    public init(node: NodeProcess) async throws {
        client = try await KeepAliveHTTPClient.connect(host: "127.0.0.1", port: node.adminPort)
    }

    /// Returns once the feed lists document `id` (changes before it are skipped).
    public func waitFor(_ id: String) async throws {
        while true {
            let response = try await client.request(.GET, "/db/_changes?feed=longpoll&timeout=30000&since=\(since)")
            let text = response.bodyString
            guard response.status == .ok else { throw BenchmarkFailure("_changes answered \(response.status)") }
            if let range = text.range(of: #""last_seq":"#) {
                since = String(text[range.upperBound...].prefix { $0 != "}" && $0 != "," })
                    .trimmingCharacters(in: CharacterSet(charactersIn: "\" \n"))
            }
            if text.contains(#""\#(id)""#) { return }
        }
    }

    public func close() async {
        await client.close()
    }
}
