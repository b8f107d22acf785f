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
    walls = {v: entry[v].get("wall_ms", []) for v in VARIANTS}
    verdict = judge(code, summary["bad"], summary["good"], comparison=rec.get("comparison"),
                    hazard=hazard, findings=summary["bad"]["findings"], walls=walls)  # fmt: skip
    entry.update(verdict=verdict["verdict"], reason=verdict["reason"], key=verdict["key"],
                 speedup=verdict["speedup"])  # fmt: skip
    if verdict.get("wall"):
        entry["wall"] = verdict["wall"]
    if rec.get("attempts"):
        entry["attempts"] = rec["attempts"]
    return entry


def cost_sentence(cost: dict) -> str:
    n = cost.get("occurrences", 0)
    parts = [f"ran {n} time{'s' if n != 1 else ''}"]
    if "first_call_ms" in cost:  # ran once: the first-call set-up is not the statement's cost
        parts = [f"ran once: {cost['first_call_ms']:.2f} ms before its first GPU launch (JIT compile, module "
                 "loading, first-call set-up: paid once) are not charged; from that launch on"]  # fmt: skip
    parts.append(f"host blocked {cost.get('host_blocked_ms', 0.0):.2f} ms of {cost.get('host_ms', 0.0):.2f} ms "
                 "spent here")  # fmt: skip
    if cost.get("pageable_bytes"):
        parts.append(f"{cost['pageable_bytes'] / MB:.1f} MB copied from/to pageable memory")
    if cost.get("syncs"):
        parts.append(f"{cost['syncs']} synchronizations")
    if cost.get("copies"):
        parts.append(f"{cost['copies']} copies")
    parts.append(f"GPU idle {cost.get('gpu_idle_ms', 0.0):.2f} ms around it")
    return "; ".join(parts)


def _provoked_evidence(script_dir: Path, label: str, prov: dict, plain_raced: bool = False) -> dict:
    """The provoked and control runs of one hazard finding: outputs compared (the plain
    run stands in for a second control run, unless its own accesses ran unordered), and
    the finding's own race check on each run's trace."""
    from streamlint.runtime.provoke import compare_outputs

    def ok_stdout(r: dict) -> str | None:
        return r.get("stdout") if r.get("status") == "ok" else None

    provoked = [r for r in prov.get("runs", []) if r["side"] == "provoked"]
    control = [r for r in prov.get("runs", []) if r["side"] == "control"]
    plain_path = script_dir / "stdout.txt"
    plain = plain_path.read_text(encoding="utf-8", errors="replace") if plain_path.exists() and not plain_raced else None
    out = compare_outputs([ok_stdout(r) for r in provoked], [ok_stdout(r) for r in control], plain)
    out["runs"] = len(provoked)
    out["failed"] = sum(1 for r in prov.get("runs", []) if r.get("status") != "ok")
    checks, control_checks, traces = [], [], []
    for group, into in ((provoked, checks), (control, control_checks)):
        for r in group:
            path = script_dir / r["trace"] if r.get("trace") else None
            if path is None or not path.exists():
                continue
            found = hazards.check_finding(Evidence(load(path)), label)
            if found is not None:
                into.append(found)
                if group is provoked:
                    traces.append((r["trace"], found))
    out["checks"], out["control_checks"] = checks, control_checks
    # the picture shows the provoked run whose race is clearest
    if traces:
        out["trace"] = max(traces, key=lambda t: (t[1].get("misordered", 0), t[1].get("max_lead_ms", 0.0)))[0]
    out["delay"] = prov.get("provoked")
    out["control_delay"] = prov.get("control")
    out["spin_ms"] = prov.get("spin_ms")
    out["sized_ms"] = prov.get("sized_ms")
    out["outputs"] = sorted({(ok_stdout(r) or "").strip()[-200:] for r in prov.get("runs", [])})
    return out


def analyse_script(script_dir: Path, trace: Trace | None = None) -> dict:
    from streamlint.runtime import script_verdicts as sv

    rec = read_json(script_dir / "script.json")
    path = script_dir / "trace.json.gz"
    if trace is None and path.exists():
        trace = load(path)
    entry: dict = {"script": rec["script"], "args": rec.get("args", []), "status": rec["run"].get("status"),
                   "instrumented": rec.get("instrumented", {}), "timeline": "script.png",
                   "timeline_full": "script_full.png", "wall_ms": rec["run"].get("wall_ms", []),
                   "output": {s: f"script.{s}.txt" for s in ("stdout", "stderr") if (script_dir / f"{s}.txt").exists()}}  # fmt: skip
    if rec["run"].get("status") != "ok":
        entry["error"] = ((rec["run"].get("error") or "") + "\n" + (rec["run"].get("stderr_tail") or "")).strip()
    wrapped = rec.get("instrumented", {}).get("wrapped", {})
    skipped = rec.get("instrumented", {}).get("skipped", {})
    findings = []
    ev = Evidence(trace) if trace is not None else None
    if ev is not None:
        summary = summarize(trace)
        entry["run_metrics"] = summary["median"]
        span = sv.run_span(ev)
        own_labels = [f"{d['code']}:{d['row']}" for d in rec.get("findings", [])]
        entry["steady_start_ms"] = None
        start = sv.steady_start(ev, own_labels)
        first = min((o.start for o in ev.ops), default=None)
        if start is not None and first is not None:
            entry["steady_start_ms"] = max(0.0, (start - first) / 1e3)
        if start is None:  # no statement ran twice: a "steady state" picture would be the whole run
            entry["timeline"] = None
    for d in rec.get("findings", []):
        label = f"{d['code']}:{d['row']}"
        item = dict(d, label=label)
        if label in skipped or label not in wrapped:
            item.update(verdict=sv.NOT_MEASURABLE, why=f"the statement could not be instrumented: "
                        f"{skipped.get(label, 'not wrapped')}", measure="")  # fmt: skip
            findings.append(item)
            continue
        if ev is None:
            item.update(verdict=sv.NOT_MEASURABLE, why="the run left no trace (it failed before tracing ended)",
                        measure="")  # fmt: skip
            findings.append(item)
            continue
        inner = sv.enclosed_labels(ev, label, list(wrapped))
        ranges = sv.tail_ranges(ev, label, inner) if inner else None
        cost, n_all, skipped_n = sv.steady_cost(ev, label, ranges)
        item.update(cost=cost, occurrences=n_all, warmup_excluded=skipped_n, encloses=inner,
                    measured=cost_sentence(cost))  # fmt: skip
        if family(d["code"]) == "hazard":
            base = hazards.check_finding(ev, label)
            item["hazard_trace"] = base
            prov = rec.get("provoke", {}).get(label)
            raced = bool((base or {}).get("misordered"))
            provoked = _provoked_evidence(script_dir, label, prov, raced) if prov else None
            item["provoked"] = provoked
            shared = sv.hazard_sharing(label, (prov or {}).get("provoked", {}).get("at"), list(wrapped))
            item.update(sv.judge_hazard(label, base, provoked, shared))
            if provoked and provoked.get("trace"):
                item["race_picture"] = f"race_{d['code']}_{d['row']}.png"
        elif n_all == 0:
            item.update(verdict=sv.NOT_OBSERVED, why="the line never ran", measure="", figures={})
        else:
            item.update(sv.judge_cost(d["code"], cost, span))
            if inner:
                lines = ", ".join(sorted({str(sv.statement_row(x)) for x in inner}, key=int))
                item["why"] = (f"a call site that runs the flagged lines {lines}: only what it does after them is "
                               f"charged here; " + item["why"])  # fmt: skip
        findings.append(item)
    entry["findings"] = findings
    counts: dict[str, int] = {}
    for f in findings:
        counts[f["verdict"]] = counts.get(f["verdict"], 0) + 1
    entry["summary"] = counts
    return entry


def build(records: Path) -> dict:
    """report.json's content for a records directory (pairs, or a script)."""
    records = Path(records)
    run = read_json(records / "run.json") if (records / "run.json").exists() else {}
    report = {key: run.get(key) for key in ("streamlint", "date", "git_commit", "machine", "settings")}
    if run.get("rerun"):  # pairs whose records were replaced by a later run's (their fixture changed)
        report["rerun"] = run["rerun"]
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
