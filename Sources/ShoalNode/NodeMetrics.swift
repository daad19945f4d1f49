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
    /// The per-peer gauges set at the last scrape, by name, database and peer: a peer gone
    /// since (or a value no longer known) is removed from the registry.
    private let peerGauges = Mutex<[String: Prometheus.Gauge]>([:])

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

    /// A metric's full name (no unit suffix added) and help text.
    static func descriptor(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    /// One metric's values per database and mesh peer (nil: not known, not exported).
    struct PeerSample {
        let name: String
        let help: String
        let values: [(database: String, peer: String, value: Int?)]
    }

    /// Sets every sample (gauges per database and peer from `peers`), then renders the
    /// whole registry in Prometheus text format.
    func render(peers: [PeerSample] = [], _ samples: [Sample]) -> String {
        peerGauges.withLock { gauges in
            var current: [String: Prometheus.Gauge] = [:]
            for sample in peers {
                for (database, peer, value) in sample.values {
                    guard let value else { continue }
                    let gauge = registry.makeGauge(descriptor: Self.descriptor(sample.name, sample.help), labels: [("db", database), ("peer", peer)])
                    gauge.set(to: Double(value))
                    current["\(sample.name)|\(database)|\(peer)"] = gauge
                }
            }
            for (key, gauge) in gauges where current[key] == nil { registry.unregisterGauge(gauge) }
            gauges = current
            for sample in samples {
                for (database, value) in sample.values {
                    let labels = [("db", database)]
                    switch sample.kind {
                    case .gauge:
                        registry.makeGauge(descriptor: Self.descriptor(sample.name, sample.help), labels: labels).set(to: Double(value))
                    case .counter:
                        // A total kept by the component: the counter shows it as it is now.
                        let counter = registry.makeCounter(descriptor: Self.descriptor(sample.name, sample.help), labels: labels)
                        counter.reset()
                        counter.increment(by: Int64(value))
                    }
                }
            }
            return registry.emitToString()
        }
    }

    /// Counts one fault the nemesis injected, by kind.
    func nemesisApplied(kind: String) {
        registry.makeCounter(
            descriptor: Self.descriptor("shoal_nemesis_faults_total", "Faults the nemesis injected on request, by kind."),
            labels: [("kind", kind)]
        ).increment()
    }

    /// Sets how many faults of each kind the nemesis has in effect.
    func nemesisActive(_ counts: [String: Int]) {
        for (kind, count) in counts {
            registry.makeGauge(
                descriptor: Self.descriptor("shoal_nemesis_faults_active", "Faults the nemesis has in effect now, by kind."),
                labels: [("kind", kind)]
            ).set(to: Double(count))
        }
    }
}
