#!/usr/bin/env python3
"""Summarises `make soak`'s repeated fight runs: reads the e2e binary's
output (E2E-FIGURE lines, one set per --gtest_repeat iteration) on stdin,
echoes it, then prints one row per run and the maxima of each fight test:

- ContentionTest.FightingRoutersAreBoundedThenQuiet (the test's short lease
  flags): every run at most 30 writes (issue 13);
- ContentionTest.LoadedFightWithDefaultLeaseFlags (default flags besides
  --lease-interval=5s --contention-interval=1m, two busy loops, the third
  replica started 1.5 s late): at most 30 writes in the first 30 s in at
  least 9 of 10 runs (issue 59).

Exits 1 when a run failed otherwise, when no run of a test was seen, or
when a test misses its bound."""
import re
import sys

BOUND = 30
QUIET = "ContentionTest.FightingRoutersAreBoundedThenQuiet"
LOADED = "ContentionTest.LoadedFightWithDefaultLeaseFlags"
FIRST_KEY = {QUIET: "fight_writes_success", LOADED: "loaded_fight_writes_success"}
runs = {QUIET: [], LOADED: []}
failed = 0
for line in sys.stdin:
    sys.stdout.write(line)
    m = re.match(r"E2E-FIGURE (\S+) (\w+)=(\S+)", line)
    if m and m.group(1) in runs:
        test, key, value = m.group(1), m.group(2), float(m.group(3))
        if key == FIRST_KEY[test]:
            runs[test].append({})
        if runs[test]:
            runs[test][-1][key] = value
    # A run whose only failure is a bound still counts below; other
    # failures (no warning, not quiet, ...) fail the soak.
    for test in runs:
        if line.startswith("[  FAILED  ] " + test) and "(" in line:
            failed += 1


def mx(rs, k):
    return max(r.get(k, float("nan")) for r in rs)


def table(title, columns, rows):
    """Prints `title`, a header and one line per run: columns are (name,
    width, format, value of a run)."""
    print("\n" + title)
    print(f"{'run':>4} " + " ".join(f"{name:>{w}}" for name, w, _, _ in columns))
    for i, r in enumerate(rows, 1):
        print(f"{i:>4} " + " ".join(f"{value(r):>{w}{fmt}}" for _, w, fmt, value in columns))


def key(k):
    return lambda r: r.get(k, -1)


quiet = runs[QUIET]
table("fight soak: 3 replicas of one router name, 3 hostname templates, 20 routes,"
      " the test's short lease flags (--lease-interval=2s --lease-retry-interval=500ms"
      " --lease-election-delay=500ms --contention-interval=15s)",
      [("writes", 7, ".0f", key("fight_writes_success")),
       ("409s", 5, ".0f", key("fight_writes_conflict")),
       ("settled (s)", 12, ".1f", key("fight_settled_after_seconds")),
       ("warning after start (s)", 24, ".2f", key("warning_after_start_seconds"))], quiet)
if quiet:
    print(f" max {mx(quiet, 'fight_writes_success'):>7.0f} {mx(quiet, 'fight_writes_conflict'):>5.0f}"
          f" {mx(quiet, 'fight_settled_after_seconds'):>12.1f}"
          f" {mx(quiet, 'warning_after_start_seconds'):>24.2f}   (bound: writes <= {BOUND})")

loaded = runs[LOADED]
table("loaded fight: the same on the product's defaults besides --lease-interval=5s"
      " --contention-interval=1m, busy loops beside the replicas, one replica started late;"
      " writes in the first 30 s",
      [("writes", 7, ".0f", key("loaded_fight_writes_success")),
       ("409s", 5, ".0f", key("loaded_fight_writes_conflict")),
       ("by replica", 12, "", lambda r: "/".join(
           f"{r.get(f'loaded_fight_writes_by_{k}', -1):.0f}" for k in range(3))),
       ("loops", 6, ".0f", key("loaded_fight_load_loops")),
       ("late (ms)", 10, ".0f", key("loaded_fight_late_ms"))], loaded)
within = sum(1 for r in loaded if r.get("loaded_fight_writes_success", BOUND + 1) <= BOUND)
if loaded:
    print(f" {within} of {len(loaded)} runs at most {BOUND} writes"
          f" (bound: at least 9 in 10, i.e. {-(-9 * len(loaded) // 10)})")

bad = (not quiet or not loaded or failed > 0
       or any(r.get("fight_writes_success", BOUND + 1) > BOUND for r in quiet)
       or within * 10 < 9 * len(loaded))
sys.exit(1 if bad else 0)
