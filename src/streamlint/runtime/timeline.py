"""Timeline pictures (matplotlib, PNG): one lane for the host and one per stream; for a
pair the bad variant above the good one on the same time scale; kernels, host-to-device
and device-to-host copies, memsets in distinct colours (pageable copies hatched); host
calls that block in red; the flagged statement's executions shaded in yellow (the
statements its message refers to in light blue).

So that every picture shows its problem: an op narrower than MIN_WIDTH of the picture
is drawn that wide, labelled with its real duration (microsecond kernels on a side
stream stay visible); a lane with hundreds of ops merges runs of nearly touching ops
into one bar labelled with their count (SL303's per-batch copies); the two racing
accesses of a hazard are outlined in red with the time by which they overlap; the
provoking spin kernels are hatched in purple; a statement that encloses the whole run
(a call site) is bracketed, not shaded. Script pictures zoom to the steady state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from streamlint.runtime import intervals as iv
from streamlint.runtime.evidence import MS, Evidence, reps
from streamlint.runtime.labels import parse_label
from streamlint.runtime.streams import lane_order, stream_map
from streamlint.runtime.trace import BLOCKING_KINDS, GpuOp, Range, Trace

COLORS = {
    "kernel": "#4c72b0",
    "HtoD": "#2ca02c",
    "DtoH": "#ff7f0e",
    "copy": "#8c564b",
    "memset": "#7f7f7f",
    "blocking": "#c0392b",
    "call": "#c8c8c8",
    "flagged": "#ffd84d",
    "ref": "#9ecae1",
    "spin": "#9467bd",
    "race": "#d62728",
}
MIN_WIDTH = 0.004  # of the picture's time span: the narrowest bar drawn
MAX_DURATION_LABELS = 4  # per lane: real durations written beside widened bars
AGGREGATE_OVER = 120  # ops in one lane above which nearly touching ops are merged
AGGREGATE_GAP = 0.004  # of the time span: ops closer than this merge into one bar
ENCLOSING_SHARE = 0.5  # a range covering more of the window than this is a call site
MAX_LANES = 10
# A call drawn as blocking: any synchronization, or a copy / memset / allocation that held
# the host longer than a launch would (an asynchronous call returns in microseconds).
BLOCKING_DRAW_US = 20.0


def _color(op: GpuOp) -> str:
    if op.kind == "kernel":
        return COLORS["kernel"]
    if op.kind == "memset":
        return COLORS["memset"]
    return COLORS.get(op.direction, COLORS["copy"])


def _lanes(ev: Evidence, ops: Sequence[GpuOp]) -> list[tuple[str, list[GpuOp]]]:
    """(label, ops) per lane: the legacy default stream first, the busiest streams next,
    the rest folded into one lane."""
    infos = stream_map(ev.trace)
    by_stream: dict[int, list[GpuOp]] = {}
    for op in ops:
        by_stream.setdefault(op.stream, []).append(op)
    ordered = lane_order(infos, set(by_stream))
    seen: dict[str, int] = {}
    for info in ordered:
        seen[info.label] = seen.get(info.label, 0) + 1
    names = {i.cupti_id: (f"{i.label} (id {i.cupti_id})" if seen[i.label] > 1 else i.label) for i in ordered}
    if len(ordered) > MAX_LANES:
        keep = sorted(ordered, key=lambda i: -sum(o.dur for o in by_stream[i.cupti_id]))[: MAX_LANES - 1]
        kept_ids = {i.cupti_id for i in keep}
        rest = [o for s, v in by_stream.items() if s not in kept_ids for o in v]
        ordered = [i for i in ordered if i.cupti_id in kept_ids]
        lanes = [(names[i.cupti_id], by_stream[i.cupti_id]) for i in ordered]
        lanes.append((f"{len(by_stream) - len(kept_ids)} other streams", rest))
        return lanes
    return [(names[i.cupti_id], by_stream[i.cupti_id]) for i in ordered]


def _window(ev: Evidence, rep: Range) -> tuple[float, float, list[GpuOp]]:
    """The part of a repetition worth drawing: from just before its first GPU op (host
    set-up before it, such as generating data, is left out) to its end."""
    ops = ev.rep_ops(rep)
    if not ops:
        return rep.start, rep.end, ops
    first, last = min(o.start for o in ops), max(o.end for o in ops)
    start = max(rep.start, first - 0.03 * (last - first))
    return start, max(last, min(rep.end, last + 0.03 * (last - first))), ops


def _clusters(ops: Sequence[GpuOp], gap: float) -> list[list[GpuOp]]:
    """Runs of ops, in time order, each starting less than `gap` after the last ended."""
    out: list[list[GpuOp]] = []
    for op in sorted(ops, key=lambda o: o.start):
        if out and op.start - max(o.end for o in out[-1]) < gap:
            out[-1].append(op)
        else:
            out.append([op])
    return out


def _fmt_dur(us: float) -> str:
    return f"{us:.1f} µs" if us < 1000 else f"{us / 1000:.2f} ms"


def _draw_lane_ops(ax, lane: int, lane_ops: Sequence[GpuOp], start: float, span_us: float, height: float,
                   spins: set[int]) -> None:  # fmt: skip
    min_w = MIN_WIDTH * span_us
    bands: dict[str, tuple[float, float]] = {}
    if len(lane_ops) > AGGREGATE_OVER:
        # one run-merged bar per kind of op, each kind in a band of its own
        by_class: dict[str, list[GpuOp]] = {}
        for o in lane_ops:
            by_class.setdefault(o.kind if o.kind != "memcpy" else o.direction or "copy", []).append(o)
        groups = []
        for i, (_kind, members) in enumerate(sorted(by_class.items())):
            sub = height / len(by_class)
            for g in _clusters(members, AGGREGATE_GAP * span_us):
                groups.append(g)
                bands[id(g)] = (lane - height / 2 + i * sub, sub)
    else:
        groups = [[op] for op in lane_ops]
    labelled = 0
    last_label = -float("inf")
    widest: dict = {}  # per band: the widest merged bar, the one that gets a label
    for group in groups:
        op = group[0]
        y0, h = bands.get(id(group), (lane - height / 2, height))
        lo, hi = min(o.start for o in group), max(o.end for o in group)
        width = max(hi - lo, min_w)
        is_spin = op.correlation in spins
        pageable = any(o.host_memory == "Pageable" for o in group)
        hatch = "xx" if is_spin else ("////" if pageable else None)
        color = COLORS["spin"] if is_spin else _color(op)
        ax.broken_barh([((lo - start) * MS, width * MS)], (y0, h),
                       facecolors=color, edgecolor="black" if hatch else None,
                       linewidth=0.3 if hatch else 0, hatch=hatch, alpha=0.85 if len(group) > 1 else 1.0)  # fmt: skip
        if len(group) > 1:
            band = bands.get(id(group))
            if hi - lo > widest.get(band, (0.0,))[0]:
                widest[band] = (hi - lo, group, lo, hi, y0, h)
        elif is_spin:
            ax.text((max(lo, start) - start) * MS, lane - height / 2, " provoking delay", ha="left", va="bottom",
                    fontsize=6, color=COLORS["spin"], clip_on=True)  # fmt: skip
        elif not bands and hi - lo < min_w and labelled < MAX_DURATION_LABELS and lo - last_label > 0.08 * span_us:
            labelled += 1
            last_label = lo
            ax.text((lo - start + width) * MS, lane + height / 2, f" {_fmt_dur(hi - lo)}", ha="left", va="bottom",
                    fontsize=6, color="#333333", clip_on=True)  # fmt: skip
    _label_merged(ax, widest, start, min_w)


def _label_merged(ax, widest: dict, start: float, min_w: float) -> None:
    for _, group, lo, hi, y0, h in widest.values():
        if hi - lo < 8 * min_w:
            continue
        op = group[0]
        noun = f"copies {op.direction}".strip() if op.kind == "memcpy" else f"{op.kind}s"
        ax.text(((lo + hi) / 2 - start) * MS, y0 + h / 2, f"{len(group)} {noun}, {_fmt_dur(sum(o.dur for o in group))} busy",
                ha="center", va="center", fontsize=6, color="black", clip_on=True,
                bbox={"fc": "white", "ec": "none", "alpha": 0.7, "pad": 0.3})  # fmt: skip


def _mark_race(ax, race: dict, lanes: dict[int, int], start: float, height: float, note: str | None = None) -> None:
    """Outline the two racing accesses and say by how much they overlap."""
    first, second = race["first"], race["second"]
    for acc in (first, second):
        lane = lanes.get(acc["stream"], 0) if acc.get("stream") is not None else 0
        ax.add_patch(__import__("matplotlib.patches", fromlist=["Rectangle"]).Rectangle(
            ((acc["start"] - start) * MS, lane - height / 2 - 0.08), max(acc["end"] - acc["start"], 0) * MS,
            height + 0.16, fill=False, edgecolor=COLORS["race"], linewidth=1.6, zorder=5))  # fmt: skip
    lead = first["end"] - second["start"]
    y = lanes.get(second["stream"], 0) if second.get("stream") is not None else 0
    ax.annotate(note or f"unordered: starts {_fmt_dur(lead)} before the other access ends",
                xy=((second["start"] - start) * MS, y - height / 2), xytext=(4, -14), textcoords="offset points",
                fontsize=7, color=COLORS["race"], fontweight="bold", zorder=6,
                bbox={"fc": "white", "ec": "none", "alpha": 0.85, "pad": 0.5},
                arrowprops={"arrowstyle": "->", "color": COLORS["race"], "linewidth": 0.8})  # fmt: skip


def draw_variant(ax, ev: Evidence, rep: Range, title: str, highlight: Sequence[str], t_max: float | None = None,
                 window: tuple[float, float] | None = None, race: dict | None = None,
                 race_note: str | None = None) -> None:  # fmt: skip
    start, end, ops = _window(ev, rep)
    if window is not None:
        start, end = window
        ops = [o for o in ev.trace.gpu if o.end >= start and o.start <= end and
               (o.correlation not in ev.markers or o.correlation in ev.spins)]  # fmt: skip
    span_us = max(end - start, 1e-3)
    lanes = _lanes(ev, ops)
    names = ["host"] + [name for name, _ in lanes]
    height = 0.8
    # host lane: CUDA calls made inside this repetition, blocking ones in red
    calls = [c for c in ev.trace.calls_in(rep) if c.end >= start and c.start <= end]

    def blocking(c) -> bool:
        return c.kind == "sync" or (c.kind in BLOCKING_KINDS and c.dur >= BLOCKING_DRAW_US)

    min_w = MIN_WIDTH * span_us
    for kind_blocking in (False, True):
        chosen = [c for c in calls if blocking(c) == kind_blocking]
        if len(chosen) > AGGREGATE_OVER:  # many tiny calls: one bar per run of them
            merged = iv.merge((c.start, c.end + AGGREGATE_GAP * span_us) for c in chosen)
            bars = [((a - start) * MS, max(b - a - AGGREGATE_GAP * span_us, min_w) * MS) for a, b in merged]
        else:
            bars = [((c.start - start) * MS, max(c.dur, min_w if kind_blocking else 0.0, 1e-1) * MS) for c in chosen]
        if bars:
            color = COLORS["blocking"] if kind_blocking else COLORS["call"]
            ax.broken_barh(bars, (-height / 2, height), facecolors=color, linewidth=0)
    allocs = [c for c in calls if c.kind == "alloc" and "Host" in c.name]
    if len(allocs) >= 20:  # pinning on the fly: say how much of the host lane it is
        ax.text(0.5, 0.0, f"{len(allocs)} host allocations (pinning), {_fmt_dur(sum(c.dur for c in allocs))} "
                "of host time", transform=ax.get_xaxis_transform(), ha="center", va="center", fontsize=7,
                bbox={"fc": "white", "ec": COLORS["blocking"], "alpha": 0.9, "pad": 1.5})  # fmt: skip
    lane_of: dict[int, int] = {}
    for lane, (_, lane_ops) in enumerate(lanes, start=1):
        for op in lane_ops:
            lane_of.setdefault(op.stream, lane)
        _draw_lane_ops(ax, lane, lane_ops, start, span_us, height, ev.spins)
    wanted = set(highlight)
    labelled = set()
    for r in ev.trace.ranges:
        if r.name not in wanted or r.end < start or r.start > end:
            continue
        parsed = parse_label(r.name)
        ref = parsed is not None and parsed.ref is not None
        color = COLORS["ref"] if ref else COLORS["flagged"]
        if (min(r.end, end) - max(r.start, start)) > ENCLOSING_SHARE * span_us:
            # a call site wrapping the program: a bracket over the host lane, not a shade over everything
            ax.plot([(max(r.start, start) - start) * MS, (min(r.end, end) - start) * MS], [-0.55, -0.55],
                    color="#7a5c00", linewidth=1.2)  # fmt: skip
        else:
            ax.axvspan((r.start - start) * MS, max(r.end - r.start, min_w / 2) * MS + (r.start - start) * MS,
                       color=color, alpha=0.45, zorder=0, linewidth=0)  # fmt: skip
        if r.name not in labelled:
            labelled.add(r.name)
            text = f"{r.name.split(':ref:')[0]} refers to line {parsed.ref}" if ref and parsed is not None else r.name
            # stacked above the axes, at the first execution, on a white box
            ax.annotate(text, xy=((max(r.start, start) - start) * MS, 1.0), xycoords=("data", "axes fraction"),
                        xytext=(0, 2 + 10 * (len(labelled) - 1)), textcoords="offset points", fontsize=7,
                        color="#7a5c00" if not ref else "#1f4e79", annotation_clip=False,
                        bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 0.5},
                        arrowprops={"arrowstyle": "-", "color": "#999999", "linewidth": 0.5})  # fmt: skip
    if race:
        _mark_race(ax, race, lane_of, start, height, race_note)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=8)
    ax.set_ylim(len(names) - 0.4, -0.6)
    ax.set_xlim(0, t_max if t_max is not None else (end - start) * MS)
    ax.set_title(title, fontsize=9, loc="left", pad=6 + 10 * len(labelled))
    ax.grid(axis="x", color="#e0e0e0", linewidth=0.5)


def _legend(fig) -> None:
    from matplotlib.patches import Patch

    handles = [
        Patch(color=COLORS["kernel"], label="kernel"),
        Patch(color=COLORS["HtoD"], label="copy host→device"),
        Patch(color=COLORS["DtoH"], label="copy device→host"),
        Patch(facecolor="white", edgecolor="black", hatch="////", label="pageable host memory"),
        Patch(color=COLORS["memset"], label="memset"),
        Patch(color=COLORS["blocking"], label="host blocked in CUDA call"),
        Patch(color=COLORS["flagged"], alpha=0.45, label="flagged statement"),
        Patch(color=COLORS["ref"], alpha=0.45, label="statement it refers to"),
        Patch(facecolor="white", edgecolor=COLORS["race"], linewidth=1.5, label="racing accesses"),
        Patch(facecolor=COLORS["spin"], hatch="xx", label="provoking delay (spin kernel)"),
    ]
    fig.legend(handles=handles, loc="lower center", ncol=5, fontsize=7, frameon=False)


def _pick_rep(trace: Trace, index: int) -> Range | None:
    found = reps(trace)
    if not found:
        return None
    return found[min(index, len(found) - 1)]


def draw_pair(path: Path, entry: dict, traces: dict[str, Trace], highlight: Sequence[str]) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = []
    for variant in ("bad", "good"):
        trace = traces.get(variant)
        rep = _pick_rep(trace, entry.get(variant, {}).get("median_rep", 0)) if trace else None
        if trace is None or rep is None:
            return None
        ev = Evidence(trace)
        start, end, ops = _window(ev, rep)
        panels.append((variant, ev, rep, (end - start) * MS, 1 + len(_lanes(ev, ops))))
    t_max = max(p[3] for p in panels) * 1.02
    fig, axes = plt.subplots(2, 1, figsize=(12, 1.6 + 0.42 * sum(p[4] for p in panels)), sharex=True,
                             gridspec_kw={"height_ratios": [p[4] for p in panels]})  # fmt: skip
    for ax, (variant, ev, rep, span, _) in zip(axes, panels):
        med = entry.get(variant, {}).get("median", {})
        title = f"{entry['code']} {variant}.py: GPU span {med.get('span_ms', span):.2f} ms (median repetition)"
        race = None
        if variant == "bad" and entry.get("family") == "hazard":
            from streamlint.runtime.hazards import check

            # the first unordered pair of the repetition drawn
            race = (check(ev, entry["code"], window=(rep.start, rep.end)) or {}).get("worst")
        draw_variant(ax, ev, rep, title, highlight if variant == "bad" else (), t_max, race=race)
        if variant == "bad" and entry.get("family") == "hazard" and race is None:
            cmp = entry.get("comparison") or {}
            ax.text(0.99, 0.04, f"no unordered access in this traced call; the result differed in "
                    f"{cmp.get('differing_trials', 0)} of {cmp.get('trials', 0)} untraced trials",
                    transform=ax.transAxes, ha="right", va="bottom", fontsize=7, color=COLORS["race"],
                    bbox={"fc": "white", "ec": COLORS["race"], "alpha": 0.9, "pad": 2})  # fmt: skip
    axes[-1].set_xlabel("ms (from just before each variant's first GPU operation)")
    fig.suptitle(f"{entry['code']} {entry.get('name', '')}: {entry.get('verdict', '')}", fontsize=10, x=0.01,
                 ha="left")  # fmt: skip
    _legend(fig)
    fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def draw_script(path: Path, entry: dict, trace: Trace, steady: bool = True) -> Path | None:
    """The script's run: zoomed to the steady state (from each flagged statement's first
    kept execution), or the whole run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rep = _pick_rep(trace, 0)
    if rep is None:
        return None
    ev = Evidence(trace)
    start, end, ops = _window(ev, rep)
    window = None
    what = "the whole run"
    if steady and entry.get("steady_start_ms") is not None and ops:
        first = min(o.start for o in ops)
        lo = first + entry["steady_start_ms"] * 1e3
        lo = max(start, lo - 0.02 * (end - lo))
        window = (lo, end)
        what = (f"steady state (the {entry['steady_start_ms']:.0f} ms of set-up and warm-up before it are in "
                f"{entry.get('timeline_full') or 'the whole-run picture'})")  # fmt: skip
        ops = [o for o in ops if o.end >= lo]
    lanes = 1 + len(_lanes(ev, ops))
    highlight = [f["label"] for f in entry.get("findings", [])]
    highlight += [label for label in entry.get("instrumented", {}).get("wrapped", {}) if ":ref:" in label]
    fig, ax = plt.subplots(1, 1, figsize=(12, 1.9 + 0.45 * lanes))
    draw_variant(ax, ev, rep, f"{entry['script']}: {what}", highlight, window=window)
    ax.set_xlabel("ms (from the start of the part shown)")
    _legend(fig)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return _save(fig, path)


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) or text


def draw_race(path: Path, entry: dict, finding: dict, trace: Trace) -> Path | None:
    """A provoked run of one hazard finding, around its clearest racing pair."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from streamlint.runtime.hazards import check_finding

    rep = _pick_rep(trace, 0)
    if rep is None:
        return None
    ev = Evidence(trace)
    found = check_finding(ev, finding["label"]) or {}
    race = found.get("worst")
    flagged = ev.occurrences(finding["label"])
    if race:
        lo = min(race["first"]["issued"], race["second"]["issued"], race["first"]["start"], race["second"]["start"])
        hi = max(race["first"]["end"], race["second"]["end"])
    elif flagged:  # no race to show: the last executions, where the order held
        lo, hi = flagged[max(0, len(flagged) - 2)].start, flagged[-1].end
        nxt = [o.end for o in ev.ops if o.start >= lo]
        hi = max([hi] + nxt[:50])
    else:
        return None
    pad = 0.08 * (hi - lo)
    window = (lo - pad, hi + pad)
    ops = [o for o in trace.gpu if o.end >= window[0] and o.start <= window[1]]
    lanes = 1 + len(_lanes(ev, ops))
    prov = finding.get("provoked") or {}
    delay = prov.get("delay") or {}
    sized = prov.get("sized_ms") or [prov.get("spin_ms") or 0]
    title = (f"{finding['code']} at line {finding['row']}: {finding['verdict']} (provoked run: "
             f"{max(sized):.0f} ms spin before line "
             f"{str(delay.get('at', '')).split(':')[-1]})")  # fmt: skip
    highlight = [finding["label"]] + [lab for lab in entry.get("instrumented", {}).get("wrapped", {})
                                      if lab.startswith(finding["label"] + ":ref:")]  # fmt: skip
    fig, ax = plt.subplots(1, 1, figsize=(12, 1.9 + 0.45 * lanes))
    # the caption is the verdict's own reason, so picture and report never disagree
    verdict_text = _wrap(f"{finding['verdict']}: {finding.get('why', '')}", 150)
    note = verdict_text if race and finding["code"] == "SL404" and finding["verdict"] != "confirmed" else None
    draw_variant(ax, ev, rep, title, highlight, window=window, race=race, race_note=note)
    why = verdict_text if not race else None
    if why:
        ax.text(0.5, 0.02, why, transform=ax.transAxes, ha="center", va="bottom", fontsize=8,
                color="#1f4e79", bbox={"fc": "white", "ec": "#1f4e79", "alpha": 0.9, "pad": 2})  # fmt: skip
    ax.set_xlabel("ms (from the start of the part shown)")
    _legend(fig)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return _save(fig, path)
