import DocumentModel

/// The node's nemesis, as the admin API drives it (ShoalNode implements it; see
/// docs/operations.md "The nemesis"). Off unless the node's config enables it.
public protocol NemesisController: Sendable {
    /// Whether the config enables the nemesis.
    var nemesisEnabled: Bool { get }
    /// `GET /_nemesis`: whether it is on, the faults in effect, the last ones lifted.
    func nemesisStatus() -> JSON
    /// `POST /_nemesis`: injects the fault the body describes; its entry, or
    /// `NemesisRefusal` (400 for a bad request).
    func injectFault(_ body: JSON) throws(NemesisRefusal) -> JSON
    /// `DELETE /_nemesis/{id}`: lifts one fault; false when there is none.
    func liftFault(id: Int) -> Bool
    /// `DELETE /_nemesis`: lifts every fault; how many there were.
    func liftAllFaults() -> Int
}

/// Why the nemesis refused a request, with its HTTP status.
public struct NemesisRefusal: Error, Sendable {
    public let status: Int
    public let reason: String

    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }
}
