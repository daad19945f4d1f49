#!/usr/bin/env python3
"""Instructions per document of one side of a one-shot pull or push between two
`shoal serve` processes on loopback, counted by callgrind: for A/B comparisons of builds
on a machine whose timings swing by 20% from run to run (a shared VM), where a count of
instructions does not.

  instructions.py [--docs N] [--direction pull|push] [--side target|source] BIN [BIN...]

For each binary: a source node is loaded with N new documents (as pull-two-process.py
loads it), a fresh target is started, and the chosen side runs under
`valgrind --tool=callgrind --instr-atstart=no`; instrumentation is switched on just
before the replication starts and off once the target holds N documents, and the
process's instruction count (Ir) is printed per document. The callgrind profile stays in
/tmp/instructions-DIRECTION-SIDE-<binary name>.out.1 (`callgrind_annotate` it; diff two
of them to see where instructions went). Valgrind 3.19 cannot read the release binary's
DWARF 5, so each binary is run from a copy without debug sections (`objcopy
--strip-debug`; symbols stay). Needs valgrind (apt). Uses ports 15984-16985 on 127.0.0.1.
"""
import argparse, os, random, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from labutil import Client  # noqa: E402  (scripts/labutil.py: JSON over HTTP)

PORTS = {"source": (15984, 15985), "target": (16984, 16985)}


def request(port, method, path, body=None):
    return Client(f"http://127.0.0.1:{port}", timeout=600).request(method, path, body=body)


def start(binary, side, profile):
    port, admin = PORTS[side]
    directory = tempfile.mkdtemp(prefix="shoal-instructions-" + side + "-")
    command = [binary, "serve", "--data", directory, "--db", "db", "--interface", "127.0.0.1", "--port", str(port),
               "--admin-port", str(admin), "--no-discovery"]
    if profile:
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=" + profile] + command
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(1200):
        if process.poll() is not None:
            break
        try:
            if request(admin, "GET", "/db")[0] == 200:
                return process, directory
        except OSError:
            time.sleep(0.1)
    process.kill()
    shutil.rmtree(directory, ignore_errors=True)
    sys.exit(f"{binary} did not start as the {side} (is a port in use?)")


def count(binary, documents, direction, side):
    name = os.path.basename(binary)
    profile = f"/tmp/instructions-{direction}-{side}-{name}.out"
    for old in (profile, profile + ".1"):
        if os.path.exists(old):
            os.remove(old)
    started = []
    try:
        started.append(start(binary, "source", profile if side == "source" else None))
        generator = random.Random(7)
        notes = "x" * 700
        for first in range(0, documents, 1000):
            docs = [{"_id": "%032x" % generator.getrandbits(128), "type": "order", "n": n, "notes": notes,
                     "status": "awaiting_shipment"} for n in range(first, min(first + 1000, documents))]
            status, body = request(PORTS["source"][1], "POST", "/db/_bulk_docs", {"docs": docs})
            if status != 201:
                sys.exit(f"_bulk_docs answered {status}: {str(body)[:200]}")
        started.append(start(binary, "target", profile if side == "target" else None))
        pid = started[0 if side == "source" else 1][0].pid
        subprocess.run(["callgrind_control", "-i", "on", str(pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        for _ in range(3):  # the process takes the command when it next runs
            request(PORTS[side][1], "GET", "/db")
            time.sleep(0.5)
        if direction == "pull":
            request(PORTS["target"][1], "PUT", "/db/_replication/p1",
                    {"remote": f"ws://127.0.0.1:{PORTS['source'][0]}/db", "direction": "pull"})
        else:
            request(PORTS["source"][1], "PUT", "/db/_replication/p1",
                    {"remote": f"ws://127.0.0.1:{PORTS['target'][0]}/db", "direction": "push"})
        while request(PORTS["target"][1], "GET", "/db")[1]["doc_count"] < documents:
            time.sleep(0.05)
        time.sleep(1)
        subprocess.run(["callgrind_control", "-i", "off", str(pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        subprocess.run(["callgrind_control", "-d", str(pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        time.sleep(1)
        with open(profile + ".1") as dump:
            totals = next(int(line.split()[1]) for line in dump if line.startswith("totals:"))
        return totals / documents
    finally:
        for process, directory in started:
            process.terminate()
            process.wait()
            shutil.rmtree(directory, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=3_000)
    parser.add_argument("--direction", choices=["pull", "push"], default="pull")
    parser.add_argument("--side", choices=["target", "source"], default="target")
    parser.add_argument("binaries", nargs="+")
    arguments = parser.parse_args()
    for binary in arguments.binaries:
        stripped = os.path.join(tempfile.mkdtemp(prefix="shoal-instructions-"), os.path.basename(binary))
        try:
            subprocess.run(["objcopy", "--strip-debug", binary, stripped], check=True)
            perDoc = count(stripped, arguments.docs, arguments.direction, arguments.side)
        finally:
            shutil.rmtree(os.path.dirname(stripped), ignore_errors=True)
        print(f"{binary}: {arguments.direction} {arguments.side}: {perDoc:,.0f} instructions per document", flush=True)


if __name__ == "__main__":
    main()
