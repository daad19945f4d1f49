#!/usr/bin/env python3
"""linkwatch — a timeline per mesh link of a netlab lab, from the nodes' own reports.

Each node is polled (admin `GET /{db}/_peers`, from inside its own host, every
--interval s) by a small worker; a sample goes out only when something in it
changed, so an idle mesh costs one request per interval per node and no output.
From the samples, per link (host pair):

- up:           either side lists the other as connected;
- transferring: a side's documents counters moved (docs_pushed / docs_pulled), or
                bytes moved while something was pending on the link; a node whose
                update_seq moved counts as working too (it stored something);
- idle:         the nodes still differ (before convergence) and no link moves.

`analyse` turns the samples into the breakdown scripts/chaos prints after the final
heal: re-link time (heal -> every link that is up at the end is up), transfer time,
idle time (split into idle while links were still coming back and idle with every
link up: the second is a defect, nothing stops the backlog from moving), and when
every node reported `in_step`. Stdlib only; see docs/netlab.md.

  linkwatch.py watch --admin http://127.0.0.1:4985 --db db [--interval 0.15]   (worker)
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from labutil import Client, HTTPError  # noqa: E402

ME = os.path.realpath(__file__)


# ------------------------------------------------------------------ worker


def compact(peers_json):
    """The part of a `_peers` answer the timeline keeps (what moves, not clocks)."""
    out = {"seq": peers_json.get("last_seq"), "in_step": bool(peers_json.get("in_step")),
           "unlinked": peers_json.get("unlinked") or [], "peers": []}
    for p in peers_json.get("peers", []):
        ps = p.get("pending_send") or {}
        pr = p.get("pending_receive")
        out["peers"].append([
            p.get("node_id") or p.get("address") or "?",
            p.get("role"), p.get("state"), bool(p.get("connected_since")),
            p.get("docs_pushed", 0), p.get("docs_pulled", 0), p.get("bytes_sent", 0), p.get("bytes_received", 0),
            ps.get("sequences", 0), (pr or {}).get("sequences", -1) if pr is not None else -1,
            bool(p.get("idle")), bool(p.get("in_step")),
        ])
    out["peers"].sort(key=lambda r: (str(r[0]), str(r[1])))
    return out


# Field positions of a compact peer row.
NODE, ROLE, STATE, CONNECTED, PUSHED, PULLED, BSENT, BRECV, PSEND, PRECV, IDLE, INSTEP = range(12)


def watch(admin, db, interval, timeout):
    """Worker: one JSON line per changed sample ({"t", "seq", "in_step", "unlinked",
    "peers"} or {"t", "down": reason}); the node's ID first ({"node": id})."""
    c = Client(admin, timeout=timeout)
    last = None
    said_node = None
    while True:
        t = time.time()
        try:
            body = c.get_json(f"/{db}/_peers")
            node = body.get("node_id")
            if node and node != said_node:
                print(json.dumps({"t": t, "node": node}), flush=True)
                said_node = node
            sample = compact(body)
        except (OSError, HTTPError, ValueError) as e:
            c.close()
            sample = {"down": type(e).__name__}
        if sample != last:
            print(json.dumps(dict(sample, t=round(t, 3))), flush=True)
            last = sample
        time.sleep(max(0.0, interval - (time.time() - t)))


# ------------------------------------------------------------------ collector


class LinkWatch:
    """Runs one watch worker per host (inside it) and keeps every sample."""

    def __init__(self, lab, hosts, interval=0.15, timeout=1.0):
        self.samples = {i: [] for i in hosts}
        self.node_ids = {}
        self.procs = []
        self.lock = threading.Lock()
        for i in hosts:
            # Inside the host in the netns lab; a real host by its admin URL (chaoshosts).
            admin = lab.admin_url(i) if hasattr(lab, "admin_url") else f"http://127.0.0.1:{lab.hosts[i].get('admin_port', 4985)}"
            argv = lab.ip_netns_exec(i, [sys.executable, ME, "watch", "--admin", admin, "--db", lab.db,
                                         "--interval", str(interval), "--timeout", str(timeout)])
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                 text=True)
            self.procs.append(p)
            threading.Thread(target=self._read, args=(i, p), daemon=True).start()

    def _read(self, i, p):
        for line in p.stdout:
            try:
                s = json.loads(line)
            except ValueError:
                continue
            with self.lock:
                if "node" in s:
                    self.node_ids[i] = s["node"]
                else:
                    self.samples[i].append(s)

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        time.sleep(0.05)

    def snapshot(self):
        with self.lock:
            return {i: list(v) for i, v in self.samples.items()}, dict(self.node_ids)


# ------------------------------------------------------------------ analysis


def union_length(intervals, lo, hi):
    """Total length of the union of (a, b) intervals clipped to [lo, hi]."""
    total, end = 0.0, lo
    for a, b in sorted((max(a, lo), min(b, hi)) for a, b in intervals):
        if b <= a:
            continue
        if a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def gaps(intervals, lo, hi):
    """The parts of [lo, hi] no interval covers, as (a, b) pairs."""
    out, end = [], lo
    for a, b in sorted((max(a, lo), min(b, hi)) for a, b in intervals):
        if b <= a:
            continue
        if a > end:
            out.append((end, a))
        end = max(end, b)
    if end < hi:
        out.append((end, hi))
    return out


def analyse(samples, node_ids, t_heal, t_conv, t_end=None):
    """The breakdown after the final heal. samples: {host: [sample…]} as the workers
    print them; node_ids: {host: node ID}; t_conv: when the nodes converged (epoch; the
    last update_seq change), None if they did not; t_end: the end of the watch."""
    host_of = {nid: h for h, nid in node_ids.items()}
    hosts = sorted(samples)
    last_t = max((s["t"] for v in samples.values() for s in v), default=t_heal)
    t_end = t_end or last_t
    horizon = t_conv if t_conv is not None else t_end
    link_up = {}        # (i, j) -> [(a, b)] from either side
    link_moving = {}    # (i, j) -> [(a, b)]
    node_moving = {i: [] for i in hosts}
    node_down = {i: [] for i in hosts}
    in_step_since = {}  # host -> time of its last switch to in_step (None: not in step at the end)
    false_claims = []

    def pair(i, j):
        return (min(i, j), max(i, j))

    for i in hosts:
        prev = None
        for k, s in enumerate(samples[i]):
            nxt = samples[i][k + 1]["t"] if k + 1 < len(samples[i]) else t_end
            if "down" in s:
                node_down[i].append((s["t"], nxt))
                prev = None
                continue
            for row in s["peers"]:
                j = host_of.get(row[NODE])
                if j is None:
                    continue
                if row[CONNECTED]:
                    link_up.setdefault(pair(i, j), []).append((s["t"], nxt))
            if prev is not None:
                a = prev["t"]
                if s["seq"] != prev["seq"]:
                    node_moving[i].append((a, s["t"]))
                before = {(r[NODE], r[ROLE]): r for r in prev["peers"]}
                for row in s["peers"]:
                    j = host_of.get(row[NODE])
                    old = before.get((row[NODE], row[ROLE]))
                    if j is None or old is None:
                        continue
                    # (counters only grow on one link; a new connection may start them over)
                    docs = row[PUSHED] > old[PUSHED] or row[PULLED] > old[PULLED]
                    pending = row[PSEND] > 0 or row[PRECV] > 0 or old[PSEND] > 0 or old[PRECV] > 0
                    moved_bytes = row[BSENT] > old[BSENT] or row[BRECV] > old[BRECV]
                    if docs or (pending and moved_bytes):
                        link_moving.setdefault(pair(i, j), []).append((a, s["t"]))
            if s["in_step"]:
                in_step_since.setdefault(i, s["t"])
            else:
                in_step_since.pop(i, None)
            prev = s
        if not samples[i] or "down" in samples[i][-1]:
            in_step_since.pop(i, None)

    # A node that said in step and then stored something more was wrong (no writers
    # after the heal): the claim is checked against its own sequence.
    for i in hosts:
        claimed = None
        for s in samples[i]:
            if s["t"] < t_heal or "down" in s:
                claimed = None
                continue
            if claimed is not None and s["seq"] != claimed["seq"]:
                false_claims.append({"host": i, "claimed_at": round(claimed["t"] - t_heal, 3),
                                     "seq_then": claimed["seq"], "seq_later": s["seq"],
                                     "moved_at": round(s["t"] - t_heal, 3)})
                claimed = None
            if s["in_step"]:
                claimed = claimed or s
            else:
                claimed = None

    moving = [iv for v in link_moving.values() for iv in v] + [iv for v in node_moving.values() for iv in v]
    # The links needed at the end: those up in the last sample of either side.
    final_links = set()
    for i in hosts:
        last = next((s for s in reversed(samples[i]) if "down" not in s), None)
        if last is None:
            continue
        for row in last["peers"]:
            j = host_of.get(row[NODE])
            if j is not None and row[CONNECTED]:
                final_links.add(pair(i, j))
    relink = {}
    for link in sorted(final_links):
        ups = sorted(link_up.get(link, []))
        # The start of the last continuous up stretch (samples of both sides merged).
        start = None
        end = None
        for a, b in ups:
            if end is None or a > end + 0.5:       # a gap longer than a poll or two: it was down
                start = a
            end = max(end or b, b)
        relink[link] = max(0.0, (start if start is not None else t_heal) - t_heal)
    relinked_at = t_heal + max(relink.values(), default=0.0)
    span = max(0.0, horizon - t_heal)
    # Until every host's worker has sent its first sample nothing is known: that time is
    # reported as unobserved, not as idle (a loaded lab once started them 2.3 s late).
    firsts = [v[0]["t"] for v in samples.values() if v]
    observed_from = min(max(max(firsts, default=t_heal), t_heal), horizon)
    unobserved = observed_from - t_heal
    transfer = union_length(moving, t_heal, horizon)
    idle_gaps = gaps(moving, observed_from, horizon)
    idle = max(0.0, span - unobserved - union_length(moving, observed_from, horizon))
    idle_relinking = sum(max(0.0, min(b, relinked_at) - a) for a, b in idle_gaps)
    all_in_step = None
    if len(in_step_since) == len(hosts):
        all_in_step = max(in_step_since.values()) - t_heal

    def fmt_gap(a, b):
        down_links = [f"h{x}-h{y}" for (x, y) in sorted(final_links)
                      if not any(p <= a < q + 0.01 for p, q in link_up.get((x, y), []))]
        down_nodes = [f"h{i}" for i in hosts if any(p <= a < q for p, q in node_down[i])]
        return {"from": round(a - t_heal, 3), "to": round(b - t_heal, 3), "seconds": round(b - a, 3),
                "links_down": down_links, "nodes_unreadable": down_nodes}

    per_link = {}
    for link in sorted(set(link_up) | set(link_moving) | final_links):
        per_link[f"h{link[0]}-h{link[1]}"] = {
            "relinked_after": round(relink[link], 3) if link in relink else None,
            "up": round(union_length(link_up.get(link, []), t_heal, horizon), 3),
            "transferring": round(union_length(link_moving.get(link, []), t_heal, horizon), 3),
            "last_transfer_after": round(max((b for _, b in link_moving.get(link, [])), default=t_heal) - t_heal, 3),
        }
    return {
        "heal_to_converged": round(span, 3) if t_conv is not None else None,
        "relink": round(max(relink.values(), default=0.0), 3),
        "slowest_link": (max(relink, key=relink.get) if relink else None),
        "transfer": round(transfer, 3),
        "idle": round(idle, 3),
        "unobserved": round(unobserved, 3),
        "idle_relinking": round(idle_relinking, 3),
        "idle_linked": round(idle - idle_relinking, 3),
        "all_in_step_after": round(all_in_step, 3) if all_in_step is not None else None,
        "false_in_step_claims": false_claims,
        "idle_gaps": [fmt_gap(a, b) for a, b in idle_gaps if b - a >= 0.3],
        "links": per_link,
        "last_seq_change_after": round(max((b for v in node_moving.values() for _, b in v), default=t_heal) - t_heal, 3),
    }


def report_lines(b, interval, max_links=None):
    """The breakdown as text lines (scripts/chaos; mesh-lab gives max_links: only the links
    that re-linked or transferred last)."""
    out = []
    if b.get("heal_to_converged") is None:
        out.append("timeline:           nodes did not converge; breakdown to the end of the watch")
    slow = b.get("slowest_link")
    slow = f" (slowest h{slow[0]}-h{slow[1]})" if slow else ""
    out.append(f"after the final heal (every node's _peers polled every {interval:g}s):")
    out.append(f"  re-link:          {b['relink']:.2f}s until every link up at the end was up{slow}")
    out.append(f"  transfer:         {b['transfer']:.2f}s with some link moving documents")
    out.append(f"  idle:             {b['idle']:.2f}s nodes differ and no link moves "
               f"({b['idle_relinking']:.2f}s while re-linking, {b['idle_linked']:.2f}s with every link up)")
    if b.get("unobserved", 0) > 0:
        out.append(f"  unobserved:       {b['unobserved']:.2f}s after the heal before every node's first sample "
                   "(not counted as idle)")
    ais = b.get("all_in_step_after")
    out.append("  all in step:      " + (f"{ais:.2f}s after the heal" if ais is not None else "not every node in step"))
    for g in b.get("idle_gaps", [])[:8]:
        ctx = []
        if g["links_down"]:
            ctx.append("links down: " + " ".join(g["links_down"]))
        if g["nodes_unreadable"]:
            ctx.append("unreadable: " + " ".join(g["nodes_unreadable"]))
        out.append(f"  idle gap {g['from']:6.2f}-{g['to']:6.2f}s ({g['seconds']:.2f}s)" +
                   (": " + "; ".join(ctx) if ctx else ": every link up, nothing moving"))
    links = list(b.get("links", {}).items())
    if max_links is not None and len(links) > max_links:
        def last(item):
            v = item[1]
            r = v["relinked_after"]
            return max(float("inf") if r is None else r, v["last_transfer_after"])
        out.append(f"  ({max_links} of {len(links)} links: those that re-linked or transferred last)")
        links = sorted(links, key=last, reverse=True)[:max_links]
    for link, v in links:
        r = v["relinked_after"]
        out.append(f"  link {link:9s} up {v['up']:6.2f}s, transferring {v['transferring']:5.2f}s, "
                   f"last transfer at {v['last_transfer_after']:5.2f}s" +
                   (f", re-linked at {r:.2f}s" if r is not None else ", not up at the end"))
    for c in b.get("false_in_step_claims", []):
        out.append(f"  note: host {c['host']} said in step at {c['claimed_at']}s (seq {c['seq_then']}) and stored "
                   f"more by {c['moved_at']}s (seq {c['seq_later']}): in step with the peers it knew then")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["watch"])
    ap.add_argument("--admin", required=True)
    ap.add_argument("--db", default="db")
    ap.add_argument("--interval", type=float, default=0.15)
    ap.add_argument("--timeout", type=float, default=1.0)
    args = ap.parse_args()
    try:
        watch(args.admin, args.db, args.interval, args.timeout)
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
