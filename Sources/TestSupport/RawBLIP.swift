import Foundation

/// BLIP and WebSocket bytes built by hand from the BLIP spec (`Sources/BLIP/BLIP.md`).
public enum RawBLIP {
    public static func upgradeRequest(
        port: Int, path: String, headers: [String: String] = [:], subprotocols: String = "BLIP_3+CBMobile_3"
    ) -> String {
        var text = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            + "Sec-WebSocket-Protocol: \(subprotocols)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return text + "\r\n"
    }

    public static func varint(_ value: Int) -> [UInt8] {
        var value = UInt64(value)
        var bytes: [UInt8] = []
        repeat {
            let low = UInt8(value & 0x7F)
            value >>= 7
            bytes.append(value == 0 ? low : low | 0x80)
        } while value != 0
        return bytes
    }

    /// The first (and only) frame of a request on a fresh connection: number, flags
    /// (MSG, nothing else), properties, empty body, then the CRC-32 of the data.
    public static func requestFrame(number: Int, properties: [(String, String)]) -> [UInt8] {
        frame(number: number, flags: 0x00, data: messageData(properties: properties, body: []), sentBefore: [])
    }

    /// A message's data: the properties' length, the NUL-separated pairs, the body.
    public static func messageData(properties: [(String, String)], body: [UInt8]) -> [UInt8] {
        let pairs: [UInt8] = properties.flatMap { Array($0.0.utf8) + [0] + Array($0.1.utf8) + [0] }
        return varint(pairs.count) + pairs + body
    }

    /// One whole-message frame: number, flags, data, and the CRC-32 of all data sent
    /// before in this direction (`sentBefore`) followed by this frame's.
    public static func frame(number: Int, flags: UInt8, data: [UInt8], sentBefore: [UInt8]) -> [UInt8] {
        let crc = crc32(sentBefore + data)
        return varint(number) + [flags] + data + [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)]
    }

    /// A client's WebSocket binary message: FIN, opcode 2, masked.
    public static func maskedBinary(_ payload: [UInt8]) -> [UInt8] {
        binary(payload, mask: [0x37, 0xFA, 0x21, 0x3D])
    }

    /// A WebSocket binary message: FIN, opcode 2, the length, then the payload masked with
    /// `mask` (a client's) or as it is (a server's, `mask` nil).
    public static func binary(_ payload: [UInt8], mask: [UInt8]? = nil) -> [UInt8] {
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        var bytes: [UInt8] = [0x82]
        if payload.count < 126 {
            bytes.append(maskBit | UInt8(payload.count))
        } else if payload.count > 0xFFFF {
            bytes.append(maskBit | 127)
            bytes += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        } else {
            bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        guard let mask else { return bytes + payload }
        return bytes + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    public struct Reply: CustomStringConvertible, Sendable {
        public let number: Int
        public let type: Int
        public let properties: String
        public let body: [UInt8]
        public var description: String {
            "#\(number) type \(type) [\(properties.replacingOccurrences(of: "\0", with: "|"))] \(String(decoding: body, as: UTF8.self))"
        }
    }

    /// The first BLIP frame in the server's binary WebSocket messages (pings skipped).
    public static func readReply(_ socket: RawSocket) throws -> Reply {
        while true {
            let header = try socket.read(count: 2)
            var length = Int(header[1] & 0x7F)
            if length == 126 {
                let extended = try socket.read(count: 2)
                length = Int(extended[0]) << 8 | Int(extended[1])
            } else if length == 127 {
                length = try socket.read(count: 8).reduce(0) { $0 << 8 | Int($1) }
            }
            let payload = try socket.read(count: length)
            guard header[0] & 0x0F == 2 else { continue }
            var index = 0
            func readVarint() -> Int {
                var value = 0
                var shift = 0
                while index < payload.count {
                    let byte = payload[index]
                    index += 1
                    value |= Int(byte & 0x7F) << shift
                    if byte & 0x80 == 0 { break }
                    shift += 7
                }
                return value
            }
            let number = readVarint()
            let flags = readVarint()
            let propertiesLength = readVarint()
            let end = min(index + propertiesLength, payload.count)
            let properties = String(decoding: payload[index..<end], as: UTF8.self)
            let body = Array(payload[end..<max(end, payload.count - 4)])
            return Reply(number: number, type: flags & 0x07, properties: properties, body: body)
        }
    }

    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
