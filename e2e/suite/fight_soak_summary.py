#!/usr/bin/env python3
"""Summarises `make soak`'s repeated fight runs: reads the e2e binary's
output (E2E-FIGURE lines of ContentionTest.FightingRoutersAreBoundedThenQuiet,
one set per --gtest_repeat iteration) on stdin, echoes it, then prints one
row per run and the maxima. Exits 1 when a run failed, when no run was
seen, or when a run wrote more than the bound (issue: max <= 30 writes)."""
import re
import sys

BOUND = 30
TEST = "ContentionTest.FightingRoutersAreBoundedThenQuiet"
runs, failed = [], 0
for line in sys.stdin:
    sys.stdout.write(line)
    m = re.match(r"E2E-FIGURE (\S+) (\w+)=(\S+)", line)
    if m and m.group(1) == TEST:
        key, value = m.group(2), float(m.group(3))
        if key == "fight_writes_success":
            runs.append({})
        if runs:
            runs[-1][key] = value
    # A run whose only failure is the bound still counts below; other
    # failures (no warning, not quiet, ...) fail the soak.
    if line.startswith("[  FAILED  ] " + TEST) and "(" in line:
        failed += 1

print("\nfight soak: 3 replicas of one router name, 3 hostname templates, 20 routes,"
      " the test's short lease flags (--lease-interval=2s --lease-retry-interval=500ms --lease-election-delay=500ms --contention-interval=15s)")
print(f"{'run':>4} {'writes':>7} {'409s':>5} {'settled (s)':>12} {'warning after start (s)':>24}")
for i, r in enumerate(runs, 1):
    print(f"{i:>4} {r.get('fight_writes_success', -1):>7.0f} {r.get('fight_writes_conflict', -1):>5.0f}"
          f" {r.get('fight_settled_after_seconds', -1):>12.1f}"
          f" {r.get('warning_after_start_seconds', -1):>24.2f}")
if runs:
    def mx(k):
        return max(r.get(k, float('nan')) for r in runs)
    print(f" max {mx('fight_writes_success'):>7.0f} {mx('fight_writes_conflict'):>5.0f}"
          f" {mx('fight_settled_after_seconds'):>12.1f}"
          f" {mx('warning_after_start_seconds'):>24.2f}   (bound: writes <= {BOUND})")
bad = not runs or failed > 0 or any(r.get("fight_writes_success", BOUND + 1) > BOUND for r in runs)
sys.exit(1 if bad else 0)
