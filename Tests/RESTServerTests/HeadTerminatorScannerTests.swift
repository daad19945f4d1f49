import Testing

@testable import RESTServer

/// The end of a request head found in any split of the bytes, byte by byte and at once.
@Suite struct HeadTerminatorScannerTests {
    static let heads: [(String, Int?)] = [
        ("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27),
        ("GET / HTTP/1.1\nHost: x\n\n", 24),
        ("GET / HTTP/1.1\r\nHost: x\n\r\n", 26),
        ("GET / HTTP/1.1\r\nHost: x\r\n", nil),
        ("GET / HTTP/1.1\r\nHost: x\r\n\r", nil),
        ("GET / HTTP/1.1\r\nHost: x\r\r\n", nil),
        ("\r\r\r\r", nil),
        ("", nil),
    ]

    @Test(arguments: heads) func allAtOnce(text: String, end: Int?) {
        var scanner = HeadTerminatorScanner()
        let found = scanner.feed(Array(text.utf8))
        #expect(found == (end != nil))
    }

    @Test(arguments: heads) func byteByByte(text: String, end: Int?) {
        var scanner = HeadTerminatorScanner()
        var foundAt: Int?
        for (index, byte) in text.utf8.enumerated() where foundAt == nil {
            if scanner.feed([byte]) { foundAt = index + 1 }
        }
        #expect(foundAt == end)
        #expect(scanner.found == (end != nil))
        #expect(scanner.headLength == end ?? text.utf8.count)
    }

    @Test func staysFoundAfterMoreBytes() {
        var scanner = HeadTerminatorScanner()
        let head = scanner.feed(Array("GET / HTTP/1.1\r\n\r\n".utf8))
        let more = scanner.feed(Array("body bytes".utf8))
        #expect(head && more)
    }
}
