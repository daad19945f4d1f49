import CoreMetrics
import Synchronization

/// HTTP request metrics of both listeners, through swift-metrics: a counter per method
/// and status (`shoal_http_requests_total`) and a latency timer
/// (`shoal_http_request_duration_seconds`). The factory decides where they go (the node
/// gives a Prometheus registry of its own, exported at `/_metrics`).
public final class RequestMetrics: Sendable {
    private let factory: any MetricsFactory
    private let counters = Mutex<[String: Counter]>([:])
    private let latency: Timer

    public init(factory: any MetricsFactory) {
        self.factory = factory
        latency = Timer(label: "shoal_http_request_duration_seconds", dimensions: [], factory: factory)
    }

    func record(method: String, status: Int, duration: Duration) {
        let key = "\(method) \(status)"
        let counter = counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(
                label: "shoal_http_requests_total", dimensions: [("method", method), ("status", String(status))],
                factory: factory)
            counters[key] = counter
            return counter
        }
        counter.increment()
        latency.recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }
}
