/// Why a conflict policy string from the configuration was refused; owns the
/// message shown to the operator.
public struct ConflictPolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The string that was parsed.
    public let text: String
    /// What is wrong with it.
    public let reason: String

    public init(text: String, reason: String) {
        self.text = text
        self.reason = reason
    }

    public var description: String {
        "invalid conflict policy \"\(text)\": \(reason)"
    }
}
