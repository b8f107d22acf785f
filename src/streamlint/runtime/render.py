"""report.md and report.html from report.json's content (report.py): a summary table,
then per pair the static finding, the verdict and why, the measured evidence and the
timeline picture; for a script, the measured cost of each finding."""

from __future__ import annotations

import html
from statistics import median

MB = 1 << 20


def _machine_line(report: dict) -> str:
    m = report.get("machine") or {}
    libs = ", ".join(f"{k} {m[k]}" for k in ("torch", "cupy", "numba_cuda", "numba", "numpy") if m.get(k))
    parts = [m.get("gpu") or "a GPU whose name could not be read"]
    if m.get("driver"):
        parts.append(f"driver {m['driver']}")
    if m.get("cuda_runtime"):
        parts.append(f"CUDA {m['cuda_runtime']}")
    line = ", ".join(parts)
    if libs:
        line += f"; {libs}"
    if m.get("python"):
        line += f"; Python {m['python']}"
    return line


def _header(report: dict) -> list[str]:
    s = report.get("settings") or {}
    commit = report.get("git_commit") or "unknown"
    rerun = [f"{code} from a later run ({r.get('date') or 'unknown'}, commit `{r.get('git_commit') or 'unknown'}`: "
             f"{r.get('why') or 'its fixture changed'})" for code, r in sorted((report.get("rerun") or {}).items())]
    return [
        f"Measured on {_machine_line(report)}.",
        "",
        f"Date {report.get('date') or 'unknown'}; streamlint {report.get('streamlint')}; commit `{commit}`"
        + (f"; records of {'; '.join(rerun)}." if rerun else "."),
        "",
        f"Each variant runs in a process of its own: {s.get('warmup', '?')} warm-up calls, "
        f"{s.get('reps', '?')} timed calls, {s.get('traced_reps', '?')} traced calls; hazard pairs "
        f"compare {s.get('trials', '?')} trials. Times are GPU spans of one call of `run()` (first "
        "GPU operation start to last end), medians over the traced calls.",
    ]


def _ms(entry: dict, variant: str) -> str:
    value = entry.get(variant, {}).get("median", {}).get("span_ms")
    return f"{value:.2f}" if value is not None else "-"


def _wall(entry: dict, variant: str) -> str:
    walls = entry.get(variant, {}).get("wall_ms") or []
    return f"{median(walls):.1f}" if walls else "-"


def _evidence_lines(entry: dict) -> list[str]:
    lines = []
    for variant in ("bad", "good"):
        m = entry.get(variant, {}).get("median")
        if not m:
            continue
        lines.append(
            f"- `{variant}.py`: GPU span {m.get('span_ms', 0):.2f} ms (wall {_wall(entry, variant)} ms per call); "
            f"GPU busy {m.get('gpu_busy_ms', 0):.2f} ms, idle {m.get('gpu_idle_ms', 0):.2f} ms; "
            f"cross-stream overlap {m.get('cross_stream_ms', 0):.2f} ms ({100 * m.get('cross_stream_fraction', 0):.1f}%), "
            f"copy/kernel overlap {m.get('copy_kernel_overlap_ms', 0):.2f} ms; host blocked in CUDA calls "
            f"{m.get('blocked_ms', 0):.2f} ms, of which stalled before the last launch {m.get('stall_ms', 0):.2f} ms; "
            f"{int(m.get('copies', 0))} copies ({m.get('pageable_bytes', 0) / MB:.0f} MB pageable, "
            f"{m.get('pinned_bytes', 0) / MB:.0f} MB pinned), {int(m.get('syncs', 0))} synchronizations, "
            f"{int(m.get('creates', 0))} stream/event creations"
        )
    for label, cost in (entry.get("bad", {}).get("findings") or {}).items():
        if ":ref:" in label:
            continue
        lines.append(f"- at `{label}` (per traced call): ran {cost['occurrences'] / max(len(entry['bad'].get('reps', [])), 1):.0f} times, "
                     f"{cost['host_ms_each']:.3f} ms of host time each, host blocked {cost['host_blocked_ms']:.2f} ms in all, "
                     f"GPU idle around it {cost['gpu_idle_ms']:.2f} ms")  # fmt: skip
    cmp = entry.get("comparison")
    if cmp and cmp.get("trials"):
        lines.append(
            f"- results: {cmp['differing_trials']} of {cmp['trials']} bad trials differ from the fix "
            f"(worst {100 * cmp['wrong_fraction_max']:.2f}% of values, mean {100 * cmp['wrong_fraction_mean']:.2f}%); "
            f"the fix's {cmp.get('good_trials', 0)} trials agree: {cmp.get('good_consistent')}"
        )
    hz = entry.get("hazard_trace")
    if hz:
        lines.append(f"- trace: {hz['misordered']} of {hz['pairs']} accesses unordered ({hz['what']}), "
                     f"by up to {hz['max_lead_ms']:.3f} ms")  # fmt: skip
    attempts = entry.get("attempts") or []
    if len(attempts) > 1:
        lines.append(f"- attempts: {', then '.join(attempts)} (a pair not confirmed is run once more before that "
                     "verdict stands; the figures above are the last run's)")  # fmt: skip
    pl = entry.get("pipeline")
    if pl:
        lines.append(
            f"- pipeline: {pl['chunks']} chunks; stages per chunk {pl['h2d_ms']:.3f} ms in, "
            f"{pl['compute_ms']:.3f} ms compute, {pl['d2h_ms']:.3f} ms out; ideal overlapped time "
            f"{pl['ideal_ms']:.2f} ms (sequential {pl['sequential_ms']:.2f} ms); the fix reaches "
            f"{100 * pl['good_efficiency']:.0f}% of the bound, the bad variant "
            f"{100 * pl.get('bad_efficiency', 0):.0f}%"
        )
    return lines


def _static_lines(entry: dict) -> list[str]:
    fixture = entry.get("fixture", "")
    lines = []
    for f in entry["static"]["bad"]:
        lines.append(f"- `{fixture}/bad.py:{f['row']}:{f['column']}` {f['code']}: {f['message']}")
    lines.append(f"- `{fixture}/good.py`: " + ("no finding" if entry["static"]["good_clean"] else
                                             f"{len(entry['static']['good'])} findings (should be none)"))  # fmt: skip
    return lines


NO_STEADY = ("No flagged statement ran more than once, so the run has no steady state: each cost is that of "
             "its one execution, its first-call set-up reported apart.")


def markdown(report: dict) -> str:
    if "script" in report:
        return script_markdown(report)
    out = ["# streamlint runtime verification", ""] + _header(report) + [""]
    counts = report.get("summary", {})
    out.append("Verdicts: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) + ".")
    out += ["", "| Rule | Family | Verdict | Key figure | Bad ms | Good ms | Speed-up |",
            "|---|---|---|---|---:|---:|---:|"]  # fmt: skip
    for e in report.get("pairs", []):
        out.append(f"| [{e['code']}](#{e['code'].lower()}) {e['name']} | {e['family']} | **{e['verdict']}** | "
                   f"{e.get('key', '')} | {_ms(e, 'bad')} | {_ms(e, 'good')} | {e.get('speedup', 0):.2f}x |")  # fmt: skip
    for e in report.get("pairs", []):
        out += ["", f"## {e['code']}", "", f"**{e['name']}** ({e['family']}): **{e['verdict']}**. {e['reason']}", ""]
        out += _static_lines(e) + [""] + _evidence_lines(e) + [""]
        out.append(f"![{e['code']} timeline: bad above, good below]({e['timeline']})")
    return "\n".join(out) + "\n"


def script_header(report: dict) -> list[str]:
    """The script report's header: what ran, how, on what."""
    s = report["script"]
    st = report.get("settings") or {}
    m = report.get("machine") or {}
    commit = report.get("git_commit") or "unknown"
    tracer = m.get("tracer") or st.get("tracer") or "torch"
    tracer_text = ("the PyTorch profiler (Kineto over CUPTI)" if tracer == "torch"
                   else "CUPTI's activity API (cupti-python), without PyTorch")  # fmt: skip
    hazards = [f for f in s.get("findings", []) if f.get("provoked")]
    lines = [f"Measured on {_machine_line(report)}.", "",
             f"Date {report.get('date') or 'unknown'}; streamlint {report.get('streamlint')}; commit `{commit}`.", "",
             f"The script ran once as `__main__` under {tracer_text}, each flagged statement inside a range of "
             "its own. Costs are steady-state figures: each statement's first executions (lazy loading, JIT "
             "compiles, allocator growth) are left out, and the table says how many."]  # fmt: skip
    if hazards:
        p = hazards[0]["provoked"]
        lines[-1] += (f" Each hazard finding was provoked: {p.get('runs', 0)} more runs with a {p.get('spin_ms', 0):.0f} ms "
                      "spin kernel queued on the producing stream just before the producer, and one control run with "
                      "the delay on the consumer's side; outputs (the script's stdout) compared.")  # fmt: skip
    return lines


def _finding_rows(s: dict) -> list[tuple]:
    rows = []
    for f in s.get("findings", []):
        n, skip = f.get("occurrences"), f.get("warmup_excluded", 0)
        runs = "-" if n is None else (f"{n} ({skip} warm-up left out)" if skip else f"{n}")
        rows.append((f["row"], f["code"], f["verdict"], f.get("why", ""), f.get("measure", ""), runs))
    return rows


def script_markdown(report: dict) -> str:
    s = report["script"]
    args = " ".join(s.get("args", []))
    out = [f"# streamlint verify {s['script']}" + (f" -- {args}" if args else ""), ""] + script_header(report) + [""]
    if s.get("status") != "ok":
        out += ["The script failed:", "", "```", s.get("error", "")[-3000:], "```", ""]
    counts = s.get("summary", {})
    if counts:
        out += ["Verdicts: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) + ".", ""]
    out += ["| Line | Rule | Verdict | Why | Measure | Executions |", "|---:|---|---|---|---|---|"]
    for row, code, verdict, why, measure, runs in _finding_rows(s):
        out.append(f"| {row} | {code} | **{verdict}** | {why} | {measure} | {runs} |")
    out.append("")
    for f in s.get("findings", []):
        out.append(f"- line {f['row']}, {f['code']}: {f['message']}")
    m = s.get("run_metrics") or {}
    if m:
        out += ["", f"Whole run: GPU span {m.get('span_ms', 0):.2f} ms, GPU idle {m.get('gpu_idle_ms', 0):.2f} ms, "
                    f"host blocked {m.get('blocked_ms', 0):.2f} ms, {m.get('pageable_bytes', 0) / MB:.1f} MB pageable."]  # fmt: skip
    if s.get("output"):
        out += ["", "The script's own output: " + ", ".join(f"[{k}]({v})" for k, v in s["output"].items()) + "."]
    if s.get("timeline"):
        out += ["", f"![steady state of {s['script']}]({s['timeline']})", "",
                f"The whole run: [{s.get('timeline_full', '')}]({s.get('timeline_full', '')})."]  # fmt: skip
    else:  # nothing ran twice: the whole run is all there is
        out += ["", NO_STEADY, "", f"![the whole run of {s['script']}]({s.get('timeline_full', '')})"]
    for f in s.get("findings", []):
        if f.get("race_picture"):
            out += ["", f"![{f['code']} at line {f['row']}, provoked run]({f['race_picture']})"]
    return "\n".join(out) + "\n"


_CSS = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;font-size:14px}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}
th{background:#f3f3f3}.confirmed{color:#1a7f37;font-weight:bold}.error{color:#b00;font-weight:bold}
.not{color:#9a6700;font-weight:bold}img{max-width:100%;border:1px solid #ddd}code{background:#f6f6f6}
li{margin:3px 0}"""


def _cls(verdict: str) -> str:
    return {"confirmed": "confirmed", "error": "error"}.get(verdict, "not")


def _md_inline(text: str) -> str:
    """Escape, then render the `code` spans the Markdown uses."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def html_report(report: dict, images: dict[str, str] | None = None) -> str:
    """The HTML report; `images` maps picture file names to `data:` URIs, so that the
    page is self-contained (verify.py inlines every picture it drew)."""
    if "script" in report:
        body = _script_html(report, images)
        title = f"streamlint verify {report['script']['script']}"
    else:
        body = _pairs_html(report, images)
        title = "streamlint runtime verification"
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>\n")  # fmt: skip


def _header_html(report: dict) -> str:
    return "".join(f"<p>{_md_inline(line)}</p>" for line in _header(report) if line)


def _pairs_html(report: dict, images: dict[str, str] | None = None) -> str:
    images = images or {}
    rows = []
    for e in report.get("pairs", []):
        rows.append(
            f"<tr><td><a href='#{e['code']}'>{e['code']}</a> {html.escape(e['name'])}</td><td>{e['family']}</td>"
            f"<td class='{_cls(e['verdict'])}'>{e['verdict']}</td><td>{html.escape(e.get('key', ''))}</td>"
            f"<td>{_ms(e, 'bad')}</td><td>{_ms(e, 'good')}</td><td>{e.get('speedup', 0):.2f}x</td></tr>"
        )
    parts = [_header_html(report), "<table><tr><th>Rule</th><th>Family</th><th>Verdict</th><th>Key figure</th>"
             "<th>Bad ms</th><th>Good ms</th><th>Speed-up</th></tr>", *rows, "</table>"]  # fmt: skip
    for e in report.get("pairs", []):
        items = "".join(f"<li>{_md_inline(line[2:])}</li>" for line in _static_lines(e) + _evidence_lines(e))
        parts.append(
            f"<h2 id='{e['code']}'>{e['code']} {html.escape(e['name'])}</h2>"
            f"<p><span class='{_cls(e['verdict'])}'>{e['verdict']}</span>: {_md_inline(e['reason'])}</p>"
            f"<ul>{items}</ul><img src='{images.get(e['timeline'], e['timeline'])}' alt='{e['code']} timeline, bad above good'>"
        )
    return "".join(parts)


def _script_html(report: dict, images: dict[str, str] | None = None) -> str:
    s = report["script"]
    images = images or {}

    def img(name: str | None, alt: str) -> str:
        if not name:
            return ""
        return f"<p><img src='{images.get(name, name)}' alt='{html.escape(alt)}'></p>"

    rows = "".join(f"<tr><td>{row}</td><td>{code}</td><td class='{_cls(verdict)}'>{verdict}</td>"
                   f"<td>{_md_inline(why)}</td><td>{_md_inline(measure)}</td><td>{runs}</td></tr>"
                   for row, code, verdict, why, measure, runs in _finding_rows(s))  # fmt: skip
    notes = "".join(f"<li>line {f['row']}, {f['code']}: {_md_inline(f['message'])}</li>" for f in s.get("findings", []))
    err = f"<p>The script failed:</p><pre>{html.escape(s.get('error', ''))}</pre>" if s.get("status") != "ok" else ""
    header = "".join(f"<p>{_md_inline(line)}</p>" for line in script_header(report) if line)
    output = ""
    if s.get("output"):
        output = "<p>The script's own output: " + ", ".join(
            f"<a href='{html.escape(v)}'>{k}</a>" for k, v in s["output"].items()) + ".</p>"  # fmt: skip
    races = "".join(img(f.get("race_picture"), f"{f['code']} line {f['row']}, provoked run") for f in s.get("findings", []))
    full = s.get("timeline_full")
    return (f"{header}{err}<table><tr><th>Line</th><th>Rule</th><th>Verdict</th><th>Why</th><th>Measure</th>"
            f"<th>Executions</th></tr>{rows}</table><ul>{notes}</ul>{output}"
            + (f"<h2>Steady state</h2>{img(s.get('timeline'), 'timeline, steady state')}" if s.get("timeline")
               else f"<p>{NO_STEADY}</p>")
            + f"{('<h2>Provoked races</h2>' + races) if races else ''}"
            f"<h2>The whole run</h2>{img(full, 'timeline, whole run')}")  # fmt: skip
