"""Shared helpers of the netlab tools (converge-check, ledger.py). Stdlib only.

- Lab: the state of a running `scripts/netlab` lab (NETLAB_DIR/lab.json).
- Client: a small JSON-over-HTTP client with a persistent connection.
- run_in_host: run a command inside one of the lab's hosts (ip netns exec), so
  that every request to a node is sent from inside the lab, never from the
  root network namespace.
- InHost: a thread of this process inside one host's network namespace (setns), for
  harnesses that watch many hosts without starting a process per host.
"""

import ctypes
import decimal
import hashlib
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

DEFAULT_DIR = "/tmp/shoal-netlab"


def lab_dir():
    return os.environ.get("NETLAB_DIR", DEFAULT_DIR)


class LabError(Exception):
    pass


class Lab:
    """A lab brought up by scripts/netlab (read from its state directory)."""

    def __init__(self, directory=None):
        self.dir = directory or lab_dir()
        path = os.path.join(self.dir, "lab.json")
        try:
            with open(path) as f:
                data = json.load(f)
        except FileNotFoundError:
            raise LabError(f"no lab in {self.dir} (no lab.json): start one with scripts/netlab up N")
        self.prefix = data["prefix"]
        self.db = data["db"]
        self.hosts = {h["host"]: h for h in data["hosts"]}
        if not os.path.exists(f"/run/netns/{data['bridge_ns']}"):
            raise LabError(f"the lab in {self.dir} (prefix {self.prefix}) is down")

    def host_numbers(self, spec=None):
        if not spec:
            return sorted(self.hosts)
        out = []
        for part in str(spec).split(","):
            part = part.strip()
            if "-" in part:
                a, b = part.split("-", 1)
                out.extend(range(int(a), int(b) + 1))
            elif part:
                out.append(int(part))
        for i in out:
            if i not in self.hosts:
                raise LabError(f"no host {i} (hosts are {min(self.hosts)}..{max(self.hosts)})")
        return out

    def ns(self, i):
        return self.hosts[i]["ns"]

    def local_db_url(self, i):
        """The node's database URL as seen from inside its own host."""
        return f"http://127.0.0.1:{self.hosts[i]['port']}/{self.db}"

    def public_db_url(self, i):
        h = self.hosts[i]
        return f"http://{h['addr']}:{h['port']}/{self.db}"

    def last_event(self, kinds=("heal", "resume", "restart", "connect-all")):
        """(epoch, text) of the latest lab event of one of these kinds, or None."""
        path = os.path.join(self.dir, "events.log")
        best = None
        try:
            with open(path) as f:
                for line in f:
                    parts = line.split(None, 1)
                    if len(parts) == 2 and parts[1].split()[0] in kinds:
                        best = (float(parts[0]), parts[1].strip())
        except FileNotFoundError:
            pass
        return best

    def ip_netns_exec(self, i, argv):
        return ["ip", "netns", "exec", self.ns(i)] + list(argv)


def require_root():
    if os.geteuid() != 0:
        raise LabError("--netlab needs root (ip netns exec)")


def run_in_hosts(lab, jobs, timeout):
    """Run several commands, each inside a lab host, in parallel.

    jobs: list of (key, host, argv). Returns {key: (returncode, stdout, stderr)}.
    """
    procs = {}
    for key, host, argv in jobs:
        procs[key] = subprocess.Popen(lab.ip_netns_exec(host, argv), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    out = {}
    deadline = time.monotonic() + timeout
    for key, p in procs.items():
        try:
            so, se = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
            out[key] = (p.returncode, so, se)
        except subprocess.TimeoutExpired:
            p.kill()
            so, se = p.communicate()
            out[key] = (-1, so, se + b"\n(timed out)")
    return out


CLONE_NEWNET = 0x40000000
LIBC = ctypes.CDLL(None, use_errno=True)


def enter_netns(name):
    """Moves the calling thread into the network namespace `name` (of `ip netns`):
    the sockets it opens afterwards live there (setns affects only the calling thread)."""
    fd = os.open(os.path.join("/run/netns", name), os.O_RDONLY | os.O_CLOEXEC)
    try:
        if LIBC.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns {name}: {os.strerror(err)}")
    finally:
        os.close(fd)


class InHost(threading.Thread):
    """Runs fn(*args) in host i's network namespace; its result in .result, or on an
    error {"done": False, "at": None, "error": …}."""

    def __init__(self, lab, i, fn, *args):
        super().__init__(daemon=True)
        self.ns, self.fn, self.args = lab.ns(i), fn, args
        self.result = None

    def run(self):
        try:
            enter_netns(self.ns)
            self.result = self.fn(*self.args)
        except Exception as e:  # noqa: BLE001
            self.result = {"done": False, "at": None, "error": f"{type(e).__name__}: {e}"}


class HTTPError(Exception):
    def __init__(self, status, body):
        super().__init__(f"HTTP {status}: {str(body)[:200]}")
        self.status = status
        self.body = body


class Client:
    """JSON over HTTP/1.1 with one persistent connection (reconnects on error).

    Talks only to the URL it was given (no proxies from the environment).
    """

    def __init__(self, base_url, timeout=10.0):
        u = urllib.parse.urlsplit(base_url)
        if u.scheme != "http":
            raise ValueError(f"only http:// URLs are supported: {base_url}")
        self.host = u.hostname
        self.port = u.port or 80
        self.base_path = u.path.rstrip("/")
        self.timeout = timeout
        self.conn = None

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(self, method, path, body=None, query=None, raw=False):
        """Returns (status, parsed JSON or bytes). Raises OSError/HTTPException on
        transport errors (after closing the connection)."""
        url = self.base_path + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self.conn.request(method, url, body=data, headers=headers)
                resp = self.conn.getresponse()
                payload = resp.read()
                if resp.getheader("Connection", "").lower() == "close":
                    self.close()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                # A kept-alive connection the server closed: retry once on a new
                # one, but only for reads (a write may have been applied).
                self.close()
                if attempt == 1 or method not in ("GET", "HEAD"):
                    raise
            except (OSError, http.client.HTTPException):
                self.close()
                raise
        if raw:
            return resp.status, payload
        try:
            return resp.status, json.loads(payload) if payload else None
        except ValueError:
            return resp.status, payload

    def get_json(self, path, query=None):
        status, body = self.request("GET", path, query=query)
        if status != 200:
            raise HTTPError(status, body)
        return body

    def post_json(self, path, body, query=None):
        status, resp = self.request("POST", path, body=body, query=query)
        if status not in (200, 201):
            raise HTTPError(status, resp)
        return resp


def docpath(doc_id):
    """URL path of a document (IDs percent-encoded per segment; _design/x kept)."""
    if doc_id.startswith("_design/"):
        return "/_design/" + urllib.parse.quote(doc_id[len("_design/"):], safe="")
    return "/" + urllib.parse.quote(doc_id, safe="")


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha1_hex(obj):
    return hashlib.sha1(canonical(obj).encode()).hexdigest()


def es_number(x):
    """A number as Shoal's canonical JSON writes it: integers exact, other doubles
    in ECMAScript's shortest round-trip form."""
    if isinstance(x, int):
        return str(x)
    if x != x or x in (float("inf"), float("-inf")):
        return "null"
    if x.is_integer() and abs(x) < 2 ** 63:
        return str(int(x))
    sign, digits, exp = decimal.Decimal(repr(x)).as_tuple()
    s = "".join(map(str, digits)).rstrip("0") or "0"
    exp += len(digits) - len(s)
    k, n = len(s), exp + len(s)
    if k <= n <= 21:
        out = s + "0" * (n - k)
    elif 0 < n <= 21:
        out = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + s
    else:
        e = n - 1
        out = (s if k == 1 else s[0] + "." + s[1:]) + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return ("-" if sign else "") + out


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shoal_canonical(obj):
    """Shoal's canonical JSON (ARCHITECTURE.md §2) of a decoded JSON value."""
    if obj is None:
        return "null"
    if obj is True:
        return "true"
    if obj is False:
        return "false"
    if isinstance(obj, (int, float)):
        return es_number(obj)
    if isinstance(obj, str):
        out = ['"']
        for ch in obj:
            if ch in _ESCAPES:
                out.append(_ESCAPES[ch])
            elif ord(ch) < 0x20:
                out.append("\\u%04x" % ord(ch))
            else:
                out.append(ch)
        out.append('"')
        return "".join(out)
    if isinstance(obj, list):
        return "[" + ",".join(shoal_canonical(v) for v in obj) + "]"
    items = sorted(obj.items(), key=lambda kv: kv[0].encode("utf-8", "surrogatepass"))
    return "{" + ",".join(shoal_canonical(k) + ":" + shoal_canonical(v) for k, v in items) + "}"


def revision_digest(parent, deleted, body):
    """The digest a revision with this parent (revID or None), deleted flag and body
    must have: SHA-1 over the parent's length byte and bytes, a deleted byte and the
    canonical JSON of the body's digest view (user keys + reduced _attachments)."""
    view = {k: v for k, v in body.items() if not k.startswith("_")}
    atts = body.get("_attachments")
    if isinstance(atts, dict) and atts:
        reduced = {}
        for name, a in atts.items():
            if not isinstance(a, dict):
                reduced[name] = a
                continue
            r = {"content_type": a.get("content_type") or "application/octet-stream"}
            for key in ("digest", "length"):
                if a.get(key) is not None:
                    r[key] = a[key]
            reduced[name] = r
        view["_attachments"] = reduced
    p = parent.encode() if parent else b""
    data = (bytes([len(p)]) + p if parent else b"\x00") + (b"\x01" if deleted else b"\x00")
    return hashlib.sha1(data + shoal_canonical(view).encode("utf-8", "surrogatepass")).hexdigest()


def phantom_reason(rev, deleted, history, body):
    """Why a leaf revision cannot have come from a writer or a resolver (its ID is
    not the digest of its parent and body, or its history is not a chain), or None."""
    gens = [rev_gen(r) for r in history]
    if not history or history[0] != rev or any(a != b + 1 for a, b in zip(gens, gens[1:])):
        return f"history {history[:3]}… is not a chain ending at {rev}"
    parent = history[1] if len(history) > 1 else None
    if parent is None and rev_gen(rev) != 1:
        return None      # history stemmed to one revision: the parent is unknown here
    want = revision_digest(parent, deleted, body)
    if want != rev_digest(rev):
        return f"digest of parent {parent} + body is {want[:12]}…, not {rev_digest(rev)[:12]}…"
    return None


def rev_gen(rev):
    return int(rev.split("-", 1)[0])


def rev_digest(rev):
    return rev.split("-", 1)[1]


def winner_of(leaves):
    """Winner order of ARCHITECTURE.md §2: live beats deleted, then higher
    generation, then the greater digest (bytewise). leaves: {rev: deleted}."""
    return max(leaves, key=lambda r: (not leaves[r], rev_gen(r), rev_digest(r).encode()))


def fmt_secs(s):
    return f"{s:.2f}s"


def eprint(*a):
    print(*a, file=sys.stderr)
