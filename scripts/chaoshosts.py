"""chaoshosts — the chaos engine's backend for real hosts (`scripts/chaos --hosts`, `shoal chaos`).

The netns lab (`scripts/netlab`) injects faults from outside the nodes: nftables, tc,
signals, a tmpfs. On real hosts there is no root and no lab: every fault goes to the
node itself, through its admin API's nemesis (`POST /_nemesis`, docs/operations.md "The
nemesis"), which must be enabled in each node's config. `Hosts` speaks the same verbs as
`scripts/netlab` (what `scripts/chaos`'s nemesis calls), so one engine drives both:

  partition A B   every node of A partitions B (both ways) and every node of B partitions A
  isolate i       node i partitions every other node
  kill i          a crash fault (SIGKILL): its supervisor (systemd's Restart=) restarts it
  restart i       waits until node i answers again
  pause i         replication paused (every link held) until resume, or the fault's deadline
  resume i        lifts the pause
  loss P i | A B  P% of node i's write batches (or between the groups) lost and resent late
  oneway A B      A's frames to B held (B's to A flow)
  flap i D U      node i cut from every peer for D s, linked for U s, again and again
  slow i D J      node i's frames D ms ± J ms late
  clock i ±Nh     node i's hybrid clock reads the wall clock N hours off
  fill i          node i's disk answers "full" (507)
  unfill i        lifts it
  heal            lifts every fault on every node

Every fault is asked for with a deadline (`--fault-max`, default 120 s, within each node's
`nemesis.max_duration`): if this controller dies, the nodes lift them by themselves.
Stdlib only.
"""

import json
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request


class HostError(Exception):
    pass


def http(method, url, body=None, timeout=10.0):
    """(status, JSON answer) of one request; an HTTP error status is an answer, not an error."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read() or b"null")
        except ValueError:
            return e.code, None


class Hosts:
    """Real hosts, each named by its node's admin URL (http://host:4985)."""

    def __init__(self, admin_urls, db="db", fault_max=120.0, timeout=10.0):
        self.urls = {i + 1: url.rstrip("/") for i, url in enumerate(admin_urls)}
        self.n = len(self.urls)
        self.db = db
        self.fault_max = fault_max
        self.timeout = timeout
        self.env = dict(os.environ)
        self.lock = threading.Lock()
        self.ids = {}                # host -> node ID
        self.public_ports = {}       # host -> its node's public port
        self.held = {}               # (host, tag) -> fault id, for faults lifted one by one
        self.flappers = {}           # host -> stop event
        self.events = []             # (epoch, text), as netlab's events.log
        # What linkwatch reads (as labutil.Lab's).
        self.hosts = {i: {"admin": url} for i, url in self.urls.items()}

    # ------------------------------------------------------------ HTTP

    def request(self, i, method, path, body=None, timeout=None):
        return http(method, self.urls[i] + path, body, timeout or self.timeout)

    def inject(self, i, fault, tag=None):
        """POSTs a fault to node i; returns its id (None when the node could not be reached)."""
        if fault.get("fault") != "crash":
            fault = dict(fault, duration=fault.get("duration", self.fault_max))
        try:
            status, answer = self.request(i, "POST", "/_nemesis", fault)
        except OSError as e:
            if fault.get("fault") == "crash":
                return None         # it may die before it answers
            raise HostError(f"host {i} ({self.urls[i]}): {e}")
        if status != 201:
            reason = (answer or {}).get("reason", answer) if isinstance(answer, dict) else answer
            raise HostError(f"host {i} refused {fault['fault']}: {status} {reason}")
        if tag is not None:
            self.held[(i, tag)] = answer["id"]
        return answer["id"]

    def lift(self, i, tag):
        fid = self.held.pop((i, tag), None)
        if fid is not None:
            try:
                self.request(i, "DELETE", f"/_nemesis/{fid}")
            except OSError:
                pass            # the node is down: its faults ended with it

    # ------------------------------------------------------------ setup

    def probe(self):
        """Reads every node's ID and checks its nemesis is on; raises HostError otherwise."""
        for i in self.urls:
            try:
                status, mesh = self.request(i, "GET", "/_mesh")
            except OSError as e:
                raise HostError(f"host {i}: no answer from {self.urls[i]}: {e}")
            if status != 200 or not isinstance(mesh, dict) or "node_id" not in mesh:
                raise HostError(f"host {i}: {self.urls[i]}/_mesh answered {status}: is it a Shoal node's admin port?")
            self.ids[i] = mesh["node_id"]
            public = ((mesh.get("node") or {}).get("addresses") or {}).get("public", "")
            self.public_ports[i] = int(public.rsplit(":", 1)[1]) if ":" in public else 4984
            if not (mesh.get("nemesis") or {}).get("enabled"):
                raise HostError(f"host {i} ({self.urls[i]}): the nemesis is off: its config needs "
                                '"nemesis": {"enabled": true} (docs/operations.md "The nemesis")')
        if len(set(self.ids.values())) != self.n:
            raise HostError("two admin URLs reach the same node")
        return dict(self.ids)

    def wait_up(self, i, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                status, _ = self.request(i, "GET", "/", timeout=2)
                if status == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.2)
        return False

    # ------------------------------------------------------------ what the engine calls

    def db_url(self, i):
        return f"{self.urls[i]}/{self.db}"

    def public_db_url(self, i, scheme="http"):
        """The database on node i's public port (where clients connect), by the admin URL's host."""
        host = urllib.parse.urlparse(self.urls[i]).hostname
        return f"{scheme}://{host}:{self.public_ports.get(i, 4984)}/{self.db}"

    def admin_url(self, i):
        return self.urls[i]

    def writer_argv(self, i, argv):
        return list(argv)

    def ip_netns_exec(self, i, argv):
        return list(argv)

    def checker_targets(self):
        """converge-check's and ledger verify's node arguments."""
        return [self.db_url(i) for i in sorted(self.urls)]

    def checker_admins(self):
        return [a for i in sorted(self.urls) for a in ("--admin", self.urls[i])]

    def leftovers(self):
        """Faults still in effect on some node after the final heal."""
        left = []
        for i in sorted(self.urls):
            try:
                status, state = self.request(i, "GET", "/_nemesis")
            except OSError as e:
                left.append(f"host {i}: no answer ({e})")
                continue
            faults = (state or {}).get("faults") or []
            if faults:
                left.append(f"host {i}: {len(faults)} faults still in effect")
        return left

    def rss(self):
        """Each node's resident memory now (bytes), from `_mesh`."""
        out = {}
        for i in sorted(self.urls):
            try:
                _, mesh = self.request(i, "GET", "/_mesh")
                rss = ((mesh or {}).get("node") or {}).get("rss_bytes")
                if rss:
                    out[i] = rss
            except OSError:
                pass
        return out

    def last_event(self):
        return self.events[-1] if self.events else None

    @staticmethod
    def group(spec):
        return [int(x) for x in str(spec).split(",") if x]

    def netlab(self, verb, *argv, check=True, quiet=False, timeout=120):
        """One netlab verb, done through the nodes' nemeses."""
        with self.lock:
            self.events.append((time.time(), " ".join([verb, *map(str, argv)])))
        try:
            self._do(verb, [str(a) for a in argv])
        except HostError:
            if check:
                raise

    def _cut(self, a, b, tag, direction="both"):
        for i in a:
            peers = [self.ids[j] for j in b if j != i]
            if peers:
                self.inject(i, {"fault": "partition", "peers": peers, "direction": direction}, tag=(tag, i))

    def _do(self, verb, argv):
        everyone = sorted(self.urls)
        if verb == "partition":
            a, b = self.group(argv[0]), self.group(argv[1])
            self._cut(a, b, "partition")
            self._cut(b, a, "partition")
        elif verb == "isolate":
            i = int(argv[0])
            self._cut([i], everyone, f"isolate-{i}")
        elif verb == "kill":
            self.inject(int(argv[0]), {"fault": "crash", "after_ms": 100})
            time.sleep(0.5)
        elif verb == "restart":
            i = int(argv[0])
            if not self.wait_up(i, 120):
                raise HostError(f"host {i} did not come back within 120 s of its crash fault: "
                                "is the node supervised (systemd's Restart=on-failure)?")
        elif verb == "pause":
            i = int(argv[0])
            self.inject(i, {"fault": "pause"}, tag="pause")
        elif verb == "resume":
            self.lift(int(argv[0]), "pause")
        elif verb == "loss":
            pct = float(argv[0])
            if len(argv) == 2:
                self.inject(int(argv[1]), {"fault": "loss", "percent": pct})
            else:
                a, b = self.group(argv[1]), self.group(argv[2])
                for side, other in ((a, b), (b, a)):
                    for i in side:
                        self.inject(i, {"fault": "loss", "percent": pct, "peers": [self.ids[j] for j in other]})
        elif verb == "oneway":
            self._cut(self.group(argv[0]), self.group(argv[1]), "oneway", direction="out")
        elif verb == "flap":
            i, down, up = int(argv[0]), float(argv[1]), float(argv[2])
            stop = threading.Event()
            self.flappers[i] = stop
            threading.Thread(target=self._flap, args=(i, down, up, stop), daemon=True).start()
        elif verb == "slow":
            i, delay, jitter = int(argv[0]), float(argv[1]), float(argv[2])
            self.inject(i, {"fault": "delay", "ms": max(1.0, delay), "jitter_ms": jitter})
            if len(argv) >= 4:
                # Stalls now and then: a stall of F s every E s, while the slowness lasts.
                every, length = float(argv[3]), float(argv[4])
                stop = threading.Event()
                self.flappers[-i] = stop
                threading.Thread(target=self._stalls, args=(i, every, length, stop), daemon=True).start()
        elif verb == "clock":
            i, offset = int(argv[0]), argv[1]
            sign = -1 if offset.startswith("-") else 1
            hours = float(offset.lstrip("+-").rstrip("h"))
            self.inject(i, {"fault": "clock", "offset_ms": sign * hours * 3_600_000})
        elif verb == "fill":
            self.inject(int(argv[0]), {"fault": "disk_full"}, tag="fill")
        elif verb == "unfill":
            self.lift(int(argv[0]), "fill")
        elif verb == "heal":
            for stop in self.flappers.values():
                stop.set()
            self.flappers.clear()
            self.held.clear()
            for i in everyone:
                try:
                    self.request(i, "DELETE", "/_nemesis")
                except OSError:
                    pass        # down: its faults ended with it
        else:
            raise HostError(f"the hosts backend has no '{verb}'")

    def _flap(self, i, down, up, stop):
        others = [self.ids[j] for j in sorted(self.urls) if j != i]
        while not stop.is_set():
            try:
                self.inject(i, {"fault": "partition", "peers": others, "duration": down})
            except (HostError, OSError):
                pass
            if stop.wait(down + up):
                return

    def _stalls(self, i, every, length, stop):
        while not stop.wait(every):
            try:
                self.inject(i, {"fault": "stall", "duration": length})
            except (HostError, OSError):
                pass
