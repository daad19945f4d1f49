#!/usr/bin/env python3
"""A one-shot pull (or push) between two `shoal serve` processes on loopback, as a user
runs it, for A/B comparisons of builds and for profiles of one side (the NodeProcesses
benchmark measures the same; this script alternates builds in one go and can attach perf).

  pull-two-process.py [--docs N] [--rounds R] [--direction pull|push] [--perf target|source] BIN [BIN...]

For each round and each binary: a source node is loaded with N new documents (random
32-hex IDs, ~1 KB bodies, `_bulk_docs` of 1,000), a fresh target pulls them
(`PUT /db/_replication/p1 {"remote": ..., "direction": "pull"}`; with `--direction push`
the source pushes to the fresh target instead), and the script prints
the pull's rate and each process's CPU per 1,000 documents (utime+stime from /proc).
With several binaries or rounds it ends with the medians. `--perf SIDE` records
`perf record -e cpu-clock --call-graph dwarf` of that process during the pull into
/tmp/DIRECTION-SIDE-<binary name>.data (then `perf script -F tid,ip,sym` and
scripts/pull-categories.py). Uses ports 15984-16985 on 127.0.0.1.
"""
import argparse, os, random, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from labutil import Client  # noqa: E402  (scripts/labutil.py: JSON over HTTP)


def start(binary, label, port, admin):
    directory = tempfile.mkdtemp(prefix="shoal-pull-" + label + "-")
    process = subprocess.Popen(
        [binary, "serve", "--data", directory, "--db", "db", "--interface", "127.0.0.1", "--port", str(port),
         "--admin-port", str(admin), "--no-discovery"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):
        try:
            status, _ = request(admin, "GET", "/db")
            if status == 200:
                return process, directory
        except OSError:
            time.sleep(0.05)
    process.kill()
    sys.exit(f"{binary} did not start")


def request(port, method, path, body=None):
    """(status, parsed JSON) of one request to a node on loopback."""
    return Client(f"http://127.0.0.1:{port}", timeout=600).request(method, path, body=body)


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pull_once(binary, documents, perf_side, direction="pull"):
    source, source_dir = start(binary, "source", 15984, 15985)
    target, target_dir = None, None
    try:
        generator = random.Random(7)
        notes = "x" * 700
        for first in range(0, documents, 1000):
            docs = [{"_id": "%032x" % generator.getrandbits(128), "type": "order", "n": n, "notes": notes,
                     "status": "awaiting_shipment"} for n in range(first, min(first + 1000, documents))]
            status, body = request(15985, "POST", "/db/_bulk_docs", {"docs": docs})
            if status != 201:
                sys.exit(f"_bulk_docs answered {status}: {str(body)[:200]}")
        target, target_dir = start(binary, "target", 16984, 16985)
        perf = None
        if perf_side:
            pid = (source if perf_side == "source" else target).pid
            output = f"/tmp/{direction}-{perf_side}-{os.path.basename(binary)}.data"
            perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "999", "--call-graph", "dwarf,16384",
                                     "-o", output, "-p", str(pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)
        source_cpu, target_cpu = cpu_seconds(source.pid), cpu_seconds(target.pid)
        began = time.time()
        if direction == "pull":
            status, body = request(16985, "PUT", "/db/_replication/p1",
                                   {"remote": "ws://127.0.0.1:15984/db", "direction": "pull"})
        else:
            status, body = request(15985, "PUT", "/db/_replication/p1",
                                   {"remote": "ws://127.0.0.1:16984/db", "direction": "push"})
        if status >= 300:
            sys.exit(f"PUT _replication answered {status}: {str(body)[:200]}")
        while request(16985, "GET", "/db")[1]["doc_count"] < documents:
            time.sleep(0.005)
        elapsed = time.time() - began
        source_used = cpu_seconds(source.pid) - source_cpu
        target_used = cpu_seconds(target.pid) - target_cpu
        if perf:
            perf.send_signal(2)
            perf.wait()
        return documents / elapsed, source_used * 1e6 / documents, target_used * 1e6 / documents
    finally:
        for process in (source, target):
            if process:
                process.terminate()
                process.wait()
        for directory in (source_dir, target_dir):
            if directory:
                shutil.rmtree(directory, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--direction", choices=["pull", "push"], default="pull")
    parser.add_argument("--perf", choices=["target", "source"])
    parser.add_argument("binaries", nargs="+")
    arguments = parser.parse_args()
    results = {binary: [] for binary in arguments.binaries}
    for _ in range(arguments.rounds):
        for binary in arguments.binaries:
            load = open("/proc/loadavg").read().split()[0]
            rate, source, target = pull_once(binary, arguments.docs, arguments.perf, arguments.direction)
            results[binary].append((rate, source, target))
            print(f"{binary}: {rate:,.0f} docs/s; CPU per 1k docs: source {source:.1f} ms, target {target:.1f} ms"
                  f" (load {load} before)", flush=True)
    if arguments.rounds > 1 or len(arguments.binaries) > 1:
        print("medians:")
        for binary, runs in results.items():
            print(f"  {binary}: {statistics.median(r[0] for r in runs):,.0f} docs/s; source "
                  f"{statistics.median(r[1] for r in runs):.1f} ms, target {statistics.median(r[2] for r in runs):.1f} ms"
                  f" per 1k docs ({len(runs)} runs)")


if __name__ == "__main__":
    main()
