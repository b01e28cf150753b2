#!/usr/bin/env python3
"""The monitoring rules of deploy/monitoring/: one source, its copies, a lint.

deploy/monitoring/routestatus.rules.yaml (a Prometheus rules file) is the
source. Subcommands:

  prometheusrule   print the PrometheusRule that carries the same groups
                   (deploy/monitoring/prometheusrule.yaml is this output)
  check-sync       fail when deploy/monitoring/prometheusrule.yaml is not
                   what `prometheusrule` prints (text and parsed groups)
  lint             check what promtool does not: every alert has a
                   severity, summary, description and a runbook_url naming
                   its own section of docs/runbook.md (with Meaning, Impact,
                   Diagnosis and Fix); every routestatus_* metric an
                   expression uses is listed in METRICS.md; the promtool
                   unit tests make every alert fire and also hold it
                   silent, and query every recording rule

Exit status 0 when fine, 1 with one line per finding otherwise.
"""

import argparse
import difflib
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RULES = os.path.join(ROOT, "deploy/monitoring/routestatus.rules.yaml")
PROMETHEUS_RULE = os.path.join(ROOT, "deploy/monitoring/prometheusrule.yaml")
RUNBOOK = os.path.join(ROOT, "docs/runbook.md")
METRICS = os.path.join(ROOT, "cmd/route-status-controller/METRICS.md")
TESTS = os.path.join(ROOT, "test/monitoring/routestatus_rules_test.yaml")

PROMETHEUS_RULE_HEADER = """\
# GENERATED from routestatus.rules.yaml by tools/monitoring/rules.py; do not
# edit: change routestatus.rules.yaml, then run
#   python3 tools/monitoring/rules.py prometheusrule > deploy/monitoring/prometheusrule.yaml
# Needs the prometheus-operator CRDs (monitoring.coreos.com/v1). A Prometheus
# whose ruleSelector wants other labels (kube-prometheus-stack: release=NAME)
# needs them added here (a kustomize patch).
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: route-status-controller
  namespace: routestatus-system
  labels:
    app.kubernetes.io/name: route-status-controller
    app.kubernetes.io/part-of: routestatus
spec:
"""

RUNBOOK_PREFIX = "docs/runbook.md#"
SEVERITIES = {"critical", "warning", "info"}
RUNBOOK_PARTS = ("Meaning", "Impact", "Diagnosis", "Fix")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def prometheus_rule(rules_text):
    """The PrometheusRule text: the header, then the rules file from its
    `groups:` line on, indented under `spec:` (comments and block scalars
    kept as written)."""
    lines = rules_text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("groups:")), None)
    if start is None:
        raise ValueError("no top-level 'groups:' line")
    body = ["  " + l if l.strip() else "" for l in lines[start:]]
    return PROMETHEUS_RULE_HEADER + "\n".join(body) + "\n"


def alerts(groups):
    return [r for g in groups for r in g.get("rules", []) if "alert" in r]


def records(groups):
    return [r for g in groups for r in g.get("rules", []) if "record" in r]


def cmd_prometheusrule(args):
    sys.stdout.write(prometheus_rule(read(args.rules)))
    return 0


def cmd_check_sync(args):
    want = prometheus_rule(read(args.rules))
    have = read(args.prometheusrule)
    findings = []
    if have != want:
        diff = difflib.unified_diff(want.splitlines(), have.splitlines(), "generated",
                                    args.prometheusrule, lineterm="", n=1)
        findings.append("%s differs from what `tools/monitoring/rules.py prometheusrule` "
                        "prints:\n%s" % (args.prometheusrule, "\n".join(list(diff)[:40])))
    # Why also parsed: a hand edit that keeps the text equal is impossible,
    # but a generator bug that breaks the nesting would pass the text test.
    spec = (yaml.safe_load(have) or {}).get("spec")
    if spec != yaml.safe_load(read(args.rules)):
        findings.append("%s: spec is not the groups of %s" % (args.prometheusrule, args.rules))
    for f in findings:
        print(f)
    if not findings:
        print("%s is in sync with %s" % (args.prometheusrule, args.rules))
    return 1 if findings else 0


def runbook_sections(text):
    """{heading: body} of the `## ` sections of the runbook."""
    sections = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^## (\S.*?)\s*$", line)
        if m:
            current = m.group(1)
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return {k: "\n".join(v) for k, v in sections.items()}


def lint(rules_path, runbook_path, metrics_path, tests_path):
    findings = []
    groups = yaml.safe_load(read(rules_path))["groups"]
    sections = runbook_sections(read(runbook_path))
    metrics_doc = read(metrics_path)
    documented = set(re.findall(r"`(routestatus_[a-z0-9_]+)`", metrics_doc))
    recorded = {r["record"] for r in records(groups)}

    names = []
    for rule in alerts(groups):
        name = rule["alert"]
        names.append(name)
        where = "%s: alert %s" % (os.path.basename(rules_path), name)
        if rule.get("labels", {}).get("severity") not in SEVERITIES:
            findings.append("%s: severity label missing or not one of %s" %
                            (where, "/".join(sorted(SEVERITIES))))
        if "for" not in rule:
            findings.append("%s: no `for:` (it would fire on one evaluation)" % where)
        annotations = rule.get("annotations", {})
        for key in ("summary", "description", "runbook_url"):
            if not str(annotations.get(key, "")).strip():
                findings.append("%s: annotation %s missing" % (where, key))
        url = annotations.get("runbook_url", "")
        if url and url != RUNBOOK_PREFIX + name.lower():
            findings.append("%s: runbook_url %s is not %s%s" %
                            (where, url, RUNBOOK_PREFIX, name.lower()))
        if name not in sections:
            findings.append("%s: no section '## %s' in %s" %
                            (where, name, os.path.basename(runbook_path)))
        else:
            for part in RUNBOOK_PARTS:
                if not re.search(r"^### %s\s*$" % part, sections[name], re.M):
                    findings.append("%s: runbook section %s has no '### %s'" % (where, name, part))
    for heading in sections:
        if heading.startswith("RouteStatus") and heading not in names:
            findings.append("%s: section '## %s' names no alert" %
                            (os.path.basename(runbook_path), heading))

    for rule in alerts(groups) + records(groups):
        label = rule.get("alert") or rule.get("record")
        # Why without recording-rule names: they embed metric names.
        expr = re.sub(r"[A-Za-z0-9_]*:[A-Za-z0-9_:]+", " ", rule["expr"])
        for metric in sorted(set(re.findall(r"\b(routestatus_[a-z0-9_]+)", expr))):
            if metric not in documented:
                findings.append("%s: %s uses %s, which %s does not list" %
                                (os.path.basename(rules_path), label, metric,
                                 os.path.basename(metrics_path)))

    tests = yaml.safe_load(read(tests_path)).get("tests", [])
    fires, silent, queried = set(), set(), set()
    for test in tests:
        for case in test.get("alert_rule_test", []) or []:
            (fires if case.get("exp_alerts") else silent).add(case.get("alertname"))
        for case in test.get("promql_expr_test", []) or []:
            queried.update(re.findall(r"[a-z_]*:[a-z0-9_]+:[a-z0-9_]+", case.get("expr", "")))
    for name in names:
        if name not in fires:
            findings.append("%s: no test case where %s fires" % (os.path.basename(tests_path), name))
        if name not in silent:
            findings.append("%s: no test case where %s must not fire" %
                            (os.path.basename(tests_path), name))
    for record in sorted(recorded - queried):
        findings.append("%s: no promql_expr_test queries %s" % (os.path.basename(tests_path), record))
    return names, findings


def cmd_lint(args):
    names, findings = lint(args.rules, args.runbook, args.metrics, args.tests)
    for f in findings:
        print(f)
    print("%d alerts, %d finding(s)" % (len(names), len(findings)))
    return 1 if findings else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default=RULES)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("prometheusrule").set_defaults(run=cmd_prometheusrule)
    p = sub.add_parser("check-sync")
    p.add_argument("--prometheusrule", default=PROMETHEUS_RULE)
    p.set_defaults(run=cmd_check_sync)
    p = sub.add_parser("lint")
    p.add_argument("--runbook", default=RUNBOOK)
    p.add_argument("--metrics", default=METRICS)
    p.add_argument("--tests", default=TESTS)
    p.set_defaults(run=cmd_lint)
    args = parser.parse_args()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
