"""chaosclients — client writers in a chaos run (`scripts/chaos --hosts … --clients N`).

Each client is an app's local database that syncs continuously with one node, as a
Couchbase Lite app does: a `shoal serve` of its own (no mesh, no discovery, loopback
ports beside the controller) with one continuous push-and-pull replication to its
node's public port, dialed as a client (`"client": true`: the node serves it in Sync
Gateway's no-conflicts mode, winners only, branches refused), speaking
`BLIP_3+CBMobile_3` (revision trees, as Couchbase Lite 3: generation `cbl3`) or
`BLIP_3+CBMobile_4` (version vectors, as Couchbase Lite 4: `cbl4`). Its writer
(chaoswriter) writes the client's own documents through the client's REST API; a write
is acknowledged once the client stored it, and must then reach every node.

Faults of a client: cut off from its node (its replication stopped, started again
later), and killed (SIGKILL, mid-push or not; restarted later with its data).
Stdlib only.
"""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.parse

from chaoshosts import http

GENERATIONS = {"cbl3": "rev-trees", "cbl4": "version-vectors"}


def free_ports(count):
    socks = []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Client:
    """One client: its node process, data and replication."""

    def __init__(self, k, generation, host, remote, workdir, binary, conflicts, db="db"):
        self.k, self.generation, self.host, self.remote, self.db = k, generation, host, remote, db
        self.binary = binary
        self.dir = os.path.join(workdir, f"client{k}-{generation}")
        os.makedirs(self.dir, exist_ok=True)
        self.public, self.admin = free_ports(2)
        self.config = os.path.join(self.dir, "config.json")
        with open(self.config, "w") as f:
            json.dump({
                "heartbeat": 1,
                "databases": {db: {
                    "conflicts": conflicts,
                    "users": {"GUEST": {"disabled": False, "admin_channels": ["*"]}},
                    "replications": {"up": {
                        "remote": remote, "direction": "pushAndPull", "continuous": True,
                        "client": True, "versioning": GENERATIONS[generation]}},
                }},
            }, f)
        self.proc = None
        self.state = "down"
        self.label = f"client{k}"

    @property
    def admin_url(self):
        return f"http://127.0.0.1:{self.admin}"

    def db_url(self, _i=None):
        return f"{self.admin_url}/{self.db}"

    def writer_argv(self, _i, argv):
        return list(argv)

    def start(self, wait=30):
        log = open(os.path.join(self.dir, "node.log"), "a")
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--config", self.config, "--data", os.path.join(self.dir, "data"),
             "--interface", "127.0.0.1", "--port", str(self.public), "--admin-port", str(self.admin), "--no-discovery"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.time() + wait
        while time.time() < deadline:
            try:
                if http("GET", self.admin_url + "/", timeout=2)[0] == 200:
                    self.state = "up"
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError(f"client {self.k} ({self.generation}) did not start: see {self.dir}/node.log")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self.state = "dead"

    def cut(self):
        http("PUT", f"{self.db_url()}/_replicationStatus/up?action=stop")
        self.state = "cut"

    def reconnect(self):
        http("PUT", f"{self.db_url()}/_replicationStatus/up?action=start")
        self.state = "up"

    def heal(self):
        if self.state == "dead":
            self.start()
        elif self.state == "cut":
            self.reconnect()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.state = "down"

    def winners(self):
        """{doc ID: winning rev} of the live documents (hot and written ones)."""
        status, answer = http("GET", f"{self.db_url()}/_all_docs", timeout=30)
        if status != 200:
            raise RuntimeError(f"client {self.k}: _all_docs answered {status}")
        return {row["id"]: row["value"]["rev"] for row in answer["rows"]}

    def status(self):
        try:
            _, answer = http("GET", f"{self.db_url()}/_replicationStatus/up")
            return answer or {}
        except OSError as e:
            return {"error": str(e)}


def node_winners(db_url):
    status, answer = http("GET", f"{db_url}/_all_docs", timeout=30)
    if status != 200:
        raise RuntimeError(f"{db_url}/_all_docs answered {status}")
    return {row["id"]: row["value"]["rev"] for row in answer["rows"]}


def current_version(db_url, doc_id):
    status, doc = http("GET", f"{db_url}/{urllib.parse.quote(doc_id, safe='')}?show_cv=true")
    return doc.get("_cv") if status == 200 and isinstance(doc, dict) else None


def check(clients, node_db_url, wait):
    """Waits until every client holds the node's live documents with the same winners.
    Returns (agreed, seconds, differences: [text])."""
    start = time.time()
    while True:
        differences = []
        try:
            expected = node_winners(node_db_url)
            for c in clients:
                got = c.winners()
                missing = [d for d in expected if d not in got]
                extra = [d for d in got if d not in expected]
                other = [d for d in expected if d in got and got[d] != expected[d]]
                if other and c.generation == "cbl4":
                    # Over version vectors a client names revisions by versions: its revision
                    # IDs are its own (as Couchbase Lite 4's), so the same winner is the same
                    # current version (`_cv`), whatever the revision IDs.
                    other = [d for d in other if current_version(node_db_url, d) != current_version(c.db_url(), d)]
                if missing or extra or other:
                    differences.append(
                        f"client {c.k} ({c.generation}, host {c.host}): {len(missing)} missing, {len(extra)} extra, "
                        f"{len(other)} other winners" + (f"; e.g. {(missing + extra + other)[0]}" if missing + extra + other else ""))
        except (OSError, RuntimeError) as e:
            differences.append(str(e))
        if not differences:
            return True, time.time() - start, []
        if time.time() - start >= wait:
            return False, time.time() - start, differences
        time.sleep(0.5)
