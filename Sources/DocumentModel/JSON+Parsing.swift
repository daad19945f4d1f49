import Foundation

// Public parsing entry points. The parser itself is `JSONParser`.

extension JSON {
    /// Parses one JSON value (RFC 8259) from UTF-8 bytes.
    ///
    /// Whitespace may surround the value; anything else after it is an error.
    /// Duplicate object keys: the last one wins. Unpaired surrogate `\u` escapes
    /// decode to U+FFFD. Nesting deeper than 512 arrays/objects, invalid UTF-8,
    /// leading zeros, bare control characters, invalid escapes and numbers out of
    /// `Double`'s range are rejected. Never crashes, whatever the input.
    ///
    /// Numbers: a literal without fraction or exponent that fits `Int64` becomes
    /// `.int`; any other literal is normalized with `JSON.number(_:)`.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONError) -> JSON {
        let result: Result<JSON, JSONError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONError) -> JSON in try JSONParser.parse(buffer) }
        }
        if let result { return try result.get() }
        if let data = bytes as? Data {
            return try parse(data: data)
        }
        let copy = Array(bytes)
        return try parse(copy)
    }

    /// Parses one JSON value and tells whether `bytes` are exactly its canonical
    /// encoding (`canonicalBytes()`), so that a caller can store them as they are.
    /// The answer is conservative: false for any text with whitespace, string escapes,
    /// fractions or exponents, even where they happen to be canonical.
    public static func parseReportingCanonical(_ bytes: [UInt8]) throws(JSONError) -> (value: JSON, isCanonical: Bool) {
        let result = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONError) in try JSONParser.parseReportingCanonical(buffer) }
        }
        return try result.get()
    }

    /// Parses one JSON value from a string's UTF-8 encoding.
    public static func parse(_ string: String) throws(JSONError) -> JSON {
        var string = string
        let result = string.withUTF8 { buffer in
            Result { () throws(JSONError) -> JSON in try JSONParser.parse(buffer) }
        }
        return try result.get()
    }

    /// Parses one JSON value from `Data` (also reached through the generic entry point).
    public static func parse(data: Data) throws(JSONError) -> JSON {
        let result = data.withUnsafeBytes { raw -> Result<JSON, JSONError> in
            let buffer = raw.bindMemory(to: UInt8.self)
            return Result { () throws(JSONError) -> JSON in try JSONParser.parse(buffer) }
        }
        return try result.get()
    }
}
