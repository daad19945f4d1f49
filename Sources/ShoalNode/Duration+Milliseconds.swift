extension Duration {
    /// Whole milliseconds (truncated), for logs and JSON answers.
    var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
