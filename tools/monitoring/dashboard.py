#!/usr/bin/env python3
"""Lint of deploy/monitoring/dashboard.json, the Grafana dashboard.

Checks what Grafana needs to import the JSON model and what operators rely
on, without a Grafana:
  - the model: title, uid (at most 40 characters), an integer schemaVersion,
    time.from/to, a templating variable `datasource` of type datasource
    for prometheus; every panel has a unique id, a type, a title and a
    gridPos (h, w, x, y; inside the 24 columns, no two panels overlapping);
  - every panel (rows aside) and every target uses the `${datasource}`
    variable; every target has a unique refId and an expr;
  - every panel's description says what a healthy value is ("Healthy") and
    names a docs/runbook.md#anchor that is a heading of the runbook;
  - every metric an expr uses is listed in METRICS.md: routestatus_* in
    its table, others in its "Metrics from other exporters" table;
  - deploy/monitoring/kustomization.yaml ships dashboard.json itself (a
    configMapGenerator labelled grafana_dashboard: "1"), so there is one
    copy of the JSON.
The PromQL itself is checked by PrometheusTest (e2e), against a live
Prometheus that scrapes real replicas; `--print-metrics` gives it the
metric names each panel uses (this file is the one PromQL tokenizer).

Exit status 0 when fine, 1 with one line per finding otherwise.
"""

import argparse
import json
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from check_markdown_links import anchors  # noqa: E402  (GitHub's heading slugs)

DASHBOARD = os.path.join(ROOT, "deploy/monitoring/dashboard.json")
KUSTOMIZATION = os.path.join(ROOT, "deploy/monitoring/kustomization.yaml")
RUNBOOK = os.path.join(ROOT, "docs/runbook.md")
METRICS = os.path.join(ROOT, "cmd/route-status-controller/METRICS.md")
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}

# PromQL words that look like metric names: functions, aggregations,
# keywords. Anything else followed by `{`, `[`, `)` or an operator is a name.
PROMQL_WORDS = set("""
sum min max avg count stddev stdvar topk bottomk quantile count_values group
by without on ignoring group_left group_right bool and or unless offset
rate irate increase delta idelta deriv changes resets histogram_quantile
time timestamp vector scalar abs ceil floor round clamp clamp_min clamp_max
label_replace label_join absent absent_over_time present_over_time
avg_over_time min_over_time max_over_time sum_over_time count_over_time
last_over_time quantile_over_time stddev_over_time predict_linear sort
sort_desc sgn exp ln log2 log10 sqrt inf nan
""".split())


def metric_names(expr):
    """The metric names a PromQL expression reads (label names, label
    values, functions and durations left out)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)       # label values
    text = re.sub(r"\{[^}]*\}", "{}", text)                 # matchers
    text = re.sub(r"\[[^\]]*\]", "[]", text)                # ranges
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for word in re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        if word.lower() in PROMQL_WORDS or word.startswith("$"):
            continue
        names.add(word)
    return names


def base_name(metric):
    """A histogram's series name without _bucket/_sum/_count."""
    return re.sub(r"_(bucket|sum|count)$", "", metric)


def documented_metrics(text):
    """(routestatus metrics, {metric from another exporter: whether the e2e
    suite scrapes it}) as METRICS.md lists them."""
    ours = set(re.findall(r"^\| `(routestatus_[a-z0-9_]+)`", text, re.M))
    others = {}
    section = re.search(r"^## Metrics from other exporters\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if section:
        for name, in_e2e in re.findall(r"^\| `([a-z_:][a-z0-9_:]*)` \|.*\| (yes|no) \|$",
                                       section.group(1), re.M):
            others[name] = in_e2e == "yes"
    return ours, others


def print_metrics(d, others):
    """JSON {metric: {"in_e2e": bool, "panels": [titles]}} of every metric
    the panels' queries use, for PrometheusTest."""
    used = {}
    for p in panels(d):
        for t in p.get("targets", []):
            for metric in metric_names(t.get("expr", "")):
                entry = used.setdefault(metric, {"in_e2e": others.get(metric, True), "panels": []})
                if p.get("title") not in entry["panels"]:
                    entry["panels"].append(p.get("title"))
    json.dump(used, sys.stdout, indent=1, sort_keys=True)
    print()


def panels(dashboard):
    """Every panel, those nested in collapsed rows included."""
    for p in dashboard.get("panels", []):
        yield p
        for q in p.get("panels", []) or []:
            yield q


def lint_model(d, findings):
    for key in ("title", "uid", "schemaVersion", "panels", "time", "templating"):
        if key not in d:
            findings.append("dashboard: %s missing" % key)
    if len(str(d.get("uid", ""))) > 40:
        findings.append("dashboard: uid longer than 40 characters")
    if not isinstance(d.get("schemaVersion"), int):
        findings.append("dashboard: schemaVersion is not an integer")
    if not {"from", "to"} <= set(d.get("time", {})):
        findings.append("dashboard: time needs from and to")
    variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
    ds = variables.get("datasource", {})
    if ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        findings.append("dashboard: no templating variable datasource of type datasource, query prometheus")

    ids, cells = set(), {}
    for p in panels(d):
        where = "panel %r" % p.get("title")
        if p.get("id") in ids or not isinstance(p.get("id"), int):
            findings.append("%s: id missing or not unique" % where)
        ids.add(p.get("id"))
        if not p.get("type") or not p.get("title"):
            findings.append("%s: type or title missing" % where)
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in "hwxy"):
            findings.append("%s: gridPos needs integers h, w, x, y" % where)
            continue
        if g["x"] < 0 or g["x"] + g["w"] > 24:
            findings.append("%s: gridPos outside the 24 columns" % where)
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                other = cells.setdefault((x, y), p.get("title"))
                if other != p.get("title"):
                    findings.append("%s: overlaps panel %r" % (where, other))
                    break
            else:
                continue
            break


def lint_panels(d, runbook_anchors, ours, others, findings):
    for p in panels(d):
        if p.get("type") == "row":
            continue
        where = "panel %r" % p.get("title")
        if p.get("datasource") != DATASOURCE:
            findings.append("%s: datasource is not %s" % (where, DATASOURCE))
        description = p.get("description", "")
        if "Healthy" not in description:
            findings.append("%s: description does not say what is healthy" % where)
        links = re.findall(r"docs/runbook\.md#([a-z0-9_-]+)", description)
        if not links:
            findings.append("%s: description links no docs/runbook.md#section" % where)
        for anchor in links:
            if anchor not in runbook_anchors:
                findings.append("%s: docs/runbook.md has no heading #%s" % (where, anchor))
        targets = p.get("targets", [])
        if not targets:
            findings.append("%s: no targets" % where)
        refs = [t.get("refId") for t in targets]
        if None in refs or len(set(refs)) != len(refs):
            findings.append("%s: refId missing or repeated" % where)
        for t in targets:
            if t.get("datasource") != DATASOURCE:
                findings.append("%s: target %s: datasource is not %s" % (where, t.get("refId"), DATASOURCE))
            if not t.get("expr", "").strip():
                findings.append("%s: target %s: no expr" % (where, t.get("refId")))
            for metric in sorted(metric_names(t.get("expr", ""))):
                if base_name(metric) not in ours and metric not in others:
                    findings.append("%s: uses %s, which METRICS.md does not list" % (where, metric))


def lint_kustomization(path, dashboard_path, findings):
    k = yaml.safe_load(open(path, encoding="utf-8"))
    want = os.path.basename(dashboard_path)
    for g in k.get("configMapGenerator", []) or []:
        files = [f.split("=", 1)[-1] for f in g.get("files", [])]
        labels = (g.get("options") or {}).get("labels", {})
        if want in files and labels.get("grafana_dashboard") == "1":
            return
    findings.append("%s: no configMapGenerator of %s labelled grafana_dashboard: \"1\"" %
                    (os.path.basename(path), want))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dashboard", default=DASHBOARD)
    parser.add_argument("--kustomization", default=KUSTOMIZATION)
    parser.add_argument("--metrics", default=METRICS)
    parser.add_argument("--print-metrics", action="store_true",
                        help="print the metrics the panels use (JSON) instead of linting")
    args = parser.parse_args()
    findings = []
    with open(args.dashboard, encoding="utf-8") as f:
        d = json.load(f)
    with open(args.metrics, encoding="utf-8") as f:
        ours, others = documented_metrics(f.read())
    if args.print_metrics:
        print_metrics(d, others)
        return 0
    lint_model(d, findings)
    lint_panels(d, anchors(RUNBOOK), ours, others, findings)
    lint_kustomization(args.kustomization, args.dashboard, findings)
    for f in findings:
        print(f)
    count = sum(1 for p in panels(d) if p.get("type") != "row")
    print("%d panels, %d finding(s)" % (count, len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
