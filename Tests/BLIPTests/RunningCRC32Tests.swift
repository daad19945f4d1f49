import CCRC32
import Testing
import TestSupport

@testable import BLIP

/// The checksum BLIP frames carry: the folded CRC-32 equals zlib's and a bitwise one at
/// every length around the 16- and 64-byte steps, from every alignment, whole or fed in
/// pieces (byte by byte included).
struct RunningCRC32Tests {
    private static func running(_ pieces: [ArraySlice<UInt8>]) -> UInt32 {
        var crc = RunningCRC32()
        for piece in pieces { crc.update(piece) }
        return crc.value
    }

    @Test func equalsZlibAndABitwiseCRCAtEveryLengthAndAlignment() {
        var generator = SeededGenerator(seed: 32)
        let data = generator.bytes(1200)
        let lengths = Array(0...300) + [511, 512, 513, 1023, 1024, 1025, 1180]
        for offset in 0..<16 {
            for length in lengths where offset + length <= data.count {
                let bytes = data[offset..<(offset + length)]
                let expected = RawBLIP.crc32(Array(bytes))
                let zlib = bytes.withUnsafeBufferPointer { shoal_crc32_zlib(0, $0.baseAddress, $0.count) }
                #expect(zlib == expected, "zlib, \(length) bytes at \(offset)")
                #expect(Self.running([bytes]) == expected, "\(length) bytes at \(offset)")
            }
        }
    }

    @Test func continuesAcrossPieces() {
        var generator = SeededGenerator(seed: 33)
        for _ in 0..<300 {
            let data = generator.bytes(Int.random(in: 0...2000, using: &generator))
            var cuts = (0..<Int.random(in: 0...5, using: &generator)).map { _ in Int.random(in: 0...data.count, using: &generator) }
            cuts = ([0] + cuts.sorted() + [data.count])
            let pieces = zip(cuts, cuts.dropFirst()).map { data[$0..<$1] }
            #expect(Self.running(pieces) == RawBLIP.crc32(data))
        }
    }

    @Test func byteByByteEqualsWhole() {
        var generator = SeededGenerator(seed: 34)
        let data = generator.bytes(777)
        #expect(Self.running(data.indices.map { data[$0...$0] }) == Self.running([data[...]]))
        #expect(Self.running([data[...]]) == RawBLIP.crc32(data))
    }

    /// Which path ran is reported (the equality tests above cover the folding on a CPU
    /// that has PCLMULQDQ, as every x86-64 server since 2010 does).
    @Test func reportsWhetherItFolds() {
        let accelerated = shoal_crc32_is_accelerated()
        #expect(accelerated == 0 || accelerated == 1)
        #if arch(x86_64)
        print("shoal_crc32 folds with PCLMULQDQ: \(accelerated == 1)")
        #endif
    }
}
