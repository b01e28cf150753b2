#!/usr/bin/env python3
"""Adds up route-sim outputs (`--probe-lines`, one file per process) into the
soak's tables (test/sim/soak.sh): failing runs and PUTs per change per
scenario, then the failover table over every probe of every process: raw
(the owner's change committed -> the first write carrying it) and measured
(from the latest of the change, its delivery to a live, synced replica and
the last writer's death before the write, less the delay the simulator
injected into that write's request) p50 / p99 / max; how many probes'
clocks a delivery or a death moved, and by how much; the probes no live,
synced replica received within 30 s. Exits 1 when a run failed or a
scenario missed its fleet targets (test/sim/simulation.h, FleetTargetsFor;
test/sim/README.md).

    soak_summary.py OUT...
"""
import math
import sys

# Per scenario: (p99, max) in ms of the measured figure (issue 59 item 4).
TARGETS = {"slow-leader": (4000, 6000)}
DEFAULT_TARGET = (2000, 3000)
NOT_RECEIVED_SHARE = 0.001


def rank(values, p):
    """Nearest rank, as test/sim/simulation.cc's Summarize."""
    if not values:
        return 0
    r = math.ceil(p * len(values))
    return values[min(max(r, 1), len(values)) - 1]


def main(paths):
    seeds, failed, unreceived, puts, changes = {}, {}, {}, {}, {}
    probes = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                w = line.split()
                if not w:
                    continue
                if w[0] == "SOAK":
                    s = w[1]
                    seeds[s] = seeds.get(s, 0) + int(w[2])
                    failed[s] = failed.get(s, 0) + int(w[3])
                    unreceived[s] = unreceived.get(s, 0) + int(w[4])
                    puts[s] = puts.get(s, 0) + int(w[5])
                    changes[s] = changes.get(s, 0) + int(w[6])
                elif w[0] == "PROBE":
                    probes.setdefault(w[1], []).append((int(w[2]), int(w[3]), int(w[4]), w[5]))
    status = 0
    print(f"{'scenario':<12} {'seeds':>7} {'failed':>7} {'PUT/chg':>8}")
    for s in seeds:
        per = puts[s] / changes[s] if changes[s] else 0
        print(f"{s:<12} {seeds[s]:>7} {failed[s]:>7} {per:>8.3f}")
        status |= failed[s] > 0
    total = sum(failed.values())
    print(f"{total} failing run(s)")
    print("\n== failover over all processes (ms; raw: change -> write; measured: from the latest of"
          " the change, its delivery and the last writer's death, less the write request's"
          " injected delay)")
    print(f"{'scenario':<12} {'probes':>7} {'raw-p50':>8} {'raw-p99':>8} {'raw-max':>8}"
          f" {'p50':>6} {'p99':>6} {'max':>6} {'unreceived':>10}")
    moved_rows = []
    for s in seeds:
        ps = probes.get(s, [])
        raw = sorted(p[0] for p in ps)
        measured = sorted(p[1] for p in ps)
        n = len(ps)
        nr = unreceived.get(s, 0)
        print(f"{s:<12} {n:>7} {rank(raw, .5):>8} {rank(raw, .99):>8} {raw[-1] if raw else 0:>8}"
              f" {rank(measured, .5):>6} {rank(measured, .99):>6}"
              f" {measured[-1] if measured else 0:>6} {nr:>10}")
        p99_target, max_target = TARGETS.get(s, DEFAULT_TARGET)
        if n == 0 and nr == 0:
            continue
        missed = []
        if n >= 100 and rank(measured, .99) > p99_target:
            missed.append(f"p99 {rank(measured, .99)} > {p99_target}")
        if measured and measured[-1] > max_target:
            missed.append(f"max {measured[-1]} > {max_target}")
        if nr > NOT_RECEIVED_SHARE * (n + nr):
            missed.append(f"{nr} of {n + nr} probes not received within 30 s (> 0.1%)")
        if missed:
            print(f"   {s} misses the fleet's failover targets: {'; '.join(missed)}")
            status = 1
        for cause in ("delivery", "death"):
            moved = sorted(p[2] for p in ps if p[3] == cause)
            moved_rows.append((s, cause, len(moved), n, moved))
    print("\n== probes whose clock a delivery or a death moved (ms after the change)")
    print(f"{'scenario':<12} {'by':<9} {'probes':>13} {'p50':>6} {'p90':>6} {'p99':>6} {'max':>6}")
    for s, cause, k, n, moved in moved_rows:
        print(f"{s:<12} {cause:<9} {k:>6} of {n:<5} {rank(moved, .5):>6} {rank(moved, .9):>6}"
              f" {rank(moved, .99):>6} {moved[-1] if moved else 0:>6}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
