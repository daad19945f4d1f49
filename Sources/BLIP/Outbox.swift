/// The sender's queue of outgoing messages (pure: no I/O): which frame goes next.
///
/// Scheduling follows BLIP §3.2: each message in the queue sends one frame in
/// turn (round robin). An urgent message goes after the last urgent message in
/// the queue, leaving one normal message in between when there is one, and a new
/// urgent message never overtakes a message that has not started. ACK frames go
/// before everything. A normal message uses the small frame size while an urgent
/// message waits right behind it.
///
/// In-order messages (a local choice, not on the wire): one at a time takes part in
/// the round robin, the next starting only once the previous one's last frame went
/// out. The peer then completes them, and so handles them, in the order they were
/// queued, which round robin alone does not give when their sizes differ (a short
/// message would overtake a long one queued before it).
///
/// Flow control (§3.7): a message whose unacknowledged bytes reach
/// `maxUnackedBytes` leaves the queue until an ACK brings it below the limit.
/// Requests get their number when their first frame is scheduled, so requests
/// always begin in number order.
struct Outbox: Sendable {
    /// One frame to encode and send.
    struct Frame: Sendable {
        var id: UInt64
        var type: BLIPMessageType
        var number: UInt64
        /// Flags of this frame, `.moreComing` included when more frames follow.
        var flags: BLIPFrameFlags
        var data: ArraySlice<UInt8>
        /// True for the first frame of the message.
        var isFirst: Bool
        /// True for the last frame of the message.
        var isLast: Bool { !flags.contains(.moreComing) }
    }

    /// What the writer does next.
    enum Work: Sendable {
        case ack(type: BLIPMessageType, number: UInt64, byteCount: UInt64)
        case frame(Frame)
    }

    private struct Message: Sendable {
        var type: BLIPMessageType
        var number: UInt64
        var flags: BLIPFrameFlags
        var data: [UInt8]
        var offset = 0
        var bytesSent: UInt64 = 0
        var unackedBytes: UInt64 = 0
        var frozen = false
        var urgent: Bool { flags.contains(.urgent) }
        var started: Bool { offset > 0 }
        var key: Key { Key(isReply: type.isReply, number: number) }
    }

    private struct Key: Hashable, Sendable {
        var isReply: Bool
        var number: UInt64
    }

    private struct PendingAck: Sendable {
        var type: BLIPMessageType
        var number: UInt64
        var byteCount: UInt64
    }

    let maxFrameSize: Int
    let smallFrameSize: Int
    let maxUnackedBytes: UInt64
    private var messages: [UInt64: Message] = [:]
    /// Ids of the messages ready to send, from `queue[head]` on (a cheap deque).
    private var queue: [UInt64] = []
    private var head = 0
    private var acks: [PendingAck] = []
    private var numbered: [Key: UInt64] = [:]
    private(set) var lastRequestNumber: UInt64 = 0
    /// The in-order message taking part in the round robin, and those waiting for it.
    private var inOrderActive: UInt64?
    private var inOrderWaiting: [UInt64] = []
    /// The largest count of unacknowledged bytes any message reached.
    private(set) var peakUnackedBytes: UInt64 = 0

    init(configuration: BLIPConfiguration) {
        maxFrameSize = configuration.effectiveMaxFrameSize
        smallFrameSize = configuration.effectiveSmallFrameSize
        maxUnackedBytes = UInt64(max(1, configuration.maxUnackedBytes))
    }

    /// Messages not completely sent (queued, frozen, or with a frame in flight).
    var messageCount: Int { messages.count }
    /// Messages paused by flow control.
    var frozenCount: Int { messages.values.filter(\.frozen).count }
    /// True if `next()` would return work.
    var hasWork: Bool { !acks.isEmpty || queuedCount > 0 }

    private var queuedCount: Int { queue.count - head }

    /// Queues a message. Requests pass number 0 (numbered when they start); replies
    /// pass the number of the request they answer.
    mutating func enqueue(
        id: UInt64, type: BLIPMessageType, number: UInt64, flags: BLIPFrameFlags, data: [UInt8], inOrder: Bool = false
    ) {
        var flags = flags
        flags.remove(.moreComing)
        let message = Message(type: type, number: number, flags: flags, data: data)
        messages[id] = message
        if number != 0 {
            numbered[message.key] = id
        }
        if inOrder {
            guard inOrderActive == nil else {
                inOrderWaiting.append(id)
                return
            }
            inOrderActive = id
        }
        requeue(id)
    }

    /// The in-order message `id` is done (sent or withdrawn): the next one starts.
    private mutating func inOrderFinished(_ id: UInt64) {
        guard inOrderActive == id else { return }
        inOrderActive = nil
        while !inOrderWaiting.isEmpty {
            let next = inOrderWaiting.removeFirst()
            if messages[next] != nil {
                inOrderActive = next
                requeue(next)
                return
            }
        }
    }

    /// Queues an ACK frame; a pending ACK for the same message is updated instead.
    mutating func enqueueAck(type: BLIPMessageType, number: UInt64, byteCount: UInt64) {
        if let index = acks.firstIndex(where: { $0.type == type && $0.number == number }) {
            acks[index].byteCount = max(acks[index].byteCount, byteCount)
        } else {
            acks.append(PendingAck(type: type, number: number, byteCount: byteCount))
        }
    }

    /// The next frame to send, or nil when nothing is ready.
    mutating func next() -> Work? {
        if !acks.isEmpty {
            let ack = acks.removeFirst()
            return .ack(type: ack.type, number: ack.number, byteCount: ack.byteCount)
        }
        while queuedCount > 0 {
            let id = popFirst()
            guard var message = messages[id] else { continue }
            let isFirst = !message.started
            if message.number == 0 {
                lastRequestNumber += 1
                message.number = lastRequestNumber
                numbered[message.key] = id
            }
            let urgentWaiting = queuedCount > 0 && messages[queue[head]]?.urgent == true
            let size = (message.urgent || !urgentWaiting) ? maxFrameSize : smallFrameSize
            let end = message.data.count - message.offset > size ? message.offset + size : message.data.count
            var flags = message.flags
            if end < message.data.count {
                flags.insert(.moreComing)
            }
            let data = message.data[message.offset..<end]
            message.offset = end
            messages[id] = message
            return .frame(Frame(id: id, type: message.type, number: message.number, flags: flags,
                                data: data, isFirst: isFirst))
        }
        return nil
    }

    /// Records that `frame` went out with `wireBytes` bytes after its header; puts the
    /// message back in the queue, pauses it for flow control, or forgets it if done.
    /// Returns true if flow control paused the message.
    @discardableResult
    mutating func didSend(_ frame: Frame, wireBytes: Int) -> Bool {
        guard var message = messages[frame.id] else { return false }
        message.bytesSent &+= UInt64(wireBytes)
        message.unackedBytes &+= UInt64(wireBytes)
        peakUnackedBytes = max(peakUnackedBytes, message.unackedBytes)
        if message.offset >= message.data.count {
            messages[frame.id] = nil
            numbered[message.key] = nil
            inOrderFinished(frame.id)
            return false
        }
        if message.unackedBytes >= maxUnackedBytes {
            message.frozen = true
            messages[frame.id] = message
            return true
        }
        messages[frame.id] = message
        requeue(frame.id)
        return false
    }

    /// Takes an ACK from the peer: `.ackRequest` acknowledges our request `number`,
    /// `.ackResponse` our reply. Returns true if this resumed a paused message.
    @discardableResult
    mutating func receivedAck(type: BLIPMessageType, number: UInt64, byteCount: UInt64) -> Bool {
        let key = Key(isReply: type == .ackResponse, number: number)
        guard let id = numbered[key], var message = messages[id] else { return false }
        if byteCount <= message.bytesSent {
            message.unackedBytes = min(message.unackedBytes, message.bytesSent - byteCount)
        }
        let thaw = message.frozen && message.unackedBytes < maxUnackedBytes
        if thaw {
            message.frozen = false
        }
        messages[id] = message
        if thaw {
            requeue(id)
        }
        return thaw
    }

    /// Removes a message that has not sent any frame yet. Returns false if it started.
    mutating func removeUnsent(id: UInt64) -> Bool {
        guard let message = messages[id], !message.started else { return false }
        messages[id] = nil
        queue.removeSubrange(..<head)
        head = 0
        queue.removeAll { $0 == id }
        if message.number != 0 {
            numbered[message.key] = nil
        }
        inOrderWaiting.removeAll { $0 == id }
        inOrderFinished(id)
        return true
    }

    /// Drops everything (the connection closed).
    mutating func removeAll() {
        messages.removeAll()
        queue.removeAll()
        head = 0
        acks.removeAll()
        numbered.removeAll()
        inOrderActive = nil
        inOrderWaiting.removeAll()
    }

    /// Puts a message (new or continuing) into the queue at its place (see type doc).
    private mutating func requeue(_ id: UInt64) {
        guard let message = messages[id] else { return }
        let count = queuedCount
        var index = count  // relative to head
        if message.urgent && count > 1 {
            let isNew = !message.started
            repeat {
                index -= 1
                guard let other = messages[queue[head + index]] else { continue }
                if other.urgent {
                    if index + 1 != count {
                        index += 1  // leave one normal message in between
                    }
                    break
                } else if isNew && !other.started {
                    break  // never overtake a message that has not started
                }
            } while index > 0
            index += 1
        }
        if index == count {
            queue.append(id)
        } else {
            queue.insert(id, at: head + index)
        }
    }

    /// Removes and returns the first queued id; compacts the array now and then.
    private mutating func popFirst() -> UInt64 {
        let id = queue[head]
        head += 1
        if head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= queue.count {
            queue.removeSubrange(..<head)
            head = 0
        }
        return id
    }
}
