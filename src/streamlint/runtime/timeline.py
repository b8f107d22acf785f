"""Timeline pictures (matplotlib, PNG): one lane for the host and one per stream; for a
pair the bad variant above the good one on the same time scale; kernels, host-to-device
and device-to-host copies, memsets in distinct colours (pageable copies hatched); host
calls that block in red; the flagged statement's executions shaded in yellow (the
statements its message refers to in light blue).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

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
}
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


def draw_variant(
    ax, ev: Evidence, rep: Range, title: str, highlight: Sequence[str], t_max: float | None = None
) -> None:
    start, end, ops = _window(ev, rep)
    lanes = _lanes(ev, ops)
    names = ["host"] + [name for name, _ in lanes]
    height = 0.8
    # host lane: CUDA calls made inside this repetition, blocking ones in red
    calls = [c for c in ev.trace.calls_in(rep) if c.end >= start]
    def blocking(c) -> bool:
        return c.kind == "sync" or (c.kind in BLOCKING_KINDS and c.dur >= BLOCKING_DRAW_US)

    for kind_blocking in (False, True):
        bars = [((c.start - start) * MS, max(c.dur * MS, 1e-4)) for c in calls if blocking(c) == kind_blocking]
        if bars:
            color = COLORS["blocking"] if kind_blocking else COLORS["call"]
            ax.broken_barh(bars, (-height / 2, height), facecolors=color, linewidth=0)
    for lane, (_, lane_ops) in enumerate(lanes, start=1):
        for op in lane_ops:
            hatch = "////" if op.host_memory == "Pageable" else None
            ax.broken_barh([((op.start - start) * MS, max(op.dur * MS, 1e-4))], (lane - height / 2, height),
                           facecolors=_color(op), edgecolor="black" if hatch else None,
                           linewidth=0.3 if hatch else 0, hatch=hatch)  # fmt: skip
    wanted = set(highlight)
    labelled = set()
    for r in ev.trace.ranges:
        if r.name not in wanted or r.end < start or r.start > end:
            continue
        parsed = parse_label(r.name)
        ref = parsed is not None and parsed.ref is not None
        color = COLORS["ref"] if ref else COLORS["flagged"]
        ax.axvspan((r.start - start) * MS, (r.end - start) * MS, color=color, alpha=0.45, zorder=0, linewidth=0)
        if r.name not in labelled:
            labelled.add(r.name)
            text = f"{r.name.split(':ref:')[0]} refers to line {parsed.ref}" if ref and parsed is not None else r.name
            # stacked above the axes, at the first execution, on a white box
            ax.annotate(text, xy=((r.start - start) * MS, 1.0), xycoords=("data", "axes fraction"),
                        xytext=(0, 2 + 10 * (len(labelled) - 1)), textcoords="offset points", fontsize=7,
                        color="#7a5c00" if not ref else "#1f4e79", annotation_clip=False,
                        bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 0.5},
                        arrowprops={"arrowstyle": "-", "color": "#999999", "linewidth": 0.5})  # fmt: skip
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
    ]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=7, frameon=False)


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
        draw_variant(ax, ev, rep, title, highlight if variant == "bad" else (), t_max)
    axes[-1].set_xlabel("ms (from just before each variant's first GPU operation)")
    fig.suptitle(f"{entry['code']} {entry.get('name', '')}: {entry.get('verdict', '')}", fontsize=10, x=0.01,
                 ha="left")  # fmt: skip
    _legend(fig)
    fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def draw_script(path: Path, entry: dict, trace: Trace) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rep = _pick_rep(trace, 0)
    if rep is None:
        return None
    ev = Evidence(trace)
    _, _, ops = _window(ev, rep)
    lanes = 1 + len(_lanes(ev, ops))
    highlight = [f["label"] for f in entry.get("findings", [])]
    fig, ax = plt.subplots(1, 1, figsize=(12, 1.6 + 0.45 * lanes))
    draw_variant(ax, ev, rep, f"{entry['script']}: the whole run", highlight)
    ax.set_xlabel("ms (from just before the first GPU operation)")
    _legend(fig)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
