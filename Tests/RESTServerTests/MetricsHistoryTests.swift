import DocumentModel
import Foundation
@testable import RESTServer
import Testing

/// The admin UI's metric samples: totals per metric over its labels (no histogram
/// buckets), at most one a `spacing`, the oldest dropped beyond `capacity`.
@Suite struct MetricsHistoryTests {
    static let text = """
        # HELP shoal_http_requests_total Requests.
        # TYPE shoal_http_requests_total counter
        shoal_http_requests_total{method="GET",status="200"} 7
        shoal_http_requests_total{method="PUT",status="201"} 3
        shoal_http_request_duration_seconds_bucket{le="+Inf"} 10
        shoal_http_request_duration_seconds_sum 0.25
        shoal_documents{db="db"} 42
        shoal_broken_line
        """

    @Test func totalsSumLabelsAndSkipBuckets() {
        let totals = MetricsHistory.totals(Self.text)
        #expect(totals == [
            "shoal_http_requests_total": 10, "shoal_http_request_duration_seconds_sum": 0.25, "shoal_documents": 42,
        ])
    }

    @Test func samplesAreSpacedAndBounded() {
        let history = MetricsHistory(capacity: 3, spacing: 1)
        let start = Date(timeIntervalSince1970: 1_000)
        for second in [0.0, 0.5, 1, 2, 3] { history.record(Self.text, at: start.addingTimeInterval(second)) }
        let times = history.json.arrayValue?.compactMap { $0["t"]?.intValue } ?? []
        #expect(times == [1_001_000, 1_002_000, 1_003_000])
        #expect(history.json[0]?["v"]?["shoal_documents"] == 42)
    }
}
