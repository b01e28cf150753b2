#!/usr/bin/env python3
"""Checks that README.md stays a short page for people who run the controller.

Usage: check_readme.py README.md [MAX_LINES]

The README must be at most MAX_LINES (200) lines, start (after its title) with the two
set-up lines `make run` and `make test`, and carry no measurement
provenance: no commit hashes, load averages or seed numbers (those belong
beside the figures, in docs/benchmarks.md and e2e/bench/results/). Relative
links are tools/check_markdown_links.py's job. Prints one line per finding
as FILE:LINE: message; exits 1 when there is any.
"""
import re
import sys

MAX_LINES = 200
# Why a letter and a digit: a 7-40 character hex word with both is a commit
# hash; "1000000" or "deadbeef"-free prose words are not.
COMMIT = re.compile(r'\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b')
LOAD = re.compile(r'\bload(?: average)?s?\s*(?:of\s*)?\d[\d.]*', re.I)
SEED = re.compile(r'\bseeds?\s*(?:=\s*)?\d+', re.I)


def check(path, max_lines=MAX_LINES):
    with open(path, encoding='utf-8') as f:
        lines = f.read().splitlines()
    findings = []
    if len(lines) > max_lines:
        findings.append(f'{path}:{len(lines)}: {len(lines)} lines, more than {max_lines}')
    body = [l.strip() for l in lines if l.strip() and not l.startswith('# ')]
    if len(body) < 2 or not body[0].startswith('make run') or not body[1].startswith('make test'):
        findings.append(f'{path}:1: the first lines after the title are not `make run` and `make test`')
    for number, line in enumerate(lines, 1):
        for pattern, what in ((COMMIT, 'a commit hash'), (LOAD, 'a load average'),
                              (SEED, 'a seed number')):
            m = pattern.search(line)
            if m:
                findings.append(f'{path}:{number}: {what} ({m.group(0)}): move it to docs/benchmarks.md')
    return findings


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    findings = check(argv[1], int(argv[2]) if len(argv) == 3 else MAX_LINES)
    for f in findings:
        print(f)
    print(f'{argv[1]}: {len(findings)} finding(s)')
    return 1 if findings else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
