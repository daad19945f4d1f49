import DocumentModel
import Foundation
import Synchronization

/// The last minutes of the node's metrics as the admin UI charts them: one sample a
/// second at most (each metric summed over its labels), taken while an admin page
/// follows `/_admin/events`, and sent to a page when it connects so that its charts
/// start with the minutes before it opened.
final class MetricsHistory: Sendable {
    struct Sample: Sendable {
        let time: Date
        let values: [String: Double]
    }

    private let samples = Mutex<[Sample]>([])
    let capacity: Int
    let spacing: TimeInterval

    init(capacity: Int = 600, spacing: TimeInterval = 0.9) {
        self.capacity = capacity
        self.spacing = spacing
    }

    /// Adds a sample of Prometheus `text` unless the last one is too recent.
    func record(_ text: String, at time: Date = Date()) {
        samples.withLock { samples in
            if let last = samples.last, time.timeIntervalSince(last.time) < spacing { return }
            samples.append(Sample(time: time, values: Self.totals(text)))
            if samples.count > capacity { samples.removeFirst(samples.count - capacity) }
        }
    }

    /// `[{"t": ms since 1970, "v": {name: total}}, …]`, oldest first.
    var json: JSON {
        .array(samples.withLock { $0 }.map { sample in
            [
                "t": .int(Int64(sample.time.timeIntervalSince1970 * 1000)),
                "v": .object(sample.values.mapValues { .double($0) }),
            ]
        })
    }

    /// Each metric's value summed over its labels (histogram buckets are left out).
    static func totals(_ text: String) -> [String: Double] {
        var totals: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]), value.isFinite else { continue }
            let name = line[..<space].prefix { $0 != "{" && $0 != " " }
            guard !name.isEmpty, !name.hasSuffix("_bucket") else { continue }
            totals[String(name), default: 0] += value
        }
        return totals
    }
}
