#!/usr/bin/env bash
# The simulator soak (`make soak`): SOAK_SEEDS fresh random seeds per
# scenario (default 10000), split over SOAK_PROCS processes (default 2, one
# per core), perturbations on. Each failing seed is printed with the
# route-sim command that reproduces it; the table adds up the processes.
# Exit status 1 when any run failed.
#   test/sim/soak.sh [route-sim binary] [extra route-sim flags...]
set -euo pipefail
sim=${1:-build/test/sim/route-sim}
shift || true
seeds=${SOAK_SEEDS:-10000}
procs=${SOAK_PROCS:-2}
per=$(( (seeds + procs - 1) / procs ))
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pids=()
for ((k = 0; k < procs; ++k)); do
  "$sim" --seeds="$per" --random-seeds --perturb=1 --max-failures=1000 "$@" >"$dir/$k.out" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
for ((k = 0; k < procs; ++k)); do
  echo "== process $k"
  grep -v '^SOAK ' "$dir/$k.out" || true
done
echo "== soak: $procs processes x $per fresh seeds per scenario"
cat "$dir"/*.out | awk '/^SOAK / { seeds[$2] += $3; failed[$2] += $4; total += $4 }
  END { printf "%-12s %8s %7s\n", "scenario", "seeds", "failed";
        for (s in seeds) printf "%-12s %8d %7d\n", s, seeds[s], failed[s];
        printf "%d failing run(s)\n", total }'
exit $status
