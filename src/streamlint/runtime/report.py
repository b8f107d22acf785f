"""Build the report data from records (runner.py): parse each trace, compute the
evidence, judge each pair, cost each flagged statement of a script. Needs no GPU.

`build(records)` returns the dict written as report.json; `traces(records)` the parsed
traces the pictures are drawn from.
"""

from __future__ import annotations

import json
from pathlib import Path

from streamlint.rules import rule_by_code
from streamlint.runtime import hazards
from streamlint.runtime.evidence import Evidence, summarize
from streamlint.runtime.labels import parse_label
from streamlint.runtime.pipeline import pipeline_report
from streamlint.runtime.trace import Trace, load
from streamlint.runtime.verdicts import ERROR, family, judge

VARIANTS = ("bad", "good")
MB = 1 << 20


def read_json(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def load_traces(pair_dir: Path) -> dict[str, Trace]:
    out = {}
    for variant in VARIANTS:
        path = pair_dir / f"{variant}.trace.json.gz"
        if path.exists():
            out[variant] = load(path)
    return out


def rule_name(code: str) -> str:
    rule = rule_by_code(code)
    return rule.name if rule is not None else ""


def analyse_pair(pair_dir: Path, traces: dict[str, Trace] | None = None) -> dict:
    rec = read_json(pair_dir / "pair.json")
    code = rec["code"]
    traces = load_traces(pair_dir) if traces is None else traces
    bad_findings = rec.get("findings", {}).get("bad", [])
    good_findings = rec.get("findings", {}).get("good", [])
    entry: dict = {
        "code": code,
        "name": rule_name(code),
        "family": family(code),
        "fixture": rec.get("fixture", ""),
        "static": {
            "bad": bad_findings,
            "good": good_findings,
            "bad_flagged": any(f["code"] == code for f in bad_findings),
            "good_clean": not good_findings,
        },
        "instrumented": rec.get("instrumented", {}),
        "comparison": rec.get("comparison"),
        "timeline": f"{code}.png",
    }
    errors = []
    for variant in VARIANTS:
        status = rec.get(variant, {})
        entry[variant] = {"status": status.get("status", "missing"), "wall_ms": status.get("wall_ms", []),
                          "params": status.get("params", {})}  # fmt: skip
        if status.get("status") != "ok":
            tail = (status.get("error") or "") + "\n" + (status.get("stderr_tail") or "")
            errors.append(f"{variant}.py failed: {tail.strip()[-1500:]}")
        elif variant not in traces:
            errors.append(f"{variant}.py left no trace")
    if errors:
        entry.update(verdict=ERROR, reason="\n".join(errors), key="error", speedup=0.0)
        return entry
    ev = {v: Evidence(traces[v]) for v in VARIANTS}
    summary = {v: summarize(traces[v]) for v in VARIANTS}
    for variant in VARIANTS:
        entry[variant].update(median=summary[variant]["median"], reps=summary[variant]["reps"],
                              median_rep=summary[variant]["median_rep"],
                              findings=summary[variant]["findings"])  # fmt: skip
    hazard = hazards.check(ev["bad"], code) if family(code) == "hazard" else None
    entry["hazard_trace"] = hazard
    entry["pipeline"] = pipeline_report(ev["good"], ev["bad"])
    verdict = judge(code, summary["bad"], summary["good"], comparison=rec.get("comparison"),
                    hazard=hazard, findings=summary["bad"]["findings"])  # fmt: skip
    entry.update(verdict=verdict["verdict"], reason=verdict["reason"], key=verdict["key"],
                 speedup=verdict["speedup"])  # fmt: skip
    return entry


def cost_sentence(cost: dict) -> str:
    n = cost.get("occurrences", 0)
    parts = [f"ran {n} time{'s' if n != 1 else ''}",
             f"host blocked {cost.get('host_blocked_ms', 0.0):.2f} ms "
             f"of {cost.get('host_ms', 0.0):.2f} ms spent here"]  # fmt: skip
    if cost.get("pageable_bytes"):
        parts.append(f"{cost['pageable_bytes'] / MB:.1f} MB copied from/to pageable memory")
    if cost.get("syncs"):
        parts.append(f"{cost['syncs']} synchronizations")
    if cost.get("copies"):
        parts.append(f"{cost['copies']} copies")
    parts.append(f"GPU idle {cost.get('gpu_idle_ms', 0.0):.2f} ms around it (lost overlap)")
    return "; ".join(parts)


def analyse_script(script_dir: Path, trace: Trace | None = None) -> dict:
    rec = read_json(script_dir / "script.json")
    path = script_dir / "trace.json.gz"
    if trace is None and path.exists():
        trace = load(path)
    entry: dict = {"script": rec["script"], "args": rec.get("args", []), "status": rec["run"].get("status"),
                   "instrumented": rec.get("instrumented", {}), "timeline": "script.png",
                   "wall_ms": rec["run"].get("wall_ms", [])}  # fmt: skip
    if rec["run"].get("status") != "ok":
        entry["error"] = ((rec["run"].get("error") or "") + "\n" + (rec["run"].get("stderr_tail") or "")).strip()
    findings = []
    if trace is not None:
        ev = Evidence(trace)
        summary = summarize(trace)
        entry["run_metrics"] = summary["median"]
        for d in rec.get("findings", []):
            label = f"{d['code']}:{d['row']}"
            cost = ev.finding_cost(label)
            item = dict(d, label=label, cost=cost, measured=cost_sentence(cost))
            if family(d["code"]) == "hazard":
                item["hazard_trace"] = hazards.check(ev, d["code"])
            findings.append(item)
    else:
        findings = [
            dict(d, label=f"{d['code']}:{d['row']}", cost=None, measured="no trace") for d in rec.get("findings", [])
        ]
    entry["findings"] = findings
    return entry


def build(records: Path) -> dict:
    """report.json's content for a records directory (pairs, or a script)."""
    records = Path(records)
    run = read_json(records / "run.json") if (records / "run.json").exists() else {}
    report = {key: run.get(key) for key in ("streamlint", "date", "git_commit", "machine", "settings")}
    if (records / "script" / "script.json").exists():
        report["script"] = analyse_script(records / "script")
        return report
    pairs = [analyse_pair(d) for d in sorted(p.parent for p in records.glob("*/pair.json"))]
    report["pairs"] = pairs
    counts: dict[str, int] = {}
    for p in pairs:
        counts[p["verdict"]] = counts.get(p["verdict"], 0) + 1
    report["summary"] = counts
    return report


def flagged_labels(entry: dict) -> list[str]:
    """The labels a pair's picture highlights: its own finding's statements."""
    wrapped = entry.get("instrumented", {}).get("bad", {}).get("wrapped", {})
    return [label for label in wrapped if (p := parse_label(label)) is not None and p.code == entry["code"]]
