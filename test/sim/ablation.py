#!/usr/bin/env python3
"""The lease ablation (docs/lease.md, issue 47): route-sim over the same
seeds with each lease rule switched off in turn (lease/lease_rules.h), all
of them off, and the defaults twice (the second run's seeds differ: the
noise), then one markdown table of what a user sees.

    test/sim/ablation.py build/test/sim/route-sim --seeds=2000 --procs=2

Each configuration runs `route-sim --scenario=all --perturb=1 --probe-lines`
over seeds first..first+seeds-1 (the noise row over the next range), split
over --procs processes. Columns: failing runs by the bound that failed
first (failover, PUT, write, other), raw failover p50 / p99 / max over
every probe of every scenario but slow-leader, and slow-leader's apart,
PUTs and conflicts per change over every scenario but the fight (whose
writes are bounded per contention window), and slow-leader's PUTs apart.
"""
import argparse
import concurrent.futures
import re
import subprocess
import sys

ROW = re.compile(r"^([a-z][a-z-]*)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+)\s")


def run_chunk(binary, first, seeds, extra):
    cmd = [binary, f"--seeds={seeds}", f"--first-seed={first}", "--scenario=all",
           "--perturb=1", "--probe-lines", "--max-failures=1000000"] + extra
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    rows, probes, fails = {}, [], []
    for line in out.splitlines():
        if line.startswith("PROBE "):
            _, scenario, raw, _adj = line.split()
            probes.append((scenario, int(raw)))
        elif line.startswith("FAIL ") and " seed " in line:
            fails.append(line)
        else:
            m = ROW.match(line)
            if m and m.group(1) != "scenario":
                changes, put_per, conflicts = int(m.group(4)), float(m.group(6)), int(m.group(7))
                rows[m.group(1)] = (changes, put_per * changes, conflicts)
    return rows, probes, fails


def pct(values, q):
    if not values:
        return 0
    values = sorted(values)
    rank = max(1, int(-(-q * len(values) // 1)))
    return values[min(rank, len(values)) - 1]


def kind(fail):
    text = fail.split(": ", 1)[1] if ": " in fail else fail
    for name in ("failover", "PUT bound", "write bound"):
        if text.startswith(name):
            return name.split()[0]
    return "other"


def measure(binary, first, seeds, procs, extra):
    step = -(-seeds // procs)
    chunks = [(first + i, min(step, seeds - i)) for i in range(0, seeds, step)]
    changes = puts = conflicts = 0
    slow_changes = slow_puts = 0
    probes, fails = [], []
    with concurrent.futures.ThreadPoolExecutor(procs) as pool:
        for rows, p, f in pool.map(lambda c: run_chunk(binary, c[0], c[1], extra), chunks):
            for scenario, (ch, pu, co) in rows.items():
                if scenario == "fight":
                    continue  # its writes are the fight's, bounded per window
                changes, puts, conflicts = changes + ch, puts + pu, conflicts + co
                if scenario == "slow-leader":
                    slow_changes, slow_puts = slow_changes + ch, slow_puts + pu
            probes += p
            fails += f
    by_kind = {k: 0 for k in ("failover", "PUT", "write", "other")}
    for f in fails:
        by_kind[kind(f)] += 1
    others = [raw for s, raw in probes if s != "slow-leader"]
    slow = [raw for s, raw in probes if s == "slow-leader"]
    return {
        "fails": len(fails), "by_kind": by_kind,
        "raw": (pct(others, 0.5), pct(others, 0.99), max(others, default=0)),
        "slow": (pct(slow, 0.5), pct(slow, 0.99), max(slow, default=0)),
        "put": puts / max(changes, 1), "conflict": conflicts / max(changes, 1),
        "slow_put": slow_puts / max(slow_changes, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--seeds", type=int, default=2000)
    parser.add_argument("--first-seed", type=int, default=800000)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated configuration names")
    args = parser.parse_args()
    names = subprocess.run([args.binary, "--lease-rules-off=?"], capture_output=True,
                           text=True).stderr.split("rules:")[1].split()
    configs = [("defaults", [], args.first_seed),
               ("defaults, next seeds (noise)", [], args.first_seed + args.seeds)]
    configs += [(f"{n} off", [f"--lease-rules-off={n}"], args.first_seed) for n in names]
    configs += [("single-probe off", ["--single-probe=0"], args.first_seed),
                ("all off", ["--lease-rules-off=all"], args.first_seed)]
    if args.only:
        wanted = set(args.only.split(","))
        configs = [c for c in configs if c[0] in wanted]
    print(f"route-sim --seeds={args.seeds} --scenario=all --perturb=1 per configuration "
          f"(seeds {args.first_seed}..{args.first_seed + args.seeds - 1}); raw failover ms\n")
    print("| configuration | failing runs (failover/PUT/write/other) | raw p50 / p99 / max "
          "(all but slow-leader) | slow-leader raw p50 / p99 / max | PUTs / change | "
          "slow-leader PUTs / change | conflicts / change |")
    print("|---|---|---|---|---|---|---|")
    for name, extra, first in configs:
        r = measure(args.binary, first, args.seeds, args.procs, extra)
        k = r["by_kind"]
        print(f"| {name} | {r['fails']} ({k['failover']}/{k['PUT']}/{k['write']}/{k['other']}) "
              f"| {' / '.join(map(str, r['raw']))} | {' / '.join(map(str, r['slow']))} "
              f"| {r['put']:.3f} | {r['slow_put']:.3f} | {r['conflict']:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
