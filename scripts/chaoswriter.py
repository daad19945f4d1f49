#!/usr/bin/env python3
"""chaoswriter.py — the writers of scripts/chaos: one per host.

Two halves:

- The worker (`chaoswriter.py --url … --ledger …`, run by chaos inside one
  host's network namespace with `ip netns exec`): reads one JSON command per
  line on stdin, writes one JSON result per line on stdout. Its seeded
  operations — _bulk_docs creates, single PUT creates, updates with 409
  re-read/retry, deletes, attachments, updates of the shared hot documents —
  go through ledger.py's Writer, so every acknowledged revision lands in the
  ledger.
- HostWriter (in chaos's own process): a thread that drives one worker.

Two ways of writing:

- Closed loop (chaos's default): bursts of 3-12 operations, each sent when the
  one before was answered, a pause of about --pace between bursts. The mesh's
  speed sets the rate.
- Open loop (`chaos --rate W`): every writer has a fixed timetable of
  W/hosts slots per second (evenly spaced, a seeded phase per host), one slot
  per write attempt (a revision: a PUT, a DELETE, an attachment; a
  _bulk_docs of k documents takes k consecutive slots and is sent at the
  first). A slot is sent at its time whatever the replies did; a writer whose
  request took longer sends the slots it owes at once, one after the other,
  and records how late each one was (its start minus its time on the
  timetable). It never drops a slot to catch up: the slots still unsent when
  the run ends are reported as missed. The rate asked for is the rate offered,
  and the report says how far the writers fell behind it.

Stdlib only. See docs/netlab.md (chaos) and docs/reliability.md.
"""

import argparse
import collections
import http.client
import json
import os
import queue
import random
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)
ME = os.path.realpath(__file__)

# How often (s) a timed writer comes back to its thread, which then takes the
# nemesis's edits (if any) and sends the next stretch of the timetable.
STRETCH = 0.25
# A slot counts as late when it is sent more than this after its time.
LATE = 0.1


# =================================================================== timings


def bucket_ms(seconds):
    """A lateness or latency in ms, rounded to a bucket: 1 ms below 100 ms,
    10 ms below 1 s, 100 ms above (a few hundred keys even in a long run)."""
    ms = max(0.0, seconds) * 1000.0
    if ms < 100:
        return int(ms)
    if ms < 1000:
        return int(ms) // 10 * 10
    return int(ms) // 100 * 100


def percentile(hist, q):
    """The q-quantile (0..1) of a {bucket_ms: count} histogram, in ms."""
    total = sum(hist.values())
    if not total:
        return 0
    rank = q * (total - 1)
    seen = 0
    for k in sorted(hist):
        seen += hist[k]
        if seen > rank:
            return k
    return max(hist)


def merge_schedules(items):
    """Sums the timetable stats of several writers (the `schedule` of their last result)."""
    out = {"due": 0, "issued": 0, "late": 0, "late_1s": 0, "max_late": 0.0,
           "lateness": collections.Counter(), "latency": collections.Counter()}
    for s in items:
        if not s:
            continue
        for k in ("due", "issued", "late", "late_1s"):
            out[k] += s.get(k, 0)
        out["max_late"] = max(out["max_late"], s.get("max_late", 0.0))
        for k in ("lateness", "latency"):
            out[k].update({int(b): n for b, n in s.get(k, {}).items()})
    return out


def rate_report(rate, duration, writers, sched, acked):
    """The report's lines for an open-loop run."""
    missed = sched["due"] - sched["issued"]
    late, lat = sched["lateness"], sched["latency"]
    return [
        f"rate asked:         {rate:g} write attempts/s ({writers} writers × {rate / writers:g}/s, "
        f"seeded timetables): {sched['due']} slots in {duration:g}s",
        f"rate achieved:      {sched['issued'] / duration:.1f} attempts/s ({sched['issued']} slots sent, "
        f"{missed} missed); {acked / duration:.1f} acknowledged writes/s",
        f"behind timetable:   {sched['late']} slots sent > {LATE:g}s late, {sched['late_1s']} > 1s; "
        f"lateness p50 {percentile(late, 0.5)} ms, p99 {percentile(late, 0.99)} ms, "
        f"max {sched['max_late'] * 1000:.0f} ms",
        f"request time:       p50 {percentile(lat, 0.5)} ms, p99 {percentile(lat, 0.99)} ms "
        f"(a slot's operation, 409 retries included)",
        "timetable kept:     " + ("yes" if missed == 0 and sched["late"] <= sched["due"] // 100 else
                                  "NO (slots missed, or more than 1% late)"),
    ]


# =================================================================== worker
# Runs inside one host (ip netns exec).


def worker_main(args):
    import ledger
    from labutil import Client, docpath

    wargs = argparse.Namespace(url=args.url, timeout=args.timeout, ledger=args.ledger, label=args.label,
                               tag=args.tag, set=None, pad=0, verbose=False, retry_delay=0.1,
                               by_version=args.by_version)
    w = ledger.Writer(wargs)
    rng = random.Random(args.seed)
    att_conn = Client(args.url, timeout=args.timeout)
    # The timetable (open loop): slot k is due at t0 + k * period (time.monotonic(),
    # the same clock in every process of the machine).
    table = {"t0": 0.0, "period": 1.0, "slots": 0, "next": 0}
    sched = {"due": 0, "issued": 0, "late": 0, "late_1s": 0, "max_late": 0.0,
             "lateness": collections.Counter(), "latency": collections.Counter()}

    def attach(doc_id, size):
        """PUT an attachment on doc_id (current winner, 409 -> re-read)."""
        data = rng.randbytes(size) if hasattr(rng, "randbytes") else bytes(rng.getrandbits(8) for _ in range(size))
        for attempt in range(5):
            try:
                rev = w.known.get(doc_id) if attempt == 0 else None
                if rev is None:
                    rev = w.current_rev(doc_id)
                path = att_conn.base_path + docpath(doc_id) + f"/att-{rng.randrange(3)}.bin"
                if rev:
                    path += f"?rev={rev}"
                if att_conn.conn is None:
                    att_conn.conn = http.client.HTTPConnection(att_conn.host, att_conn.port, timeout=args.timeout)
                att_conn.conn.request("PUT", path, body=data, headers={"Content-Type": "application/octet-stream"})
                resp = att_conn.conn.getresponse()
                payload = resp.read()
                status = resp.status
            except (OSError, http.client.HTTPException, ledger.HTTPError) as e:
                att_conn.close()
                w.known.pop(doc_id, None)
                w.transport_error(e)
                return False
            try:
                body = json.loads(payload) if payload else {}
            except ValueError:
                body = {}
            if status in (200, 201) and body.get("rev"):
                w.ledger.append([w.record(doc_id, body["rev"], "att", body.get("cv"))])
                return True
            if status == 409:
                w.conflicts += 1
                w.known.pop(doc_id, None)
                continue
            w.fail(f"att HTTP {status}")
            return False
        w.fail("conflict retries exhausted")
        return False

    def one_op(hot, budget=None):
        """One seeded operation; returns the number of revisions it tried to write
        (a _bulk_docs of at most `budget` documents)."""
        r = rng.random()
        if r < 0.25:
            n = rng.randint(2, 10)
            if budget is not None:
                n = min(n, budget)
            w.bulk(n)
            return n
        if r < 0.40:
            w.create_one()
        elif r < 0.65 and w.created:
            w.put(rng.choice(w.created), update=True)
        elif r < 0.75 and w.created:
            victim = w.created.pop(rng.randrange(len(w.created)))
            w.delete(victim)
        elif r < 0.87 and w.created:
            attach(rng.choice(w.created), rng.choice([64, 700, 4096, 20000]))
        elif hot:
            w.put(f"hot-{rng.randrange(hot)}", update=True)
        else:                   # a client writer: its own documents only
            w.create_one()
        return 1

    def timed(until, hot):
        """Sends the timetable's slots due before `until` (monotonic), each at its
        time or, when behind, at once; sleeps until `until` if none is due."""
        t0, period = table["t0"], table["period"]
        while table["next"] < table["slots"]:
            k = table["next"]
            due = t0 + k * period
            t = time.monotonic()
            if due >= until:
                if until > t:
                    time.sleep(until - t)
                return
            if due > t:
                time.sleep(due - t)
                t = time.monotonic()
            n = one_op(hot, budget=table["slots"] - k)
            took = time.monotonic() - t
            sched["latency"][bucket_ms(took)] += 1
            for j in range(n):          # a bulk's later slots: sent early or less late
                behind = t - (t0 + (k + j) * period)
                sched["lateness"][bucket_ms(behind)] += 1
                sched["late"] += behind > LATE
                sched["late_1s"] += behind > 1.0
                sched["max_late"] = max(sched["max_late"], behind)
            sched["issued"] += n
            table["next"] = k + n

    def snapshot():
        res = {"acked": dict(w.acked), "failed": dict(w.failed), "retries409": w.conflicts,
               "server_errors": w.server_errors}
        if table["slots"]:
            res["next"] = table["next"]
            res["schedule"] = dict(sched, due=table["slots"])
        return res

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        cmd = json.loads(line)
        op = cmd["op"]
        res = {"op": op}
        if op == "quit":
            break
        if op == "ops":
            for _ in range(cmd["n"]):
                one_op(cmd["hot"])
        elif op == "timetable":
            table.update(t0=cmd["t0"], period=cmd["period"], slots=cmd["slots"], next=0)
        elif op == "timed":
            timed(cmd["until"], cmd["hot"])
        elif op == "edit":       # the same documents edited on one side of a partition
            before = sum(w.acked.values())
            w.fields = {"side": cmd["side"]}
            acked = []
            for doc_id in cmd["docs"]:
                n0 = sum(w.acked.values())
                w.put(doc_id, update=True)
                if sum(w.acked.values()) > n0:
                    acked.append(doc_id)
            w.fields = {}
            res["acked_docs"] = acked
            res["n"] = sum(w.acked.values()) - before
        elif op == "seed":
            for doc_id in cmd["docs"]:
                w.put(doc_id, update=True)
        res.update(snapshot())
        print(json.dumps(res), flush=True)
    w.client.close()
    att_conn.close()
    print(json.dumps({"op": "bye", **snapshot()}), flush=True)
    return 0


# =================================================================== driver (chaos's process)


class HostWriter(threading.Thread):
    """Drives one worker for host i (inside it, in the netns lab; beside the controller, on
    real hosts: `lab.writer_argv`): its own seeded stream of operations
    (closed-loop bursts, or a timetable when `rate` is given: that host's share,
    in write attempts per second, from `start` for `duration` seconds, both on
    time.monotonic()), plus the edits the nemesis asks for (they go first)."""

    def __init__(self, lab, i, seed, hot, ledger_path, stop, pace=0.2, rate=None, start=None, duration=None,
                 label=None, tag=None, by_version=False):
        super().__init__(daemon=True)
        self.lab, self.i, self.hot, self.stop, self.pace = lab, i, hot, stop, pace
        self.rng = random.Random(f"{seed}-writer-{i}")
        self.rate = rate
        if rate:
            period = 1.0 / rate
            self.timetable = {"op": "timetable", "period": period, "slots": int(duration * rate),
                              "t0": start + self.rng.uniform(0, period)}
        self.requests = queue.Queue()
        self.proc = subprocess.Popen(
            lab.writer_argv(i, [sys.executable, ME, "--url", lab.db_url(i),
             "--ledger", ledger_path, "--label", label or f"host{i}", "--tag", tag or f"c{i}",
             "--seed", f"{seed}{i:03d}"] + (["--by-version"] if by_version else [])),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        self.last = {"acked": {}, "failed": {}, "retries409": 0}
        self.ops = 0
        self.error = None

    def call(self, cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"host {self.i}: worker exited: {self.proc.stderr.read()[-500:]}")
        res = json.loads(line)
        self.last = res
        return res

    def next_command(self):
        """The next command of the writer's own stream; None when its timetable is done."""
        if not self.rate:
            cmd = {"op": "ops", "n": self.rng.randint(3, 12), "hot": self.hot}
            self.ops += cmd["n"]
            return cmd
        if self.last.get("next", 0) >= self.timetable["slots"]:
            return None
        return {"op": "timed", "until": time.monotonic() + STRETCH, "hot": self.hot}

    def run(self):
        try:
            if self.rate:
                self.call(self.timetable)
            while not self.stop.is_set():
                try:
                    cmd, box = self.requests.get_nowait()
                except queue.Empty:
                    cmd, box = self.next_command(), None
                    if cmd is None:         # timetable done: only edits from now on
                        self.stop.wait(0.1)
                        continue
                res = self.call(cmd)
                if box is not None:
                    box.put(res)
                elif not self.rate:
                    self.stop.wait(self.rng.uniform(0.5, 1.5) * self.pace)
        except Exception as e:  # noqa: BLE001
            self.error = str(e)
        while True:         # edits asked for after the stop: not done
            try:
                _, box = self.requests.get_nowait()
                box.put({"acked_docs": []})
            except queue.Empty:
                break

    def finish(self, timeout=30):
        try:
            self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.proc.stdin.close()
            for line in self.proc.stdout:
                res = json.loads(line)
                if res.get("op") == "bye":
                    self.last = res
            self.proc.wait(timeout=timeout)
        except (OSError, ValueError, subprocess.TimeoutExpired) as e:
            self.error = self.error or f"finish: {e}"
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--ledger", required=True)
    ap.add_argument("--label")
    ap.add_argument("--tag")
    ap.add_argument("--by-version", action="store_true", help="record revisions by version too (a CBMobile_4 client)")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--timeout", type=float, default=5.0)
    return worker_main(ap.parse_args())


if __name__ == "__main__":
    sys.exit(main())
