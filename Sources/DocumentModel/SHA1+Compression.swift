// The SHA-1 compression function over whole 64-byte blocks.

extension SHA1 {
    @inline(__always)
    static func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 {
        (x << n) | (x >> (32 &- n))
    }

    /// Processes `blocks` consecutive 64-byte blocks starting at `input`.
    mutating func compress(_ input: UnsafeRawPointer, blocks: Int) {
        var s0 = h0, s1 = h1, s2 = h2, s3 = h3, s4 = h4
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 16) { buffer in
            let w = buffer.baseAddress!
            var p = input
            for _ in 0..<blocks {
                for i in 0..<16 {
                    w[i] = UInt32(bigEndian: p.loadUnaligned(fromByteOffset: i &* 4, as: UInt32.self))
                }
                var a = s0, b = s1, c = s2, d = s3, e = s4

                @inline(__always)
                func expand(_ t: Int) -> UInt32 {
                    let x = w[(t &+ 13) & 15] ^ w[(t &+ 8) & 15] ^ w[(t &+ 2) & 15] ^ w[t & 15]
                    let v = SHA1.rotl(x, 1)
                    w[t & 15] = v
                    return v
                }

                var t = 0
                while t < 16 {
                    let f = d ^ (b & (c ^ d))
                    let tmp = SHA1.rotl(a, 5) &+ f &+ e &+ 0x5A82_7999 &+ w[t]
                    e = d; d = c; c = SHA1.rotl(b, 30); b = a; a = tmp
                    t &+= 1
                }
                while t < 20 {
                    let f = d ^ (b & (c ^ d))
                    let tmp = SHA1.rotl(a, 5) &+ f &+ e &+ 0x5A82_7999 &+ expand(t)
                    e = d; d = c; c = SHA1.rotl(b, 30); b = a; a = tmp
                    t &+= 1
                }
                while t < 40 {
                    let f = b ^ c ^ d
                    let tmp = SHA1.rotl(a, 5) &+ f &+ e &+ 0x6ED9_EBA1 &+ expand(t)
                    e = d; d = c; c = SHA1.rotl(b, 30); b = a; a = tmp
                    t &+= 1
                }
                while t < 60 {
                    let f = (b & c) | (d & (b | c))
                    let tmp = SHA1.rotl(a, 5) &+ f &+ e &+ 0x8F1B_BCDC &+ expand(t)
                    e = d; d = c; c = SHA1.rotl(b, 30); b = a; a = tmp
                    t &+= 1
                }
                while t < 80 {
                    let f = b ^ c ^ d
                    let tmp = SHA1.rotl(a, 5) &+ f &+ e &+ 0xCA62_C1D6 &+ expand(t)
                    e = d; d = c; c = SHA1.rotl(b, 30); b = a; a = tmp
                    t &+= 1
                }
                s0 &+= a; s1 &+= b; s2 &+= c; s3 &+= d; s4 &+= e
                p += 64
            }
        }
        h0 = s0; h1 = s1; h2 = s2; h3 = s3; h4 = s4
    }
}
