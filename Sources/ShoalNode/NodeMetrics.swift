import CoreMetrics
import Prometheus
import Synchronization

/// A node's metrics registry (swift-prometheus), exported at `/_metrics` on the admin
/// port. HTTP metrics arrive through swift-metrics (`factory`); the node's own state
/// (mesh links, replication totals, conflict resolution, documents, sizes) is read from
/// its components at each scrape and set here, so the UI and Prometheus read the same
/// numbers.
final class NodeMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// swift-metrics into this node's registry (not the process-wide one: several nodes
    /// may share a process).
    let factory: PrometheusMetricsFactory
    private let lock = Mutex(())

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(50), .milliseconds(100),
            .milliseconds(500), .seconds(1), .seconds(5),
        ]
        self.factory = factory
    }

    /// One database's values of one metric.
    struct Sample {
        let name: String
        let help: String
        let kind: Kind
        let values: [(database: String, value: Int)]
        enum Kind { case gauge, counter }
    }

    /// Sets every sample, then renders the whole registry in Prometheus text format.
    func render(_ samples: [Sample]) -> String {
        lock.withLock { _ in
            for sample in samples {
                for (database, value) in sample.values {
                    let labels = [("db", database)]
                    switch sample.kind {
                    case .gauge:
                        registry.makeGauge(name: sample.name, labels: labels, help: sample.help).set(to: Double(value))
                    case .counter:
                        // A total kept by the component: the counter shows it as it is now.
                        let counter = registry.makeCounter(name: sample.name, labels: labels, help: sample.help)
                        counter.reset()
                        counter.increment(by: Int64(value))
                    }
                }
            }
            return registry.emitToString()
        }
    }
}
