/// Tracks items that complete out of order and reports the last one before which
/// everything has completed: the value a checkpoint may safely record.
///
/// Items are added in order with an opaque checkpoint value (a local sequence when
/// pushing, the peer's JSON sequence when pulling) and a count of parts (e.g. one
/// per revision of a document); an item is done when all its parts are. Indices
/// returned by `add` stay valid for the tracker's life.
struct SequenceTracker<Value: Sendable>: Sendable {
    private var values: [Value] = []
    private var remaining: [Int] = []
    /// First unfinished position in the arrays.
    private var head = 0
    /// How many finished items were dropped from the front of the arrays.
    private var dropped = 0
    /// The checkpoint value everything up to which is complete.
    private(set) var completed: Value?

    init(start: Value?) {
        completed = start
    }

    /// True when every item added so far is complete.
    var isIdle: Bool { head == values.count }

    /// Adds an item with `parts` outstanding parts (0 = already complete); returns its index.
    @discardableResult
    mutating func add(_ value: Value, parts: Int) -> Int {
        values.append(value)
        remaining.append(max(0, parts))
        let index = dropped + values.count - 1
        advance()
        return index
    }

    /// Marks one part of item `index` done.
    mutating func complete(_ index: Int) {
        let position = index - dropped
        guard position >= head, position < remaining.count, remaining[position] > 0 else { return }
        remaining[position] -= 1
        advance()
    }

    private mutating func advance() {
        while head < values.count && remaining[head] == 0 {
            completed = values[head]
            head += 1
        }
        // Drop the finished prefix now and then so memory stays bounded.
        if head > 4096 && head * 2 > values.count {
            values.removeFirst(head)
            remaining.removeFirst(head)
            dropped += head
            head = 0
        }
    }
}
