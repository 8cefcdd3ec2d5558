#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks the PromQL that ships with cacheperf-bpf against what it exports.

usage: prom_queries_check.py --golden FILE... [--rules RULES.yml] --out RULES_OUT SOURCE...

SOURCE is a Grafana dashboard (.json: every panel target's expr and every
templating query), a Prometheus rules file (.yml: every rule's expr) or
Markdown (.md: every ```promql block is one expr).
Each metric name an expr queries must be a family of a golden Prometheus
file (its "# TYPE" line), or, with a colon, a recording rule of RULES.yml.
Every expr is written into RULES_OUT as a recording rule, for
`promtool check rules` to parse. Prints one line per unknown name (where
and which); exit status 1 when there is one, 2 on a usage error.
"""
import json
import re
import sys

import yaml

KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool",
            "and", "or", "unless", "inf", "nan", "Inf", "NaN"}


def metric_names(expr):
    """The metric names @expr selects (not functions, labels, keywords or numbers)."""
    s = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`', '""', expr)
    s = re.sub(r"\{[^}]*\}", " ", s)          # label matchers
    s = re.sub(r"\[[^\]]*\]", " ", s)         # ranges and subqueries
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    names = []
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", s):
        tok = m.group(0)
        before = s[m.start() - 1] if m.start() else " "
        if before.isdigit() or before == ".":   # 1e3, 5m
            continue
        if s[m.end():].lstrip().startswith("(") or tok in KEYWORDS:
            continue
        names.append(tok)
    return names


def dashboard_exprs(path):
    d = json.load(open(path))
    out = []

    def panels(ps):
        for p in ps:
            for t in p.get("targets", []):
                if t.get("expr"):
                    out.append((f'panel "{p.get("title")}" {t.get("refId")}', t["expr"]))
            panels(p.get("panels", []))
    panels(d.get("panels", []))
    for v in d.get("templating", {}).get("list", []):
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        m = re.match(r"\s*label_values\(\s*([^,)]+)", q or "") if v.get("type") == "query" else None
        if m:
            # Grafana's label_values(): its first argument is a selector
            out.append((f'variable "{v.get("name")}"', m.group(1)))
    return out


def markdown_exprs(path):
    text = open(path).read()
    return [(f"{path} block {i + 1}", b.strip())
            for i, b in enumerate(re.findall(r"```promql\n(.*?)```", text, re.S))]


def rules_of(path):
    return [r for g in yaml.safe_load(open(path))["groups"] for r in g["rules"]]


def rules_exprs(path):
    return [(f'{path} {r.get("record") or r.get("alert")}', r["expr"]) for r in rules_of(path)]


def main(argv):
    golden, rules, out, sources, key = [], None, None, [], None
    for a in argv:
        if a in ("--golden", "--rules", "--out"):
            key = a
        elif key == "--golden":
            golden.append(a)
        elif key == "--rules":
            rules, key = a, None
        elif key == "--out":
            out, key = a, None
        else:
            sources.append(a)
    if not golden or not out or not sources:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    families = set()
    for g in golden:
        families |= set(re.findall(r"^# TYPE (\S+) ", open(g).read(), re.M))
    records = {r["record"] for r in rules_of(rules) if "record" in r} if rules else set()
    exprs = []
    for src in sources:
        exprs += (dashboard_exprs(src) if src.endswith(".json") else
                  rules_exprs(src) if src.endswith((".yml", ".yaml")) else markdown_exprs(src))
    bad = 0
    for where, expr in exprs:
        names = metric_names(expr)
        if not names:
            print(f"{where}: queries no metric: {expr}")
            bad += 1
        for n in names:
            if n not in (records if ":" in n else families):
                print(f"{where}: {n} is in no golden file" if ":" not in n else
                      f"{where}: {n} is no recording rule of {rules}")
                bad += 1
    with open(out, "w") as f:
        f.write("groups:\n  - name: queries\n    rules:\n")
        for i, (where, expr) in enumerate(exprs):
            f.write(f"      - record: query:checked_{i}\n        expr: {json.dumps(expr)}\n")
    print(f"{len(exprs)} queries, {bad} unknown names")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
