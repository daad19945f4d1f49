#!/usr/bin/env bash
# Multi-host test of the Discovery module against real avahi-daemons.
#
# Builds three simulated hosts: network namespaces on a bridge that lives in its own namespace,
# each host with a private /run (mount namespace), its own dbus-daemon and avahi-daemon, on
# private addresses 10.88.0.11-13. Runs the DiscoveryProbe executable (scripts/discovery-probe)
# on the hosts and checks, printing the measured times:
#   - each host sees the other two within 3 s (register -> seen);
#   - probes of another group (other subtype; same subtype but other TXT group) are ignored;
#   - a clean stop (SIGTERM -> goodbye) is reported removed within 3 s;
#   - a SIGKILLed probe is reported removed too (its daemon withdraws the dead client's service);
#   - stopping avahi-daemon on a host gives daemonUnavailable there (and removed on the others);
#     restarting it gives daemonAvailable and the host is rediscovered; its own peers stay known;
#   - a peer that registered while a host was partitioned (nftables drop on the bridge) is found
#     by that host within 3 s of refresh() after the partition heals;
#   - a TXT update (new database list) is reported as updated;
#   - a probe whose browse rests (--rest-ms, as nodes run it) misses a goodbye and a late
#     joiner while it rests, and a refresh() reports both (removed, added).
#
# Never touches the root network namespace: every avahi-daemon and probe runs inside namespaces
# made here (unique prefix per run) and everything is torn down on exit, also on failure.
#
# Usage: scripts/discovery-netns-test.sh            (builds DiscoveryProbe with swift build)
#        PROBE=/path/to/DiscoveryProbe scripts/discovery-netns-test.sh
#        DISCOVERY_PACKAGE_DIR=/other/package ...   (package to build the probe in)
#        KEEP_LOGS=1 ...                            (keep the work folder)
# Exit: 0 passed, 1 failed, 77 skipped (not root, or a tool is missing).
set -euo pipefail

skip() { echo "SKIP: discovery-netns-test: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces)"
for tool in ip unshare avahi-daemon dbus-daemon mount nft; do
    command -v "$tool" >/dev/null 2>&1 || skip "missing $tool (apt-get install avahi-daemon dbus-daemon iproute2 nftables util-linux)"
done
getent passwd avahi >/dev/null || skip "no avahi user (install avahi-daemon)"

if [ -z "${PROBE:-}" ]; then
    PKG=${DISCOVERY_PACKAGE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
    swift build --package-path "$PKG" --product DiscoveryProbe >&2
    PROBE="$(swift build --package-path "$PKG" --show-bin-path)/DiscoveryProbe"
fi
[ -x "$PROBE" ] || { echo "FAIL: no probe executable at $PROBE"; exit 1; }

P="dsc$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')"   # unique namespace prefix of this run
W=$(mktemp -d "/tmp/discovery-netns.$P.XXXXXX")
PIDS=()
FAILURES=0

on() {   # on HOST CMD...: run CMD in host HOST's network namespace with the host's /run
    local host=$1; shift
    exec ip netns exec "${P}h$host" unshare -m --propagation private -- \
        sh -c 'mount --bind "$0" /run && exec "$@"' "$W/h$host/run" "$@"
}

teardown() {
    set +e
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    sleep 0.5
    for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; done
    for ns in $(ip netns list | awk '{print $1}' | grep -E "^${P}(h[0-9]+|br)\$"); do
        for pid in $(ip netns pids "$ns"); do kill -9 "$pid" 2>/dev/null; done
        ip netns del "$ns"
    done
    if [ "${KEEP_LOGS:-0}" = 1 ] || [ "$FAILURES" -gt 0 ]; then
        echo "logs kept in $W"
    else
        rm -rf "$W"
    fi
}
trap teardown EXIT
trap 'exit 1' INT TERM

now_ms() { date +%s%3N; }
fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
pass() { echo "ok: $*"; }

# wait_line FILE REGEX TIMEOUT_MS [SINCE_MS]: prints the timestamp of the first line at or after
# SINCE_MS that matches (0 on timeout).
wait_line() {
    local file=$1 regex=$2 deadline=$(( $(now_ms) + $3 )) since=${4:-0} ts
    while :; do
        ts=$(awk -v since="$since" '$1 >= since' "$file" 2>/dev/null | grep -E -m1 "^[0-9]+ $regex" | cut -d' ' -f1 || true)
        if [ -n "$ts" ]; then echo "$ts"; return 0; fi
        [ "$(now_ms)" -ge "$deadline" ] && { echo 0; return 1; }
        sleep 0.05
    done
}

# expect_line NAME FILE REGEX TIMEOUT_MS SINCE_MS: a matching line appears at or after SINCE_MS;
# prints the delay. Delays are collected per first word of NAME for the summary.
# wait_rested NAME COUNT: waits (up to 10 s) until probe NAME logged its browse resting COUNT times.
wait_rested() {
    local deadline=$(( $(now_ms) + 10000 ))
    until [ "$(grep -c 'browse resting' "$W/$1.err" 2>/dev/null || true)" -ge "$2" ]; do
        [ "$(now_ms)" -ge "$deadline" ] && { fail "$1: browse not resting ($2) within 10 s"; return 0; }
        sleep 0.05
    done
    pass "$1: browse rested ($2)"
}

expect_line() {
    local name=$1 file=$2 regex=$3 timeout=$4 since=$5 ts
    if ts=$(wait_line "$file" "$regex" "$timeout" "$since"); then
        pass "$name after $(( ts - since )) ms"
        echo $(( ts - since )) >>"$W/times.${name%% *}"
    else
        fail "$name: no '$regex' in $(basename "$file") within $timeout ms"
        sed 's/^/    /' "$file" | tail -n 20
    fi
}

# expect_no_line NAME FILE REGEX [SINCE_MS]: no matching line at or after SINCE_MS.
expect_no_line() {
    if awk -v since="${4:-0}" '$1 >= since' "$2" | grep -qE "^[0-9]+ $3"; then
        fail "$1: unexpected '$3' in $(basename "$2")"
    else
        pass "$1"
    fi
}

start_host() {   # start_host N: dbus-daemon + avahi-daemon of host N
    local i=$1 d="$W/h$1"
    mkdir -p "$d/run/dbus" "$d/run/avahi-daemon"
    chown avahi:avahi "$d/run/avahi-daemon"
    if [ ! -S "$d/run/dbus/system_bus_socket" ]; then
        (on "$i" dbus-daemon --config-file="$W/dbus.conf" --nofork --nopidfile >"$d/dbus.log" 2>&1) &
        PIDS+=($!)
        for _ in $(seq 50); do [ -S "$d/run/dbus/system_bus_socket" ] && break; sleep 0.1; done
    fi
    : >"$d/avahi.log"
    (on "$i" avahi-daemon -f "$d/avahi.conf" --no-chroot --no-rlimits >"$d/avahi.log" 2>&1) &
    AVAHI_PID[$i]=$!
    PIDS+=($!)
}

wait_avahi() {
    for _ in $(seq 100); do grep -q 'Server startup complete' "$W/h$1/avahi.log" && return 0; sleep 0.1; done
    fail "avahi-daemon on host $1 did not start"; cat "$W/h$1/avahi.log"; exit 1
}

start_probe() {   # start_probe NAME HOST ID GROUP [DBS [PROBE OPTIONS]]: log in $W/NAME.log, pid in PROBE_PID[NAME]
    local name=$1 host=$2 id=$3 group=$4 dbs=${5:-db}
    shift 5 2>/dev/null || shift $#
    (on "$host" "$PROBE" --id "$id" --group "$group" --port 4984 --db "$dbs" "$@" >"$W/$name.log" 2>"$W/$name.err") &
    PROBE_PID[$name]=$!
    PIDS+=($!)
}
declare -A PROBE_PID AVAHI_PID

# --- the LAN -----------------------------------------------------------------------------
cat >"$W/dbus.conf" <<'XML'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path=/run/dbus/system_bus_socket</listen><auth>EXTERNAL</auth>
  <policy context="default"><allow user="*"/><deny own="*"/><deny send_type="method_call"/>
    <allow send_type="signal"/><allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/><allow receive_type="method_call"/>
    <allow receive_type="method_return"/><allow receive_type="error"/><allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/></policy>
  <includedir>/usr/share/dbus-1/system.d</includedir></busconfig>
XML
ip netns add "${P}br"
ip netns exec "${P}br" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip -n "${P}br" link add br0 type bridge mcast_snooping 0 stp_state 0 forward_delay 0
ip -n "${P}br" link set br0 up
for i in 1 2 3; do
    ns=${P}h$i
    mkdir -p "$W/h$i"
    ip netns add "$ns"
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "${P}br" link add "veth$i" type veth peer name eth0 netns "$ns"
    ip -n "${P}br" link set "veth$i" master br0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "10.88.0.$((10 + i))/24" dev eth0
    ip -n "$ns" link set eth0 up
    printf '[server]\nhost-name=host%s\nuse-ipv4=yes\nuse-ipv6=no\nallow-interfaces=eth0\nenable-dbus=yes\nuse-iff-running=yes\n[wide-area]\nenable-wide-area=no\n[publish]\npublish-hinfo=no\npublish-workstation=no\n' "$i" >"$W/h$i/avahi.conf"
    start_host "$i"
done
for i in 1 2 3; do wait_avahi "$i"; done
echo "LAN $P up: hosts 10.88.0.11-13, work folder $W"

# --- 1. discovery within a group ---------------------------------------------------------
T0=$(now_ms)
start_probe p1 1 node-1 orders
start_probe p2 2 node-2 orders
start_probe p3 3 node-3 orders
start_probe px 3 other-3 other           # other subtype
start_probe py 2 alias-2 'Orders!'        # same subtype label "orders", other TXT group
start_probe pl 1 lazy-1 orders db --resolve-only node-2 --resolve-later node-2,node-3   # on demand
PROBE_LOG=debug start_probe pr 2 rest-2 orders db --rest-ms 2000   # browse rests 2 s after it opened
for p in p1 p2 p3; do expect_line "$p available" "$W/$p.log" "AVAILABLE" 3000 "$T0"; done
expect_line "register->seen p1 sees node-2" "$W/p1.log" "ADDED node-2 10\.88\.0\.12 4984 db 1" 3000 "$T0"
expect_line "register->seen p1 sees node-3" "$W/p1.log" "ADDED node-3 10\.88\.0\.13 4984 db 1" 3000 "$T0"
expect_line "register->seen p2 sees node-1" "$W/p2.log" "ADDED node-1 10\.88\.0\.11 " 3000 "$T0"
expect_line "register->seen p2 sees node-3" "$W/p2.log" "ADDED node-3 10\.88\.0\.13 " 3000 "$T0"
expect_line "register->seen p3 sees node-1" "$W/p3.log" "ADDED node-1 10\.88\.0\.11 " 3000 "$T0"
expect_line "register->seen p3 sees node-2" "$W/p3.log" "ADDED node-2 10\.88\.0\.12 " 3000 "$T0"
sleep 1
for p in p1 p2 p3; do
    expect_no_line "$p ignores group other" "$W/$p.log" "ADDED other-3"
    expect_no_line "$p ignores TXT group Orders!" "$W/$p.log" "ADDED alias-2"
    expect_no_line "$p never reports itself" "$W/$p.log" "ADDED node-${p#p} "
done
expect_no_line "px (group other) sees nobody" "$W/px.log" "ADDED"
# On demand: every peer of the group is browsed, only those asked for are resolved.
expect_line "on-demand pl browses node-2" "$W/pl.log" "BROWSED node-2" 3000 "$T0"
expect_line "on-demand pl browses node-3" "$W/pl.log" "BROWSED node-3" 3000 "$T0"
expect_line "on-demand pl resolves node-2" "$W/pl.log" "ADDED node-2 10\.88\.0\.12 4984 db 1" 3000 "$T0"
expect_no_line "on-demand pl does not resolve node-3" "$W/pl.log" "ADDED node-3"
expect_no_line "on-demand pl does not browse other groups" "$W/pl.log" "BROWSED other-3"
T=$(now_ms); kill -HUP "${PROBE_PID[pl]}"
expect_line "on-demand pl resolves node-3 once asked" "$W/pl.log" "ADDED node-3 10\.88\.0\.13 4984 db 1" 3000 "$T"
expect_no_line "py (group Orders!) sees nobody" "$W/py.log" "ADDED"
T=$(now_ms)   # fewer browsers from here on: fewer stray queries that could hide what refresh does
for p in px py; do kill -TERM "${PROBE_PID[$p]}"; done
for p in px py; do expect_line "stop $p" "$W/$p.log" "STOPPED" 3000 "$T"; done

# --- 2. goodbye on a clean stop ----------------------------------------------------------
wait_rested pr 1
T=$(now_ms); kill -TERM "${PROBE_PID[p3]}"
expect_line "p3 stopped cleanly" "$W/p3.log" "STOPPED" 3000 "$T"
expect_line "goodbye->removed p1 removes node-3" "$W/p1.log" "REMOVED node-3" 3000 "$T"
expect_line "goodbye->removed p2 removes node-3" "$W/p2.log" "REMOVED node-3" 3000 "$T"
expect_line "goodbye->removed pl removes node-3" "$W/pl.log" "REMOVED node-3" 3000 "$T"
# The resting probe heard nothing of it; a refresh reopens its browse, which does not list
# node-3 again once the daemon's cache is read out.
expect_line "resting pr had seen node-3" "$W/pr.log" "ADDED node-3 10\.88\.0\.13 " 0 "$T0"
expect_no_line "resting pr misses the goodbye" "$W/pr.log" "REMOVED node-3"
T=$(now_ms); kill -USR1 "${PROBE_PID[pr]}"
expect_line "rest+refresh->removed pr removes node-3" "$W/pr.log" "REMOVED node-3" 3000 "$T"
expect_no_line "rest+refresh keeps node-1" "$W/pr.log" "REMOVED node-1"
wait_rested pr 2   # the reopened browse rests again

# --- 3. a late joiner, then SIGKILL ------------------------------------------------------
T=$(now_ms); start_probe p4 3 node-4 orders
expect_line "register->seen p1 sees late node-4" "$W/p1.log" "ADDED node-4 " 3000 "$T"
expect_line "register->seen p2 sees late node-4" "$W/p2.log" "ADDED node-4 " 3000 "$T"
expect_no_line "resting pr does not see late node-4" "$W/pr.log" "ADDED node-4 "
T=$(now_ms); kill -USR1 "${PROBE_PID[pr]}"
expect_line "rest+refresh->seen pr sees node-4" "$W/pr.log" "ADDED node-4 10\.88\.0\.13 " 1500 "$T"
T=$(now_ms); kill -TERM "${PROBE_PID[pr]}"
expect_line "stop pr" "$W/pr.log" "STOPPED" 3000 "$T"
T=$(now_ms); { kill -KILL "${PROBE_PID[p4]}"; wait "${PROBE_PID[p4]}"; } 2>/dev/null || true
expect_line "sigkill->removed p1 removes node-4" "$W/p1.log" "REMOVED node-4" 5000 "$T"
expect_line "sigkill->removed pl removes node-4 (browsed, never resolved)" "$W/pl.log" "REMOVED node-4" 5000 "$T"
expect_no_line "on-demand pl did not resolve node-4" "$W/pl.log" "ADDED node-4"
T=$(now_ms); kill -TERM "${PROBE_PID[pl]}"
expect_line "stop pl" "$W/pl.log" "STOPPED" 3000 "$T"

# --- 4. avahi-daemon stops and comes back on host 2 --------------------------------------
T=$(now_ms); kill -TERM "${AVAHI_PID[2]}"
expect_line "daemon-stop->unavailable p2" "$W/p2.log" "UNAVAILABLE " 3000 "$T"
expect_line "daemon-stop->removed p1 removes node-2" "$W/p1.log" "REMOVED node-2" 3000 "$T"
sleep 1
T=$(now_ms); start_host 2; wait_avahi 2
expect_line "daemon-restart->available p2" "$W/p2.log" "AVAILABLE" 5000 "$T"
expect_line "daemon-restart->rediscovered p1 sees node-2 again" "$W/p1.log" "ADDED node-2 " 8000 "$T"
sleep 6   # longer than the resync grace period: node-1 must still be known to p2
expect_no_line "p2 keeps node-1 across its daemon restart" "$W/p2.log" "REMOVED node-1" "$T"

# --- 5. partition host 1, register node-5, heal, refresh ---------------------------------
ip netns exec "${P}br" nft -f - <<'NFT'
table bridge dsc_partition {
    chain forward {
        type filter hook forward priority 0; policy accept;
        iifname "veth1" drop
        oifname "veth1" drop
    }
}
NFT
T=$(now_ms); start_probe p5 3 node-5 orders
expect_line "partition: p2 sees node-5" "$W/p2.log" "ADDED node-5 " 3000 "$T"
sleep 8   # let node-5's announcements finish while host 1 cannot hear them
expect_no_line "partition: p1 does not see node-5" "$W/p1.log" "ADDED node-5 "
ip netns exec "${P}br" nft delete table bridge dsc_partition
T=$(now_ms); sleep 2
if grep -qE '^[0-9]+ ADDED node-5 ' "$W/p1.log"; then
    echo "note: p1 found node-5 $(( $(wait_line "$W/p1.log" "ADDED node-5 " 0) - T )) ms after healing without refresh (a query of another host was answered)"
else
    echo "note: p1 had not found node-5 2 s after healing (no refresh yet): mDNS alone is slow here"
fi
T=$(now_ms); kill -USR1 "${PROBE_PID[p1]}"
if grep -qE '^[0-9]+ ADDED node-5 ' "$W/p1.log"; then
    echo "note: refresh->seen not measurable this run (already found)"
else
    # Much faster than any backed-off query of the browse would be: the re-query did it.
    expect_line "heal+refresh->seen p1 sees node-5" "$W/p1.log" "ADDED node-5 " 1500 "$T"
fi
sleep 6   # longer than the resync grace period
expect_no_line "refresh keeps node-2 (no removal)" "$W/p1.log" "REMOVED node-2" "$T"

# --- 6. TXT update ------------------------------------------------------------------------
T=$(now_ms); kill -USR2 "${PROBE_PID[p2]}"
expect_line "txt-update->updated p1 sees node-2 with db,extra" "$W/p1.log" "UPDATED node-2 10\.88\.0\.12 4984 db,extra" 3000 "$T"

# --- 7. clean shutdown ---------------------------------------------------------------------
T=$(now_ms)
for p in p1 p2 p5; do kill -TERM "${PROBE_PID[$p]}"; done
for p in p1 p2 p5; do expect_line "stop $p" "$W/$p.log" "STOPPED" 3000 "$T"; done
for f in "$W"/*.err; do
    if grep -qiE 'fatal|crash|assert' "$f"; then fail "$(basename "$f") shows a crash"; sed 's/^/    /' "$f" | head; fi
done

echo "--- timings (ms) ---"
for f in "$W"/times.*; do
    [ -f "$f" ] && echo "$(basename "$f" | sed 's/^times\.//'): $(sort -n "$f" | tr '\n' ' ')"
done
if [ "$FAILURES" -eq 0 ]; then
    echo "discovery-netns-test: passed"
else
    echo "discovery-netns-test: $FAILURES check(s) failed"
    exit 1
fi
