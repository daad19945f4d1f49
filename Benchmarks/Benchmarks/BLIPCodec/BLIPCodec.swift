// BLIP codec throughput (pure, no I/O): encoding and decoding the frames of 1 KB
// messages, with and without compression.
//
// Each message is a replication-style `rev` request: four properties and a 1 KB
// JSON body, which fits in one frame. Every benchmark handles 1000 frames per
// iteration (scalingFactor .kilo), so the throughput shown is frames per second.
// Encoding keeps one encoder (and its deflate context) across iterations, as a
// connection does. Decoding replays 1000 frames produced by one encoder through
// a fresh decoder each iteration (a compressed stream must be decoded from its
// start).

import BLIP
import Benchmark

/// A deterministic 1 KB JSON document body.
func sampleBody(index: Int) -> [UInt8] {
    var text = "{\"_id\":\"order-\(index)\",\"type\":\"order\",\"customer\":\"cust-0007341\","
        + "\"status\":\"awaiting_shipment\",\"currency\":\"EUR\",\"total\":1842.37,\"items\":["
    var item = 0
    while text.utf8.count < 1000 {
        text += "{\"sku\":\"SKU-\(1000 + item * 7)\",\"qty\":\(item % 5 + 1),\"price\":\(item * 3 + 9).5},"
        item += 1
    }
    var bytes = Array(text.utf8.prefix(1021))
    bytes.append(contentsOf: Array("]}".utf8))
    while bytes.count < 1024 {
        bytes.insert(UInt8(ascii: " "), at: bytes.count - 2)
    }
    return bytes
}

func sampleMessage(index: Int, compressed: Bool) -> BLIPMessage {
    BLIPMessage(
        profile: "rev",
        properties: [("id", "order-\(index)"), ("rev", "1-\(index)abcdef0123456789"), ("sequence", "\(index)")],
        body: sampleBody(index: index),
        compressed: compressed
    )
}

/// 1000 frames of consecutive requests (numbers 1…1000) from one encoder.
func encodedStream(compressed: Bool) -> [[UInt8]] {
    var encoder = BLIPMessageEncoder()
    var frames: [[UInt8]] = []
    frames.reserveCapacity(1000)
    for index in 1...1000 {
        frames.append(contentsOf: encoder.encode(sampleMessage(index: index, compressed: compressed),
                                                 type: .request, number: UInt64(index)))
    }
    precondition(frames.count == 1000)
    return frames
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 3,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 1000
    )

    for compressed in [false, true] {
        let label = compressed ? "compressed" : "plain"
        let messages = (1...1000).map { sampleMessage(index: $0, compressed: compressed) }
        let stream = encodedStream(compressed: compressed)

        Benchmark("blip-encode-1KB-\(label) (frames)") { benchmark in
            var encoder = BLIPMessageEncoder()
            var number: UInt64 = 0
            for index in benchmark.scaledIterations {
                number += 1
                blackHole(encoder.encode(messages[index % messages.count], type: .request, number: number))
            }
        }

        Benchmark("blip-decode-1KB-\(label) (frames)") { benchmark in
            var decoder = BLIPMessageDecoder()
            for index in benchmark.scaledIterations {
                do {
                    blackHole(try decoder.decode(stream[index % stream.count]))
                } catch {
                    benchmark.error("decode failed: \(error)")
                    return
                }
            }
        }
    }
}
