#!/usr/bin/python3
"""Every log phrase the operator documents tell people to search for is one
the controller logs.

The runbook, docs/operations.md and the alert descriptions say
`kubectl logs ... | grep 'PHRASE'` or name a line as ("PHRASE"). A phrase
that no longer matches any log line sends an operator to an empty search in
the middle of an incident, so each must be part of one string literal of
the controller's sources (cmd/, controller/, conflict/, lease/, kubeclient/,
base/). `grep -E` patterns are regular expressions and are skipped.

Usage: check_log_phrases.py ROOT [FILE ...]
Without FILEs: docs/*.md, README.md and deploy/monitoring/*.yaml under ROOT.
Exit 0 when every phrase is logged, 1 otherwise (one line per phrase).
"""
import glob
import os
import re
import sys

SOURCE_DIRS = ["cmd", "controller", "conflict", "lease", "kubeclient", "base"]
GREP = re.compile(r"grep((?:\s+-[A-Za-z]+)*)\s+'([^']+)'")
NAMED = re.compile(r"""log[^(]*\("([^"]{8,})"\)""")
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def source_literals(root):
    literals = []
    for folder in SOURCE_DIRS:
        pattern = os.path.join(root, folder, "**", "*.cc")
        for path in glob.glob(pattern, recursive=True):
            with open(path, encoding="utf-8") as f:
                literals.extend(m.group(1) for m in LITERAL.finditer(f.read()))
    return literals


def phrases(path):
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            for m in GREP.finditer(line):
                if "E" not in m.group(1):
                    yield number, m.group(2)
            for m in NAMED.finditer(line):
                yield number, m.group(1)


def main(argv):
    root = os.path.abspath(argv[1])
    files = argv[2:] or (glob.glob(os.path.join(root, "docs", "*.md")) +
                         [os.path.join(root, "README.md")] +
                         glob.glob(os.path.join(root, "deploy", "monitoring", "*.yaml")))
    literals = source_literals(root)
    checked = missing = 0
    for path in sorted(files):
        for number, phrase in phrases(path):
            checked += 1
            if not any(phrase in literal for literal in literals):
                missing += 1
                print(f"{os.path.relpath(path, root)}:{number}: '{phrase}' is in no log line "
                      f"of {', '.join(SOURCE_DIRS)}")
    print(f"{checked} phrase(s), {missing} not logged")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
