#!/usr/bin/env python3
"""A one-shot pull (or push) between two `shoal serve` processes on loopback, as a user
runs it, for A/B comparisons of builds and for profiles of one side (the NodeProcesses
benchmark measures the same; this script alternates builds in one go and can attach perf).

  pull-two-process.py [--docs N] [--rounds R] [--direction pull|push] [--perf target|source]
                      [--callgrind target|source] BIN [BIN...]

For each round and each binary: a source node is loaded with N new documents (random
32-hex IDs, ~1 KB bodies, `_bulk_docs` of 1,000), a fresh target pulls them
(`PUT /db/_replication/p1 {"remote": ..., "direction": "pull"}`; with `--direction push`
the source pushes to the fresh target instead), and the script prints
the pull's rate and each process's CPU per 1,000 documents (utime+stime from /proc).
With several binaries or rounds it ends with the medians. `--perf SIDE` records
`perf record -e cpu-clock --call-graph dwarf` of that process during the pull into
/tmp/DIRECTION-SIDE-<binary name>.data (then `perf script -F tid,ip,sym` and
scripts/pull-categories.py).

`--callgrind SIDE` counts instead of timing, for A/B comparisons on a machine whose
timings swing by 20% from run to run (a shared VM) while a count of instructions does
not: that process runs under `valgrind --tool=callgrind --instr-atstart=no`,
instrumented only from just before the replication until the target holds N documents,
and the script prints its instructions per document (use --docs 3000; the profile stays
in /tmp/DIRECTION-SIDE-<binary name>.out.1 for `callgrind_annotate`). Valgrind 3.19
cannot read the release binary's DWARF 5, so the binary runs from a copy without debug
sections (`objcopy --strip-debug`; symbols stay). Needs valgrind (apt).
Uses ports 15984-16985 on 127.0.0.1.
"""
import argparse, os, random, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from labutil import Client  # noqa: E402  (scripts/labutil.py: JSON over HTTP)


def start(binary, label, port, admin, wrapper=()):
    directory = tempfile.mkdtemp(prefix="shoal-pull-" + label + "-")
    process = subprocess.Popen(
        list(wrapper) + [binary, "serve", "--data", directory, "--db", "db", "--interface", "127.0.0.1",
                         "--port", str(port), "--admin-port", str(admin), "--no-discovery"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(1200 if wrapper else 400):
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


def callgrind(pid, command):
    """Sends `command` (`-i on`, `-i off`, `-d`) to the callgrind of process `pid`."""
    subprocess.run(["callgrind_control", *command, str(pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)


def pull_once(binary, documents, perf_side, direction="pull", callgrind_side=None):
    profile = f"/tmp/{direction}-{callgrind_side}-{os.path.basename(binary)}.out"
    def wrapper(side):
        if side != callgrind_side:
            return ()
        for old in (profile, profile + ".1"):
            if os.path.exists(old):
                os.remove(old)
        return ("valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=" + profile)
    source, source_dir = start(binary, "source", 15984, 15985, wrapper("source"))
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
        target, target_dir = start(binary, "target", 16984, 16985, wrapper("target"))
        if callgrind_side:
            counted, admin = (source, 15985) if callgrind_side == "source" else (target, 16985)
            callgrind(counted.pid, ["-i", "on"])
            for _ in range(3):  # the process takes the command when it next runs
                request(admin, "GET", "/db")
                time.sleep(0.5)
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
        # Counted, the target answers few polls: each is an HTTP request whose instructions
        # (connection set-up, parsing) would be counted as the replication's.
        while request(16985, "GET", "/db")[1]["doc_count"] < documents:
            time.sleep(0.5 if callgrind_side else 0.005)
        elapsed = time.time() - began
        source_used = cpu_seconds(source.pid) - source_cpu
        target_used = cpu_seconds(target.pid) - target_cpu
        if perf:
            perf.send_signal(2)
            perf.wait()
        instructions = None
        if callgrind_side:
            time.sleep(1)
            callgrind(counted.pid, ["-i", "off"])
            callgrind(counted.pid, ["-d"])
            time.sleep(1)
            with open(profile + ".1") as dump:
                instructions = next(int(line.split()[1]) for line in dump if line.startswith("totals:")) / documents
        return documents / elapsed, source_used * 1e6 / documents, target_used * 1e6 / documents, instructions
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
    parser.add_argument("--callgrind", choices=["target", "source"])
    parser.add_argument("binaries", nargs="+")
    arguments = parser.parse_args()
    if arguments.callgrind:
        for binary in arguments.binaries:
            stripped = os.path.join(tempfile.mkdtemp(prefix="shoal-callgrind-"), os.path.basename(binary))
            try:
                subprocess.run(["objcopy", "--strip-debug", binary, stripped], check=True)
                instructions = pull_once(stripped, arguments.docs, None, arguments.direction, arguments.callgrind)[3]
            finally:
                shutil.rmtree(os.path.dirname(stripped), ignore_errors=True)
            print(f"{binary}: {arguments.direction} {arguments.callgrind}: {instructions:,.0f} instructions per document",
                  flush=True)
        return
    results = {binary: [] for binary in arguments.binaries}
    for _ in range(arguments.rounds):
        for binary in arguments.binaries:
            load = open("/proc/loadavg").read().split()[0]
            rate, source, target, _ = pull_once(binary, arguments.docs, arguments.perf, arguments.direction)
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
