import Synchronization

/// HTTP request counters and a latency histogram, shared by both listeners, in
/// Prometheus text format.
public final class RequestMetrics: Sendable {
    /// Upper bounds of the latency buckets, in seconds.
    static let buckets: [Double] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5]

    private struct State {
        var counts: [String: Int] = [:]   // "method status" → count
        var bucketCounts = [Int](repeating: 0, count: RequestMetrics.buckets.count)
        var total = 0
        var sum = 0.0
    }
    private let state = Mutex(State())

    public init() {}

    func record(method: String, status: Int, seconds: Double) {
        state.withLock { state in
            state.counts["\(method) \(status)", default: 0] += 1
            for (index, bound) in Self.buckets.enumerated() where seconds <= bound { state.bucketCounts[index] += 1 }
            state.total += 1
            state.sum += seconds
        }
    }

    /// The metrics as Prometheus text lines.
    public var prometheusText: String {
        let snapshot = state.withLock { $0 }
        var lines = [
            "# HELP shoal_http_requests_total HTTP requests answered, by method and status.",
            "# TYPE shoal_http_requests_total counter",
        ]
        for key in snapshot.counts.keys.sorted() {
            let parts = key.split(separator: " ")
            lines.append("shoal_http_requests_total{method=\"\(parts[0])\",status=\"\(parts[1])\"} \(snapshot.counts[key]!)")
        }
        lines += [
            "# HELP shoal_http_request_duration_seconds HTTP request latency.",
            "# TYPE shoal_http_request_duration_seconds histogram",
        ]
        for (index, bound) in Self.buckets.enumerated() {
            lines.append("shoal_http_request_duration_seconds_bucket{le=\"\(bound)\"} \(snapshot.bucketCounts[index])")
        }
        lines.append("shoal_http_request_duration_seconds_bucket{le=\"+Inf\"} \(snapshot.total)")
        lines.append("shoal_http_request_duration_seconds_sum \(snapshot.sum)")
        lines.append("shoal_http_request_duration_seconds_count \(snapshot.total)")
        return lines.joined(separator: "\n") + "\n"
    }
}
