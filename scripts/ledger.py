#!/usr/bin/env python3
"""ledger.py — acknowledged-writes ledger for Shoal tests.

`write` performs writes (PUT and/or _bulk_docs) against one node and appends
every write that the node acknowledged (2xx, with the new revision) to a
JSON-lines ledger: {"id", "rev", "node", "op", "t", "tag"}. Writes that fail or
get no answer are counted, not recorded (they may or may not have happened).

`verify` checks that every recorded (id, rev) exists in the revision tree of
every node (POST _revs_diff: a revision the node lacks is listed as missing;
an overwritten revision is still present as an ancestor). An acknowledged write
that is missing is a lost write.

  ledger.py write --netlab --host 2 --duration 10 --bulk 20 --tag w2
  ledger.py write --netlab --host 1 --docs conf-0..9 --rounds 3 --set side=A
  ledger.py write --url http://127.0.0.1:4984/db --new 500
  ledger.py verify --netlab --wait 30
  ledger.py stats

With --netlab (state in NETLAB_DIR, default /tmp/shoal-netlab) the requests
are sent from inside the host (ip netns exec) and the default ledger file is
NETLAB_DIR/ledger.jsonl. Stdlib only. See docs/netlab.md.
"""

import argparse
import collections
import http.client
import json
import os
import random
import re
import sys
import time

sys.dont_write_bytecode = True     # no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import labutil  # noqa: E402
from labutil import Client, HTTPError, docpath  # noqa: E402

ME = os.path.realpath(__file__)


# ----------------------------------------------------------------- ledger file


class Ledger:
    def __init__(self, path):
        self.path = path
        self.fd = None

    def append(self, entries):
        if not entries:
            return
        if self.fd is None:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        data = "".join(json.dumps(e, sort_keys=True) + "\n" for e in entries).encode()
        # One write(2) per batch on an O_APPEND file: concurrent writers on
        # other hosts never interleave inside a line.
        os.write(self.fd, data)

    def read(self):
        entries = []
        try:
            with open(self.path) as f:
                for n, line in enumerate(f, 1):
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        entries.append(json.loads(line))
                    except ValueError:
                        labutil.eprint(f"ledger: {self.path}:{n}: not JSON, skipped")
        except FileNotFoundError:
            pass
        return entries


def default_ledger(netlab):
    if netlab:
        return os.path.join(labutil.lab_dir(), "ledger.jsonl")
    return "ledger.jsonl"


def expand_ids(spec):
    """'conf-0..9' -> conf-0 … conf-9; 'a,b,c' -> a, b, c (both may be combined)."""
    out = []
    for part in spec.split(","):
        m = re.fullmatch(r"(.*?)(\d+)\.\.(\d+)(.*)", part)
        if m:
            pre, a, b, post = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
            out.extend(f"{pre}{k}{post}" for k in range(a, b + 1))
        elif part:
            out.append(part)
    return out


# ----------------------------------------------------------------- writer


# The shared "hot" documents of the chaos test carry a type, so a database with
# per-type conflict policies resolves them in different ways (scripts/chaos --conflicts).
HOT_TYPES = ("task", "note", "counter", "plain")


def hot_type(doc_id):
    """The type of hot-K (HOT_TYPES[K % 4]); None for other documents."""
    if doc_id.startswith("hot-") and doc_id[4:].isdigit():
        return HOT_TYPES[int(doc_id[4:]) % len(HOT_TYPES)]
    return None


class Writer:
    def __init__(self, args):
        self.args = args
        self.client = Client(args.url, timeout=args.timeout)
        self.ledger = Ledger(args.ledger)
        self.label = args.label or args.url
        self.tag = args.tag or f"w{os.getpid()}"
        self.known = {}          # doc id -> the revision we believe is current
        self.created = []        # ids we created (candidates for updates)
        self.seq = 0
        self.acked = collections.Counter()
        self.failed = collections.Counter()
        self.conflicts = 0
        self.server_errors = []     # what the node said, for the first few 5xx other than 503/507
        self.fields = {}
        for kv in args.set or []:
            k, _, v = kv.partition("=")
            try:
                self.fields[k] = json.loads(v)
            except ValueError:
                self.fields[k] = v
        self.pad = "x" * args.pad if args.pad else None
        self.new_counter = 0

    def body(self):
        self.seq += 1
        b = {"writer": self.tag, "seq": self.seq, "node": self.label, "t": round(time.time(), 6)}
        b.update(self.fields)
        if self.pad:
            b["pad"] = self.pad
        return b

    def new_id(self):
        self.new_counter += 1
        return f"{self.tag}-{self.new_counter:06d}"

    def record(self, doc_id, rev, op, cv=None):
        self.known[doc_id] = rev
        self.acked[op] += 1
        entry = {"id": doc_id, "rev": rev, "node": self.label, "op": op, "t": round(time.time(), 6), "tag": self.tag}
        if getattr(self.args, "by_version", False) and cv:
            # A writer whose revisions travel by versions (a Couchbase Lite 4 client's):
            # other nodes name them with revision IDs of their own, so the version counts.
            entry["cv"] = cv
            entry["by"] = "version"
        return entry

    def fail(self, why, resp=None):
        self.failed[why] += 1
        if self.args.verbose:
            labutil.eprint(f"{self.label}: {why}")
        # A server error other than a full disk (507) or a busy node (503) is a bug to
        # chase: say what the node answered, the first few times.
        server_error = "HTTP 5" in why and not why.endswith(("HTTP 503", "HTTP 507"))
        if server_error and len(self.server_errors) < 5:
            self.server_errors.append(f"{self.label}: {why}: {str(resp)[:300]}")

    def transport_error(self, e):
        name = type(e).__name__
        if isinstance(e, ConnectionRefusedError):
            name = "connection refused"
        elif isinstance(e, (TimeoutError,)) or "timed out" in str(e):
            name = "timeout"
        self.fail(name)
        time.sleep(self.args.retry_delay)

    def current_rev(self, doc_id):
        status, body = self.client.request("GET", docpath(doc_id))
        if status == 200:
            return body["_rev"]
        if status == 404:
            # Deleted: recreate on top of the tombstone (no _rev needed), or new.
            return None
        raise HTTPError(status, body)

    def put(self, doc_id, update):
        """One PUT; on 409 re-read the winner and try again (a few times)."""
        for attempt in range(5):
            body = self.body()
            doc_type = hot_type(doc_id)
            if doc_type:
                body["type"] = doc_type
            try:
                if update:
                    rev = self.known.get(doc_id)
                    if rev is None or attempt > 0:
                        rev = self.current_rev(doc_id)
                    if rev:
                        body["_rev"] = rev
                status, resp = self.client.request("PUT", docpath(doc_id), body=body)
            except (OSError, http.client.HTTPException, HTTPError) as e:
                self.known.pop(doc_id, None)
                self.transport_error(e)
                return
            if status in (200, 201) and isinstance(resp, dict) and resp.get("rev"):
                self.ledger.append([self.record(doc_id, resp["rev"], "put", resp.get("cv"))])
                return
            if status == 409:
                self.conflicts += 1
                update = True
                continue
            self.fail(f"HTTP {status}", resp)
            return
        self.fail("conflict retries exhausted")

    def delete(self, doc_id):
        """DELETE the current revision (a tombstone is a revision like any other)."""
        for attempt in range(5):
            try:
                rev = self.known.get(doc_id) if attempt == 0 else None
                if rev is None:
                    rev = self.current_rev(doc_id)
                if rev is None:
                    return      # already deleted
                status, resp = self.client.request("DELETE", docpath(doc_id), query={"rev": rev})
            except (OSError, http.client.HTTPException, HTTPError) as e:
                self.known.pop(doc_id, None)
                self.transport_error(e)
                return
            if status in (200, 201) and isinstance(resp, dict) and resp.get("rev"):
                self.ledger.append([self.record(doc_id, resp["rev"], "delete", resp.get("cv"))])
                self.known.pop(doc_id, None)
                return
            if status == 409:
                self.conflicts += 1
                continue
            self.fail(f"DELETE HTTP {status}", resp)
            return
        self.fail("conflict retries exhausted")

    def bulk(self, n):
        docs = []
        for _ in range(n):
            b = self.body()
            b["_id"] = self.new_id()
            docs.append(b)
        try:
            status, resp = self.client.request("POST", "/_bulk_docs", body={"docs": docs})
        except (OSError, http.client.HTTPException) as e:
            self.transport_error(e)
            self.failed["bulk docs unacknowledged"] += n
            return
        if status not in (200, 201) or not isinstance(resp, list):
            self.fail(f"bulk HTTP {status}", resp)
            self.failed["bulk docs unacknowledged"] += n
            return
        entries = []
        for d, r in zip(docs, resp):
            if isinstance(r, dict) and r.get("rev") and not r.get("error") and r.get("id") == d["_id"]:
                entries.append(self.record(d["_id"], r["rev"], "bulk", r.get("cv")))
                self.created.append(d["_id"])
            else:
                self.fail(f"bulk item {r.get('error') if isinstance(r, dict) else r}")
        self.ledger.append(entries)

    def create_one(self):
        doc_id = self.new_id()
        self.put(doc_id, update=False)
        if doc_id in self.known:
            self.created.append(doc_id)

    def run(self):
        a = self.args
        t0 = time.monotonic()
        deadline = t0 + a.duration if a.duration else None
        rng = random.Random(a.seed)

        def pause():
            if a.interval:
                time.sleep(a.interval)

        if a.docs:
            ids = expand_ids(a.docs)
            for _ in range(a.rounds):
                for doc_id in ids:
                    self.put(doc_id, update=True)
                    pause()
        if a.new:
            left = a.new
            while left > 0:
                if a.bulk > 1:
                    k = min(a.bulk, left)
                    self.bulk(k)
                else:
                    k = 1
                    self.create_one()
                left -= k
                pause()
        if deadline:
            while time.monotonic() < deadline:
                r = rng.random()
                if self.created and r < a.delete_ratio:
                    victim = self.created.pop(rng.randrange(len(self.created)))
                    self.delete(victim)
                elif self.created and r < a.delete_ratio + a.update_ratio:
                    self.put(rng.choice(self.created), update=True)
                elif a.bulk > 1:
                    self.bulk(a.bulk)
                else:
                    self.create_one()
                pause()
        self.client.close()
        dt = time.monotonic() - t0
        total = sum(self.acked.values())
        fails = ", ".join(f"{k} ×{v}" for k, v in sorted(self.failed.items())) or "none"
        print(f"{self.label} writer {self.tag}: {total} writes acknowledged "
              f"({', '.join(f'{v} {k}' for k, v in sorted(self.acked.items())) or '0'}) in {dt:.2f}s "
              f"({total / dt if dt else 0:.0f}/s); failed/unanswered: {fails}; 409 retries: {self.conflicts}",
              flush=True)
        return 0


# ----------------------------------------------------------------- verify


def vector_times(text):
    """{source: time} of a version vector's text (`time@source` items, `,` or `;` apart)."""
    times = {}
    for item in text.replace(";", ",").split(","):
        item = item.strip()
        if "@" in item:
            t, source = item.split("@", 1)
            try:
                times[source] = max(times.get(source, 0), int(t, 16))
            except ValueError:
                pass
    return times


def check_node(db_url, ledger_path, timeout, ids_filter=None):
    """Which ledger revisions does the node lack? -> {"checked", "missing": [[id, rev]]}
    An entry recorded by version (`"by": "version"`) is present when the node's vector of
    the document holds its version (a later version of the same source supersedes it)."""
    entries = Ledger(ledger_path).read()
    want = collections.defaultdict(set)
    by_version = collections.defaultdict(list)
    for e in entries:
        if ids_filter is None or e["id"] in ids_filter:
            if e.get("by") == "version":
                by_version[e["id"]].append(e)
            else:
                want[e["id"]].add(e["rev"])
    c = Client(db_url, timeout=timeout)
    missing = []
    for doc_id, versioned in sorted(by_version.items()):
        try:
            raw = c.get_json("/_raw" + docpath(doc_id))
            held = vector_times(((raw or {}).get("_sync") or {}).get("vv") or "")
        except HTTPError:
            held = {}
        for e in versioned:
            t, _, source = e["cv"].partition("@")
            if held.get(source, -1) < int(t, 16):
                missing.append([doc_id, e["rev"]])
    ids = sorted(want)
    for k in range(0, len(ids), 500):
        batch = {i: sorted(want[i]) for i in ids[k:k + 500]}
        resp = c.post_json("/_revs_diff", batch)
        for doc_id, d in (resp or {}).items():
            for rev in d.get("missing", []):
                if rev in want.get(doc_id, ()):
                    missing.append([doc_id, rev])
    c.close()
    checked = sum(len(v) for v in want.values()) + sum(len(v) for v in by_version.values())
    return {"checked": checked, "docs": len(set(want) | set(by_version)), "missing": missing}


def verify(args):
    ledger = Ledger(args.ledger)
    entries = ledger.read()
    if not entries:
        print(f"ledger {args.ledger} is empty: nothing to verify")
        return 0
    by_rev = {(e["id"], e["rev"]): e for e in entries}
    lab = None
    if args.netlab:
        lab = labutil.Lab()
        targets = [f"host{i}" for i in lab.host_numbers(args.hosts)]
        hostnum = {f"host{i}": i for i in lab.host_numbers(args.hosts)}
    else:
        targets = args.urls
    if not targets:
        print("verify: give node URLs or --netlab", file=sys.stderr)
        return 2

    def check(names):
        out = {}
        if lab:
            jobs = [(n, hostnum[n], [sys.executable, ME, "_check", "--url", lab.local_db_url(hostnum[n]),
                                     "--ledger", os.path.abspath(args.ledger), "--timeout", str(args.timeout)])
                    for n in names]
            for n, (rc, so, se) in labutil.run_in_hosts(lab, jobs, timeout=args.timeout * 10 + 30).items():
                try:
                    out[n] = json.loads(so) if rc == 0 else {"error": se.decode(errors="replace").strip()[-300:]}
                except ValueError:
                    out[n] = {"error": "bad worker output"}
        else:
            for n in names:
                try:
                    out[n] = check_node(n, args.ledger, args.timeout)
                except (OSError, HTTPError, ValueError, http.client.HTTPException) as e:
                    out[n] = {"error": f"{type(e).__name__}: {e}"}
        return out

    t0 = time.monotonic()
    results = {}
    pending = list(targets)
    polls = 0
    while True:
        polls += 1
        results.update(check(pending))
        pending = [n for n in targets if "error" in results[n] or results[n]["missing"]]
        waited = time.monotonic() - t0
        if not pending or args.wait is None or waited >= args.wait:
            break
        if not args.quiet:
            labutil.eprint(f"  {waited:6.2f}s: " + ", ".join(
                f"{n}: {'unreadable' if 'error' in results[n] else str(len(results[n]['missing'])) + ' missing'}"
                for n in pending))
        time.sleep(args.interval)
    elapsed = time.monotonic() - t0

    nodes_by_ack = collections.Counter(e["node"] for e in entries)
    print(f"ledger {args.ledger}: {len(by_rev)} acknowledged revisions of "
          f"{len({e['id'] for e in entries})} docs (" + ", ".join(
              f"{v} acked by {k}" for k, v in sorted(nodes_by_ack.items())) + ")")
    bad = 0
    for n in targets:
        r = results[n]
        if "error" in r:
            bad += 1
            print(f"  {n}: UNREADABLE: {r['error']}")
            continue
        if r["missing"]:
            bad += 1
            print(f"  {n}: {len(r['missing'])} of {r['checked']} acknowledged revisions MISSING")
            for doc_id, rev in r["missing"][:args.max_list]:
                e = by_rev.get((doc_id, rev), {})
                print(f"      {doc_id} {rev} (acked by {e.get('node')} at {e.get('t')}, {e.get('op')})")
        else:
            print(f"  {n}: all {r['checked']} acknowledged revisions present")
    if args.wait is not None:
        print(f"verify {'passed' if not bad else 'FAILED'} after {elapsed:.2f}s ({polls} polls)")
    else:
        print(f"verify {'passed' if not bad else 'FAILED'}")
    return 0 if not bad else 1


def stats(args):
    entries = Ledger(args.ledger).read()
    by = collections.Counter((e["node"], e["op"]) for e in entries)
    print(f"{args.ledger}: {len(entries)} acknowledged writes, {len({e['id'] for e in entries})} docs")
    for (node, op), v in sorted(by.items()):
        print(f"  {node} {op}: {v}")
    if entries:
        print(f"  first {entries[0]['t']:.3f}, last {entries[-1]['t']:.3f}")
    return 0


# ----------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description="Acknowledged-writes ledger for Shoal.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p):
        p.add_argument("--ledger", help="ledger file (default NETLAB_DIR/ledger.jsonl with --netlab, else ./ledger.jsonl)")
        p.add_argument("--timeout", type=float, default=5.0, help="per-request timeout (s)")

    w = sub.add_parser("write", help="write documents and record the acknowledged ones")
    common(w)
    g = w.add_mutually_exclusive_group(required=True)
    g.add_argument("--url", help="database URL, e.g. http://127.0.0.1:4984/db")
    g.add_argument("--host", type=int, help="with --netlab: the host whose node gets the writes")
    w.add_argument("--netlab", action="store_true", help="write to a host of the running netlab")
    w.add_argument("--label", help="name of the node in the ledger (default: host<I> or the URL)")
    w.add_argument("--tag", help="writer name, prefix of created doc IDs (default w<pid>)")
    w.add_argument("--by-version", action="store_true",
                   help="record each revision's current version (cv) too, and verify it by version")
    w.add_argument("--new", type=int, default=0, metavar="N", help="create N new documents")
    w.add_argument("--bulk", type=int, default=1, metavar="B", help="create documents in _bulk_docs batches of B")
    w.add_argument("--docs", metavar="SPEC", help="update (or create) these docs: conf-0..9 or a,b,c")
    w.add_argument("--rounds", type=int, default=1, help="with --docs: update each doc this many times")
    w.add_argument("--duration", type=float, metavar="S", help="keep writing for S seconds (creates + updates)")
    w.add_argument("--update-ratio", type=float, default=0.3, help="with --duration: share of updates (0.3)")
    w.add_argument("--delete-ratio", type=float, default=0.0, help="with --duration: share of deletes (0)")
    w.add_argument("--set", action="append", metavar="K=V", help="add this field to every body (V as JSON if it parses)")
    w.add_argument("--pad", type=int, default=0, metavar="BYTES", help="add a padding string of this size")
    w.add_argument("--interval", type=float, default=0.0, help="sleep between writes (s)")
    w.add_argument("--retry-delay", type=float, default=0.1, help="sleep after a transport error (s)")
    w.add_argument("--seed", type=int, default=None)
    w.add_argument("--verbose", action="store_true")

    v = sub.add_parser("verify", help="check every recorded revision exists on every node")
    common(v)
    v.add_argument("urls", nargs="*", help="database URLs")
    v.add_argument("--netlab", action="store_true", help="check the hosts of the running netlab")
    v.add_argument("--hosts", help="with --netlab: only these hosts (1,3 or 1-4)")
    v.add_argument("--wait", type=float, metavar="S", help="retry until every node has every revision or S seconds passed")
    v.add_argument("--interval", type=float, default=0.5)
    v.add_argument("--max-list", type=int, default=10, help="missing revisions listed per node")
    v.add_argument("--quiet", action="store_true")

    s = sub.add_parser("stats", help="summarize the ledger")
    common(s)
    s.add_argument("--netlab", action="store_true")

    c = sub.add_parser("_check", help=argparse.SUPPRESS)  # worker run inside a host
    common(c)
    c.add_argument("--url", required=True)

    args = ap.parse_args()
    if args.ledger is None:
        args.ledger = default_ledger(getattr(args, "netlab", False))

    try:
        if args.cmd == "write":
            if args.host is not None:
                if not args.netlab:
                    ap.error("--host needs --netlab (or give --url)")
                labutil.require_root()
                lab = labutil.Lab()
                lab.host_numbers(str(args.host))
                # Re-run this writer inside the host, against the node's local URL.
                argv = [sys.executable, ME, "write", "--url", lab.local_db_url(args.host),
                        "--label", args.label or f"host{args.host}", "--ledger", os.path.abspath(args.ledger)]
                for name in ("tag", "new", "bulk", "docs", "rounds", "duration", "update_ratio", "delete_ratio", "pad",
                             "interval", "retry_delay", "seed", "timeout"):
                    val = getattr(args, name)
                    if val is not None:
                        argv += ["--" + name.replace("_", "-"), str(val)]
                for kv in args.set or []:
                    argv += ["--set", kv]
                if args.verbose:
                    argv.append("--verbose")
                sys.stdout.flush()
                os.execvp("ip", lab.ip_netns_exec(args.host, argv))
            if not (args.new or args.docs or args.duration):
                ap.error("nothing to write: give --new N, --docs SPEC or --duration S")
            return Writer(args).run()
        if args.cmd == "verify":
            if args.netlab:
                labutil.require_root()
            return verify(args)
        if args.cmd == "stats":
            return stats(args)
        if args.cmd == "_check":
            json.dump(check_node(args.url, args.ledger, args.timeout), sys.stdout)
            return 0
    except labutil.LabError as e:
        print(f"ledger: {e}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":
    sys.exit(main())
