"""The README as tested facts: it starts with the two set-up commands and CI runs the
second; the pre-commit and Action snippets pin the current release; every figure in
the README links to the committed file it comes from, and each figure checked here
equals its source."""

from __future__ import annotations

import json
import os
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]

SETUP = ["pip install . && streamlint fixtures/", "pip install '.[test]' && python -m pytest"]


def test_the_readme_starts_with_the_two_setup_commands():
    first_block = README.split("```", 2)[1]
    assert first_block.strip().splitlines() == SETUP
    assert README.index("```") < README.index("\n## ")  # before any section


def test_ci_runs_exactly_the_readmes_test_command():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line.strip() for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    runs = [line for line in commands if "pytest" in line and not line.startswith(("echo", "if"))]
    assert runs == [SETUP[1] + " || status=$?"]


# ---- the snippets pin the current release ----


def test_the_hook_and_the_action_are_at_the_repository_root():
    assert (ROOT / ".pre-commit-hooks.yaml").is_file() and (ROOT / "action.yml").is_file()


def test_the_pre_commit_snippet_pins_the_release_tag():
    revs = re.findall(r"^\s*rev:\s*(\S+)", README, re.MULTILINE)
    assert revs == [f"v{VERSION}"]


def test_the_action_snippet_pins_the_release_tag():
    uses = re.findall(r"uses:\s*streamlint/streamlint@(\S+)", README)
    assert uses == [f"v{VERSION}"]


# ---- figures ----

# A measured figure: a number with a unit of time, size, ratio or share, or a score n/m.
FIGURE = re.compile(
    r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:ms|s|GB|MB|MiB|GiB|x|%|min)(?!\w)|(?<![\w./-])\d+/\d+(?![\w/])"
)
LINK = re.compile(r"\]\(([^)#\s]+)")


def paragraphs(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each paragraph, list item run and table row; code blocks
    and headings left out."""
    out, current, fence = [], [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
        if fence or line.startswith("```") or not line.strip() or line.startswith(("#", "|")):
            if current:
                out.append((current[0][0], " ".join(t for _, t in current)))
                current = []
            if line.startswith("|") and not fence:
                out.append((number, line))
            continue
        current.append((number, line))
    if current:
        out.append((current[0][0], " ".join(t for _, t in current)))
    return out


def test_every_paragraph_with_a_figure_links_a_committed_file():
    missing = []
    for line, text in paragraphs(README):
        if FIGURE.search(text) and not any((ROOT / target).exists() for target in LINK.findall(text)):
            missing.append(f"README.md:{line}: {FIGURE.findall(text)[:4]}")
    assert not missing, "figures without a link to their source:\n" + "\n".join(missing)


def _json(path: str):
    return json.loads((ROOT / path).read_text(encoding="utf-8"))


RECALL = "benchmarks/recall/results-session40-v3-b96b3392.json"  # the last full run, on the product


def _recall_all() -> dict:
    return next(row for row in _json(RECALL)["summary"] if row["family"] == "all")


def _bench_row(tool: str) -> dict:
    return next(r for r in _json("benchmarks/results-session11-a.json")["rows"] if r["tree"] == "torch" and r["tool"] == tool)


def _report_key(code: str) -> str:
    pairs = _json("runtime_checks/reports/report.json")["pairs"]
    return next(p["key"] for p in (pairs.values() if isinstance(pairs, dict) else pairs) if p.get("code") == code)


def _report_pair(code: str) -> dict:
    pairs = _json("runtime_checks/reports/report.json")["pairs"]
    return next(p for p in (pairs.values() if isinstance(pairs, dict) else pairs) if p.get("code") == code)


def _number_after(text: str, before: str) -> float:
    return float(re.search(re.escape(before) + r"\s*([\d.]+)", text).group(1))


def _module_value(path: str, name: str) -> float:
    match = re.search(rf"^{name}\s*(?::[^=]*)?=\s*([\d.e+-]+)", (ROOT / path).read_text(encoding="utf-8"), re.MULTILINE)
    return float(match.group(1))


def _gpu(*keys: str) -> float:
    value = _json("benchmarks/gpu-effect-sizes.json")
    for key in keys:
        value = value[key]
    return value


# (the README's words, the file it links for them, the value that file holds, how the
# README writes it)
FIGURES = [
    ("took 23.1 ms sequentially", "benchmarks/gpu-effect-sizes.json",
     lambda: _gpu("torch_pipeline", "pinned_sequential_ms"), "took {:.1f} ms sequentially"),
    ("17.5 ms pipelined", "benchmarks/gpu-effect-sizes.json", lambda: _gpu("torch_pipeline", "pinned_pipelined_ms"), "{:.1f} ms pipelined"),
    ("took 56.1 ms against", "benchmarks/gpu-effect-sizes.json",
     lambda: _gpu("torch_pipeline", "pageable_pipelined_ms"), "took {:.1f} ms against"),
    ("53.3 ms sequential", "benchmarks/gpu-effect-sizes.json", lambda: _gpu("torch_pipeline", "pageable_sequential_ms"), "{:.1f} ms sequential"),
    ("spent 27.0 ms inside", "benchmarks/gpu-effect-sizes.json",
     lambda: _gpu("host_time_in_non_blocking_copy", "pageable_ms"), "spent {:.1f} ms inside"),
    ("instead of 0.009 ms", "benchmarks/gpu-effect-sizes.json",
     lambda: _gpu("host_time_in_non_blocking_copy", "pinned_ms"), "instead of {:.3f} ms"),
    ("took 20.8 ms per launch", "benchmarks/gpu-effect-sizes.json", lambda: _gpu("numba_launch", "numpy_arguments_ms"), "took {:.1f} ms per launch"),
    ("launch instead of 0.089 ms", "benchmarks/gpu-effect-sizes.json",
     lambda: _gpu("numba_launch", "device_arrays_ms"), "launch instead of {:.3f} ms"),
    ("(40/57", RECALL, lambda: (_recall_all()["found"], _recall_all()["bugs"]),
     "({}/{}"),
    ("39/40 silent", RECALL,
     lambda: (_recall_all()["silent_among_found"], _recall_all()["found"]), "{}/{} silent"),
    ("holds 57 stream", RECALL, lambda: len(_json(RECALL)["bugs"]),
     "holds {} stream"),
    ("2,328 files, in 0.37 s", "benchmarks/results-session11-a.json",
     lambda: (_json("benchmarks/results-session11-a.json")["trees"]["torch"]["files"], _bench_row("streamlint warm")["median_s"]),
     "{:,} files, in {:.2f} s"),
    ("the median of\n3 runs", "benchmarks/results-session11-a.json", lambda: len(_bench_row("streamlint warm")["runs"]),
     "the median of\n{} runs"),
    ("(default 30 s:", "src/streamlint/settings.py", lambda: _module_value("src/streamlint/settings.py", "DEFAULT_TIMEOUT"),
     "(default {:.0f} s:"),
    ("(at most 5 s more:", "src/streamlint/isolation.py", lambda: float(re.search(
        r"MIN_GRACE, MAX_GRACE = [\d.]+, ([\d.]+)", (ROOT / "src/streamlint/isolation.py").read_text()).group(1)),
     "(at most {:.0f} s more:"),
    ("up to 0.1 ms after it", "src/streamlint/runtime/evidence.py",
     lambda: _module_value("src/streamlint/runtime/evidence.py", "REFILL_US") / 1000, "up to {:.1f} ms after it"),
    ("narrower than\n0.4% of a picture", "src/streamlint/runtime/timeline.py",
     lambda: _module_value("src/streamlint/runtime/timeline.py", "MIN_WIDTH") * 100, "narrower than\n{:.1f}% of a picture"),
    ("(up to 256 files,", "src/streamlint/model/interproc/solver.py",
     lambda: _module_value("src/streamlint/model/interproc/solver.py", "MAX_PACKAGE_FILES"), "(up to {:.0f} files,"),
    ("11 SL000 for cells", "benchmarks/triage/main-session11.txt",
     lambda: int(re.search(r"SL000: (\d+)", (ROOT / "benchmarks/triage/main-session11.txt").read_text()).group(1)),
     "{} SL000 for cells"),
    ("18.9 ms inside 8", "runtime_checks/reports/report.md",
     lambda: (_number_after(_report_key("SL301"), "host blocked"), _number_after(_report_key("SL301"), "pageable in")),
     "{:.1f} ms inside {:.0f}"),
    ("copies of 17.6 ms", "runtime_checks/reports/report.md", lambda: _number_after(_report_key("SL301"), "GPU copy time"),
     "copies of {:.1f} ms"),
    ("pinned fix was 4.65x", "runtime_checks/reports/report.md", lambda: float(_report_key("SL301").rsplit("; ", 1)[1][:-1]),
     "pinned fix was {:.2f}x"),
    ("80.1% without it (1.79x)", "runtime_checks/reports/report.md",
     lambda: (_number_after(_report_key("SL101"), "0.0% ->"), float(re.search(r"\(([\d.]+)x\)", _report_key("SL101")).group(1))),
     "{:.1f}% without it ({:.2f}x)"),
    ("*slower* as a whole (0.89x)", "runtime_checks/reports/report.md",
     lambda: float(_report_key("SL302").rsplit("; ", 1)[1][:-1]), "*slower* as a whole ({:.2f}x)"),
    ("all 16 pairs confirmed", "runtime_checks/reports/report.md", lambda: _confirmed(), "all {} pairs confirmed"),
    ("3.7 extra copies per launch (7.0x)", "runtime_checks/reports/report.md",
     lambda: (_number_after(_report_key("SL102"), ""), _ratio(_report_key("SL102"))), "{:.1f} extra copies per launch ({:.1f}x)"),
    ("121.1 ms [115.5-152.7]\nper call against 62.8 ms [42.2-74.9] for the fix (1.93x",
     "runtime_checks/reports/report.md", lambda: (*_numbers(_report_key("SL303").split("wall clock ")[1])[:6],
                                                 _ratio(_report_key("SL303"))),
     "{:.1f} ms [{:.1f}-{:.1f}]\nper call against {:.1f} ms [{:.1f}-{:.1f}] for the fix ({:.2f}x"),
    ("result was wrong in 10 of 10 trials (77.0% of values wrong) and 30 of 35 traced", "runtime_checks/reports/report.md",
     lambda: (*_numbers(_report_key("SL402").split("trials differ")[0])[1:3], _number_after(_report_key("SL402"), ""),
              *_numbers(_report_key("SL402").split("trace: ")[1])[:2]),
     "result was wrong in {:.0f} of {:.0f} trials ({:.1f}% of values wrong) and {:.0f} of {:.0f} traced"),
    ("SL502, 1.53x:", "runtime_checks/reports/report.md", lambda: _ratio(_report_key("SL502")), "SL502, {:.2f}x:"),
    ("confirmed at the first attempt in 5 of 5 fresh runs", "runtime_checks/reports/report.md",
     lambda: ["first", "second", "third"][len(_report_pair("SL303").get("attempts") or [1]) - 1],
     "confirmed at the {} attempt in 5 of 5 fresh runs"),
    ("16.0 MB pageable per step with the host held 51.6 ms in 23 steady", "runtime_checks/reports/script/report.md",
     lambda: _script_sl301(), "{:.1f} MB pageable per step with the host held {:.1f} ms in {} steady"),
    ("SL401, SL403 and SL404, the bad result was wrong in 10 of 10 trials", "runtime_checks/reports/report.md",
     lambda: tuple({_report_key(c).split(", ")[1].split(" trials")[0] for c in ("SL401", "SL403", "SL404")}),
     "SL401, SL403 and SL404, the bad result was wrong in {} trials"),
]


def _script_sl301() -> tuple[float, float, int]:
    """(MB per step, host ms, steady steps) of train_loop.py's SL301 row."""
    row = next(line for line in (ROOT / "runtime_checks/reports/script/report.md").read_text().splitlines()
               if "| SL301 |" in line)  # fmt: skip
    steps, warm = re.search(r"\| (\d+) \((\d+) warm-up left out\) \|", row).groups()
    held = re.search(r"host held ([\d.]+) ms", row).group(1)  # 51.55: rounded half up, as written by hand
    held_shown = float(Decimal(held).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
    return _number_after(row, "memory ("), held_shown, int(steps) - int(warm)


def _numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"\d+(?:\.\d+)?", text)]


def _ratio(key: str) -> float:
    return float(re.findall(r"\(([\d.]+)x\)", key)[-1])


def _confirmed() -> int:
    pairs = _json("runtime_checks/reports/report.json")["pairs"]
    verdicts = [p.get("verdict") for p in (pairs.values() if isinstance(pairs, dict) else pairs)]
    assert len(verdicts) == len(pairs)
    return verdicts.count("confirmed") if verdicts.count("confirmed") == len(verdicts) else -1


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("words, source, value, form", FIGURES, ids=[f[0].replace("\n", " ") for f in FIGURES])
def test_each_figure_equals_its_source(words, source, value, form):
    assert _flat(words) in _flat(README), f"the README no longer says {words!r}"
    paragraph = next(text for _, text in paragraphs(README) if _flat(words) in _flat(text))
    assert any(os.path.normpath(target) == os.path.normpath(source) for target in LINK.findall(paragraph)), (
        f"the paragraph of {words!r} does not link {source}"
    )
    found = value()
    assert _flat(form.format(*found) if isinstance(found, tuple) else form.format(found)) == _flat(words)


def test_no_statement_contradicts_the_import_depth():
    # "one import deep" once stood beside "three imports away"; the depth is MAX_DEPTH.
    assert "import deep" not in README and "one import away" not in README


def test_the_pinned_tag_has_the_hook_and_the_action():
    # The tag is made on the commit that sets the version; before that (or in a copy
    # without git), the files at the root above are what the tag will hold.
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tag = f"v{VERSION}"
    revision = tag
    if subprocess.run(["git", "rev-parse", "-q", "--verify", f"refs/tags/{tag}"], cwd=ROOT,
                      capture_output=True).returncode != 0:  # fmt: skip
        # a clone without tags (CI's): the release is this commit, so it must hold both
        revision = "HEAD"
    for name in (".pre-commit-hooks.yaml", "action.yml"):
        shown = subprocess.run(["git", "cat-file", "-e", f"{revision}:{name}"], cwd=ROOT, capture_output=True)
        assert shown.returncode == 0, f"{tag} ({revision}) has no {name}"
