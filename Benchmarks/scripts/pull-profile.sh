#!/bin/bash
# CPU profile of one `ShoalProfile pull 1 100000` (both nodes in one process), from
# the first replication sample on (the source's loading is left out), split into
# the categories of pull-categories.py. Usage (in Benchmarks/, release build done):
#   scripts/pull-profile.sh NAME [ENV=VALUE …]     -> /tmp/NAME.txt and the table
set -euo pipefail
name=$1; shift
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
env "$@" perf record -e cpu-clock -F 1000 --call-graph dwarf,16384 -o "/tmp/$name.data" -- \
    .build/release/ShoalProfile pull 1 100000 2>&1 | grep -E "pull round|CPU"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(perf script -i "/tmp/$name.data" -F time,ip,sym 2>/dev/null \
    | awk '/^ *[0-9]+\.[0-9]+:/{t=$1} /RevisionInserter|ChangesSender/{print t; exit}' | tr -d :)
perf script -i "/tmp/$name.data" --time "$start," -F tid,ip,sym 2>/dev/null > "/tmp/$name.txt"
rm -f "/tmp/$name.data"
python3 "$(dirname "$0")/pull-categories.py" "/tmp/$name.txt"
