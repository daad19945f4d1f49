/// The canonical JSON encoder (ARCHITECTURE.md §2); owns the byte-level output
/// rules and a growable output buffer.
///
/// - Objects: keys sorted by their UTF-8 bytes (not by `String` `<`).
/// - Strings: `"` and `\` escaped; `\b \f \n \r \t` short forms; other control
///   characters below 0x20 as `\u00xx` (lowercase hex); everything else,
///   including `/`, DEL and non-ASCII, as raw UTF-8.
/// - Numbers: `.int` as plain decimal digits. A `.double` that is integral and
///   fits `Int64` is written exactly like the equal `.int` (so equal values have
///   equal encodings; `-0.0` is `0`). Any other finite double is written as
///   ECMAScript's `Number.prototype.toString` does (the format of RFC 8785):
///   shortest round-trip digits, plain notation for 1e-6 ≤ |v| < 1e21, otherwise
///   exponent notation with an explicit sign and no leading zeros (`1e-7`,
///   `1.5e+300`). NaN and infinities, which JSON cannot express, are `null`.
struct CanonicalJSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 512) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// The bytes written so far.
    var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            buffer.baseAddress!.initialize(from: base, count: count)
            initialized = count
        }
    }

    /// Calls `body` with the bytes written so far (valid only during the call).
    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        body(UnsafeBufferPointer(start: base, count: count))
    }

    /// Appends the bytes written so far to `out`.
    func appendBytes(to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: base, count: count))
    }

    // MARK: Raw output

    @inline(__always)
    mutating func reserve(_ n: Int) {
        if count + n > capacity { grow(count + n) }
    }

    @inline(never)
    private mutating func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count &+= 1
    }

    @inline(__always)
    mutating func append(_ a: UInt8, _ b: UInt8) {
        reserve(2)
        base[count] = a
        base[count &+ 1] = b
        count &+= 2
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let src = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + count).initialize(from: src, count: bytes.count)
        count &+= bytes.count
    }

    @inline(__always)
    mutating func appendASCII(_ s: StaticString) {
        append(UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    // MARK: Values

    mutating func write(_ value: JSON) {
        switch value {
        case .null:
            appendASCII("null")
        case .bool(let b):
            appendASCII(b ? "true" : "false")
        case .int(let i):
            writeInt(i)
        case .double(let d):
            writeDouble(d)
        case .string(let s):
            writeString(s)
        case .array(let elements):
            append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { append(UInt8(ascii: ",")) }
                first = false
                write(element)
            }
            append(UInt8(ascii: "]"))
        case .object(let members):
            writeObject(members)
        }
    }

    mutating func writeMember(_ key: String, _ value: JSON) {
        writeString(key)
        append(UInt8(ascii: ":"))
        write(value)
    }

    mutating func writeObject(_ members: [String: JSON]) {
        append(UInt8(ascii: "{"))
        let n = members.count
        if n == 1, let only = members.first {
            writeMember(only.key, only.value)
        } else if n > 1 {
            // Keys and values in separate stack buffers (plain element types keep
            // copying and destruction cheap); positions are sorted by an 8-byte
            // big-endian key prefix, with the full byte comparison only on ties.
            withUnsafeTemporaryAllocation(of: String.self, capacity: n) { keys in
                withUnsafeTemporaryAllocation(of: JSON.self, capacity: n) { values in
                    withUnsafeTemporaryAllocation(of: (prefix: UInt64, position: Int).self, capacity: n) { buffer in
                        var order = buffer
                        var filled = 0
                        for (key, value) in members {
                            keys.initializeElement(at: filled, to: key)
                            values.initializeElement(at: filled, to: value)
                            order.initializeElement(at: filled, to: (CanonicalJSONWriter.prefix(key), filled))
                            filled += 1
                        }
                        order.sort { a, b in
                            if a.prefix != b.prefix { return a.prefix < b.prefix }
                            return CanonicalJSONWriter.utf8Precedes(keys[a.position], keys[b.position])
                        }
                        for i in 0..<filled {
                            if i > 0 { append(UInt8(ascii: ",")) }
                            let position = order[i].position
                            writeMember(keys[position], values[position])
                        }
                        for i in 0..<filled {
                            keys.deinitializeElement(at: i)
                            values.deinitializeElement(at: i)
                        }
                    }
                }
            }
        }
        append(UInt8(ascii: "}"))
    }

    /// The first 8 UTF-8 bytes of `key`, big-endian, zero-padded: comparing
    /// prefixes agrees with byte order whenever they differ.
    @inline(__always)
    static func prefix(_ key: String) -> UInt64 {
        let value = key.utf8.withContiguousStorageIfAvailable { bytes -> UInt64 in
            var v: UInt64 = 0
            let n = min(8, bytes.count)
            var i = 0
            while i < n {
                v |= UInt64(bytes[i]) << (56 - 8 * UInt64(i))
                i += 1
            }
            return v
        }
        if let value { return value }
        var v: UInt64 = 0
        for (i, byte) in key.utf8.prefix(8).enumerated() { v |= UInt64(byte) << (56 - 8 * UInt64(i)) }
        return v
    }

    /// Whether `a` sorts before `b` by UTF-8 bytes (the canonical key order).
    @inline(__always)
    static func utf8Precedes(_ a: String, _ b: String) -> Bool {
        let fast = a.utf8.withContiguousStorageIfAvailable { pa in
            b.utf8.withContiguousStorageIfAvailable { pb in bytesPrecede(pa, pb) }
        }
        if let fast, let result = fast { return result }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    @inline(__always)
    static func bytesPrecede(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = min(a.count, b.count)
        var i = 0
        while i < n {
            let x = a[i], y = b[i]
            if x != y { return x < y }
            i += 1
        }
        return a.count < b.count
    }
}
