#!/usr/bin/env bash
# mesh-netns-test.sh — Shoal's automatic mesh with real mDNS discovery across
# three simulated hosts (scripts/netlab: network namespaces, each with its own
# dbus + avahi-daemon), with timings:
#
#   1. hosts 1 and 2 up and meshed, documents written on both; host 3 joins
#      later (its node is started on an empty data directory: netlab cannot add
#      a host to a running lab, so host 3 is brought up with the others, its
#      node SIGKILLed at once and its data directory emptied). Measured: node
#      start -> host 3 holds the documents of hosts 1 and 2 and they hold the
#      documents written on host 3 (target <= 3 s).
#   2. host 3's node SIGKILLed: time until hosts 1 and 2 report it not
#      connected in GET /db/_peers (target <= 6 s). Same after host 3 is
#      isolated (nftables drop: no FIN/RST, only heartbeats notice; reported).
#   3. partition {1} | {2,3}, writes on both sides (also the same documents:
#      conflicts, which the default winner policy resolves), heal: time to
#      convergence (converge-check, no conflict left) and no
#      acknowledged write lost (ledger.py verify).
#
# Exit 0 pass, 1 fail, 77 skipped (not root, tools or the node binary missing;
# the reason is printed). Every request is sent from inside a lab namespace.
# NETLAB_DIR defaults to a fresh /tmp/shoal-meshtest-PID, removed at the end
# unless the test failed (then kept for its logs) or MESH_TEST_KEEP=1.
# MESH_TEST_FACTOR multiplies the timing targets (default 1).
set -uo pipefail

HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
NL=$HERE/netlab CC=$HERE/converge-check LG=$HERE/ledger.py
FACTOR=${MESH_TEST_FACTOR:-1}
T_JOIN=$(awk -v f="$FACTOR" 'BEGIN { print 3 * f }')
T_KILL=$(awk -v f="$FACTOR" 'BEGIN { print 6 * f }')

skip() { echo "mesh-netns-test: SKIP: $*"; exit 77; }
[[ $(id -u) == 0 ]] || skip "not root (network namespaces need root)"
for t in ip unshare nft avahi-daemon dbus-daemon curl setsid python3; do
    command -v "$t" >/dev/null 2>&1 || [[ -x /usr/sbin/$t || -x /sbin/$t ]] || skip "$t is not installed"
done
BIN=${SHOAL_BIN:-$HERE/../.build/debug/shoal}
[[ -x $BIN ]] || skip "node binary $BIN is not built"
export SHOAL_BIN=$BIN

export NETLAB_DIR=${NETLAB_DIR:-/tmp/shoal-meshtest-$$}
export NETLAB_QUIET=1
HELPER=$(mktemp /tmp/shoal-meshtest-helper.XXXXXX.py)
FAILS=() TIMINGS=()
fail() { FAILS+=("$*"); echo "FAIL: $*"; ((${#FAILS[@]} > 2)) || diagnose; }
# What each running node says of its peers, and the end of its mesh log: enough to
# tell a link never dialed from one dialed and refused or stuck (CI keeps no lab).
diagnose() {
    local i pidfile
    for i in $(seq 1 "$(cat "$NETLAB_DIR/n" 2>/dev/null || echo 0)"); do
        pidfile=$NETLAB_DIR/h$i/node.pid
        echo "  -- host $i ($(cat "$NETLAB_DIR/h$i/node.log" 2>/dev/null | grep -m1 -o 'node [0-9a-f-]*' || echo 'node ?'))"
        if [[ -f $pidfile ]] && kill -0 "$(awk '{print $1}' "$pidfile")" 2>/dev/null; then
            helper "$i" peers 2>&1 || true
        else
            echo "    (node not running)"
        fi
        grep -E 'Mesh|Discovery|Sync|WRN|ERR' "$NETLAB_DIR/h$i/node.log" 2>/dev/null | grep -v DBG | tail -n 14 | sed 's/^/    | /'
    done
}
timing() { TIMINGS+=("$(printf '%-66s %s' "$1" "$2")"); echo "  -> $1: $2"; }
step() { printf '\n=== %s\n' "$*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }

cleanup() {
    local rc=$?
    "$NL" down >/dev/null 2>&1 || true
    if ((${#FAILS[@]} == 0)) && [[ ${MESH_TEST_KEEP:-0} != 1 ]]; then
        rm -rf "$NETLAB_DIR"
    else
        echo "(lab state and node logs kept in $NETLAB_DIR)"
    fi
    rm -f "$HELPER"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The helper runs inside a lab host (ip netns exec): it only talks to the
# lab's addresses and to the host's own 127.0.0.1.
cat >"$HELPER" <<'EOF'
import json, sys, time, urllib.request
def get(url, timeout=1.0):
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=timeout) as r:
        return json.load(r)
cmd = sys.argv[1]
if cmd == "nodeid":
    print(get("http://127.0.0.1:4985/_mesh")["node_id"])
elif cmd == "wait-count":
    # wait-count T0 TIMEOUT URL=MIN…: epoch T0; prints, per URL, seconds from T0
    # until GET URL reports doc_count >= MIN.
    t0, timeout = float(sys.argv[2]), float(sys.argv[3])
    want = dict((a.rsplit("=", 1)[0], int(a.rsplit("=", 1)[1])) for a in sys.argv[4:])
    done = {}
    while len(done) < len(want) and time.time() - t0 < timeout:
        for url, n in want.items():
            if url in done:
                continue
            try:
                if get(url, 0.5).get("doc_count", 0) >= n:
                    done[url] = time.time() - t0
            except Exception:
                pass
        time.sleep(0.02)
    print(json.dumps({u: round(done[u], 3) if u in done else None for u in want}))
    sys.exit(0 if len(done) == len(want) else 1)
elif cmd == "peers":
    # One line per peer of this node's _peers (for failure reports).
    try:
        for p in get("http://127.0.0.1:4985/db/_peers", 2.0)["peers"]:
            print("    %s %s %s %s state=%s connected_since=%s pushed=%s pulled=%s error=%s" % (
                (p.get("node_id") or "?")[:8], p.get("source"), p.get("role"), p.get("address", "-"), p.get("state"),
                p.get("connected_since"), p.get("docs_pushed"), p.get("docs_pulled"), p.get("last_error")))
    except Exception as e:
        print("    _peers unreadable: %s" % e)
elif cmd == "wait-gone":
    # wait-gone T0 TIMEOUT NODEID: seconds from T0 until this node's _peers no
    # longer shows NODEID connected (connected_since set).
    t0, timeout, nid = float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    while time.time() - t0 < timeout:
        try:
            peers = get("http://127.0.0.1:4985/db/_peers", 0.5)["peers"]
            if not any(p.get("node_id") == nid and p.get("connected_since") for p in peers):
                print(f"{time.time() - t0:.3f}")
                sys.exit(0)
        except Exception:
            pass
        time.sleep(0.02)
    print("timeout")
    sys.exit(1)
EOF

ns() { echo "$(<"$NETLAB_DIR/prefix")$1"; }
inhost() { local i=$1; shift; ip netns exec "$(ns "$i")" "$@"; }
helper() { local i=$1; shift; inhost "$i" python3 "$HELPER" "$@"; }
url() { "$NL" url "$1"; }
# detect_gone T0 NODEID: hosts 1 and 2 poll their _peers in parallel; prints
# the later of the two times (s since T0) or "none".
detect_gone() {
    local t1 t2 r1 r2
    t1=$(mktemp) t2=$(mktemp)
    helper 1 wait-gone "$1" 30 "$2" >"$t1" &
    helper 2 wait-gone "$1" 30 "$2" >"$t2" &
    wait
    r1=$(<"$t1") r2=$(<"$t2")
    rm -f "$t1" "$t2"
    echo "  host 1: ${r1}s, host 2: ${r2}s" >&2
    python3 -c 'import sys; v=sys.argv[1:]; print("none" if "timeout" in v or "" in v else "%.2f" % max(map(float, v)))' "$r1" "$r2"
}

echo "mesh-netns-test: lab in $NETLAB_DIR, node binary $BIN"
step "1. hosts 1 and 2 meshed with documents; host 3 joins later on an empty data directory"
"$NL" up 3 || { fail "netlab up 3"; exit 1; }
"$NL" kill 3 >/dev/null || fail "kill 3"
rm -rf "$NETLAB_DIR/h3/data" && mkdir -p "$NETLAB_DIR/h3/data"
"$LG" write --netlab --host 1 --new 100 --bulk 20 --tag j1 || fail "writes on host 1"
"$LG" write --netlab --host 2 --new 100 --bulk 20 --tag j2 || fail "writes on host 2"
out=$("$CC" --netlab --hosts 1,2 --wait 30 --quiet) || fail "hosts 1 and 2 did not converge: $out"
echo "$out" | head -1
t0=$(now)
"$NL" restart 3 >/dev/null || fail "start of node 3"
t_answer=$(since "$t0")
"$LG" write --netlab --host 3 --new 50 --bulk 50 --tag j3 || fail "writes on host 3"
t_written=$(since "$t0")
res=$(helper 3 wait-count "$t0" 30 "$(url 1)=250" "$(url 2)=250" "$(url 3)=250") || fail "host 3 join: not synced in 30 s: $res"
echo "  node 3 answering after ${t_answer}s, its 50 docs written at ${t_written}s; doc_count 250 reached (s since the node start): $res"
join=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); v=list(d.values()); print("%.2f" % max(v) if None not in v else "none")' "$res")
h3=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d[sys.argv[2]])' "$res" "$(url 3)")
timing "host 3 node start -> answering" "${t_answer}s"
timing "host 3 node start -> host 3 has the docs of hosts 1+2" "${h3}s"
timing "host 3 node start -> all 3 nodes have all 250 docs (target <= ${T_JOIN}s)" "${join}s"
[[ $join != none ]] && le "$join" "$T_JOIN" || fail "join sync took ${join}s (target ${T_JOIN}s)"
"$NL" wait-mesh 30 || fail "mesh of 3 not formed"

step "2. SIGKILL host 3's node: hosts 1 and 2 must see it not connected"
id3=$(helper 3 nodeid)
echo "  node 3 ID $id3"
t0=$(now)
"$NL" kill 3 >/dev/null
kill_det=$(detect_gone "$t0" "$id3")
timing "SIGKILL of node 3 -> hosts 1+2 show it not connected (target <= ${T_KILL}s)" "${kill_det}s"
[[ $kill_det != none ]] && le "$kill_det" "$T_KILL" || fail "kill detection took ${kill_det}s (target ${T_KILL}s)"

"$NL" restart 3 >/dev/null || fail "restart 3"
"$NL" wait-mesh 30 >/dev/null || fail "mesh of 3 not re-formed after restart"
id3=$(helper 3 nodeid)
t0=$(now)
"$NL" isolate 3
iso_det=$(detect_gone "$t0" "$id3")
timing "isolation of host 3 (nft drop) -> hosts 1+2 show it not connected" "${iso_det}s"
[[ $iso_det != none ]] || fail "isolation of host 3 not detected in 30 s"
t0=$(now)
"$NL" heal
"$NL" wait-mesh 60 >/dev/null || fail "mesh not re-formed after healing the isolation"
timing "heal of the isolation -> mesh of 3 re-formed" "$(since "$t0")s"

step "3. partition {1} | {2,3}, writes on both sides, heal"
"$LG" write --netlab --host 1 --docs "pc-0..9" --tag pseed || fail "seed writes"
"$CC" --netlab --wait 30 --quiet >/dev/null || fail "seed docs did not converge"
"$NL" partition 1 2,3
sleep 1
"$LG" write --netlab --host 1 --new 300 --bulk 30 --tag p1 || fail "writes on host 1"
"$LG" write --netlab --host 2 --new 300 --bulk 30 --tag p2 || fail "writes on host 2"
"$LG" write --netlab --host 3 --new 100 --tag p3 || fail "writes on host 3"
"$LG" write --netlab --host 1 --docs "pc-0..9" --set side=A --tag pA || fail "side A edits"
"$LG" write --netlab --host 3 --docs "pc-0..9" --set side=B --tag pB || fail "side B edits"
sleep 1
"$CC" --netlab --quiet --max-diffs 0 | head -1
t0=$(now)
"$NL" heal
out=$("$CC" --netlab --wait 60 --quiet --expect-conflicts 0) || fail "not converged (or conflicts left) after the heal"
echo "$out"
hc=$(grep -o "^converged [0-9.]*s after netlab 'heal'" <<<"$out" | awk '{print $2}')
timing "heal of {1}|{2,3} (700 new docs + 10 conflicts) -> converged" "${hc:-none}"
"$LG" verify --netlab --wait 30 --quiet || fail "ledger verify: acknowledged writes missing"

step "4. node memory"
for i in 1 2 3; do
    pid=$(awk '{print $1}' "$NETLAB_DIR/h$i/node.pid")
    echo "  host $i node PID $pid: $(grep VmRSS /proc/"$pid"/status | tr -s ' \t' ' ')"
done
if [[ ${MESH_TEST_KEEP:-0} != 1 ]]; then "$NL" down >/dev/null 2>&1; fi

printf '\n=== timings\n'
printf '%s\n' "${TIMINGS[@]}"
leftover=$(ip netns list | grep -c "^$(<"$NETLAB_DIR/prefix")" || true)
((leftover == 0)) || [[ ${MESH_TEST_KEEP:-0} == 1 ]] || fail "$leftover lab namespaces left after down"
if ((${#FAILS[@]})); then
    printf '\n=== %d FAILURES\n' "${#FAILS[@]}"
    printf '  %s\n' "${FAILS[@]}"
    exit 1
fi
echo "mesh-netns-test: PASS"
exit 0
