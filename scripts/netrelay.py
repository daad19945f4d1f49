#!/usr/bin/env python3
"""netrelay — a transparent TCP relay that delays, jitters and stalls traffic.

Runs inside one netlab host (`netlab slow I …` starts it and installs the
nftables rules that send the host's Shoal connections through it):

    netrelay.py --port 14984 --mark 0x4e4c --delay 100 [--jitter 50]
                [--stall-every 10 --stall-for 3] [--seed N]

Every connection redirected to --port (nftables `redirect`) is forwarded to
its original destination (SO_ORIGINAL_DST), through a socket carrying --mark
so the host's rules let it pass unredirected. Each chunk read from either
side is delivered after --delay ± --jitter milliseconds (uniform, seeded);
a chunk is never delivered before the one read before it on the same
direction (TCP keeps byte order), so jitter shows as uneven delivery and as
messages of different connections arriving out of order. With --stall-every
S, every ~S seconds (0.5-1.5 S, seeded) the relay delivers nothing at all for
--stall-for seconds while keeping every connection open: a link that silently
stops for a while (the ends see a half-open connection). Stdlib only.
"""

import argparse
import asyncio
import random
import signal
import socket
import struct
import sys

SO_ORIGINAL_DST = 80
SO_MARK = 36


def original_destination(sock):
    raw = sock.getsockopt(socket.SOL_IP, SO_ORIGINAL_DST, 16)
    port = struct.unpack_from("!H", raw, 2)[0]
    return socket.inet_ntoa(raw[4:8]), port


class Shaper:
    """The seeded delays and stall windows every direction of every connection shares."""

    def __init__(self, args):
        self.rng = random.Random(args.seed)
        self.delay = args.delay / 1000.0
        self.jitter = args.jitter / 1000.0
        self.stall_every = args.stall_every
        self.stall_for = args.stall_for
        self.stall_until = 0.0
        self.stalls = 0

    def next_delay(self):
        return max(0.0, self.delay + self.rng.uniform(-self.jitter, self.jitter))

    async def stall_loop(self):
        loop = asyncio.get_running_loop()
        while self.stall_every > 0:
            await asyncio.sleep(self.stall_every * self.rng.uniform(0.5, 1.5))
            self.stall_until = loop.time() + self.stall_for
            self.stalls += 1
            print(f"netrelay: stall {self.stalls} for {self.stall_for:g}s", flush=True)
            await asyncio.sleep(self.stall_for)

    async def hold(self):
        loop = asyncio.get_running_loop()
        while loop.time() < self.stall_until:
            await asyncio.sleep(self.stall_until - loop.time())


async def pump(reader, writer, shaper):
    """Copies reader → writer, each chunk delivered at its due time, in order."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def deliver():
        try:
            while True:
                due, data = await queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                await shaper.hold()
                if data is None:
                    break
                writer.write(data)
                await writer.drain()
        except (OSError, ConnectionError):
            pass
        finally:
            try:
                writer.close()
            except OSError:
                pass

    task = asyncio.ensure_future(deliver())
    last_due = 0.0
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            last_due = max(last_due, loop.time() + shaper.next_delay())
            queue.put_nowait((last_due, data))
    except (OSError, ConnectionError):
        pass
    queue.put_nowait((last_due, None))
    await task


async def serve(args):
    shaper = Shaper(args)
    loop = asyncio.get_running_loop()

    async def handle(client_reader, client_writer):
        sock = client_writer.get_extra_info("socket")
        try:
            host, port = original_destination(sock)
            upstream = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            upstream.setsockopt(socket.SOL_SOCKET, SO_MARK, args.mark)
            upstream.setblocking(False)
            await asyncio.wait_for(loop.sock_connect(upstream, (host, port)), 10)
            server_reader, server_writer = await asyncio.open_connection(sock=upstream)
        except (OSError, asyncio.TimeoutError) as e:
            print(f"netrelay: cannot relay a connection: {e}", flush=True)
            client_writer.close()
            return
        await asyncio.gather(pump(client_reader, server_writer, shaper), pump(server_reader, client_writer, shaper))

    server = await asyncio.start_server(handle, "0.0.0.0", args.port, reuse_address=True)
    print(f"netrelay: listening on {args.port}: delay {args.delay:g} ms ± {args.jitter:g} ms, "
          f"stall {args.stall_for:g}s every ~{args.stall_every:g}s", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    stalls = asyncio.ensure_future(shaper.stall_loop())
    async with server:
        await stop.wait()
    stalls.cancel()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=14984)
    ap.add_argument("--mark", type=lambda s: int(s, 0), default=0x4E4C)
    ap.add_argument("--delay", type=float, default=100.0, help="milliseconds")
    ap.add_argument("--jitter", type=float, default=0.0, help="milliseconds (uniform ±)")
    ap.add_argument("--stall-every", type=float, default=0.0, help="seconds (0: no stalls)")
    ap.add_argument("--stall-for", type=float, default=0.0, help="seconds")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
