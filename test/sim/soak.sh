#!/usr/bin/env bash
# The simulator soak (`make soak`): SOAK_SEEDS fresh random seeds per
# scenario (default 10000), split over SOAK_PROCS processes (default 2, one
# per core), perturbations on. Each failing seed is printed with the
# route-sim command that reproduces it; test/sim/soak_summary.py adds the
# processes up: failing runs and PUTs per change per scenario, the failover
# table over every probe of every process (raw and measured p50/p99/max,
# probes not received within 30 s) and how far a delivery or a death moved
# the probes' clocks. Exit status 1 when any run failed or a scenario
# missed its fleet targets (test/sim/README.md, "What the checker measures").
# SOAK_FIRST_SEED=N runs seeds N.. instead of fresh ones (to compare two
# builds on the same seeds; process k starts at N + k x its share).
#   test/sim/soak.sh [route-sim binary] [extra route-sim flags...]
set -euo pipefail
sim=${1:-build/test/sim/route-sim}
shift || true
seeds=${SOAK_SEEDS:-10000}
procs=${SOAK_PROCS:-2}
per=$(( (seeds + procs - 1) / procs ))
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pids=()
for ((k = 0; k < procs; ++k)); do
  if [ -n "${SOAK_FIRST_SEED:-}" ]; then
    pick=(--first-seed=$(( SOAK_FIRST_SEED + k * per )))
  else
    pick=(--random-seeds)
  fi
  "$sim" --seeds="$per" "${pick[@]}" --perturb=1 --max-failures=1000 --probe-lines "$@" >"$dir/$k.out" 2>&1 &
  pids+=($!)
done
status=0
# Why not every non-zero exit: route-sim exits 1 for a failing run or for
# its own process's fleet targets, and the soak's targets are over all
# processes (below); a crash (> 1) fails the soak.
for pid in "${pids[@]}"; do
  rc=0
  wait "$pid" || rc=$?
  if [ "$rc" -gt 1 ]; then status=1; fi
done
for ((k = 0; k < procs; ++k)); do
  echo "== process $k"
  grep -v '^SOAK \|^PROBE ' "$dir/$k.out" || true
done
echo "== soak: $procs processes x $per seeds per scenario"
python3 "$here/soak_summary.py" "$dir"/*.out || status=1
exit $status
