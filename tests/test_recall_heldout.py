"""The held-out recall set (benchmarks/recall/heldout/, issue 27) is well formed and really
held out: its manifest parses, it is large enough, it is not all PyTorch, every bug carries
the fields the scorer reads, and no repository of the development set appears in it.

CPU only and without mirrors: it reads the committed manifest and labels, not the code.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import tomllib

RECALL = Path(__file__).resolve().parent.parent / "benchmarks" / "recall"
HELDOUT = RECALL / "heldout"

# What score.py reads of each bug, and what build_manifest.py writes for every one.
REQUIRED = ("id", "repo", "fix", "parent", "path", "framework", "rule", "scope", "description",
            "parent_lines", "fixed_lines")
FRAMEWORKS = {"pytorch", "cupy", "numba", "cuda-python"}
FAMILIES = ("SL1", "SL2", "SL3", "SL4", "SL5")

# Histories the development set searched (benchmarks/recall/README.md, "How the bugs were
# found", and mining-session5.md), by repository name: none of them may supply a held-out bug,
# even one the development set did not keep.
DEV_MINED_NAMES = {
    "megatron-lm", "deepspeed", "apex", "torchrec", "transformerengine", "fairscale", "colossalai",
    "accelerate", "cupy", "numba", "numba-cuda", "nvmath-python", "rmm", "tike", "tomopy", "fbgemm",
    "torchtune", "torchtitan", "timm", "pytorch-image-models", "composer", "openrlhf",
    "pytorch-lightning", "lightning", "unsloth", "deepspeedexamples", "examples", "tomocupy",
    "holotomocupy", "cusignal", "cucim", "cuml", "cudf", "kvikio", "dask-cuda", "ucx-py", "sigpy",
    "pylops", "chainer", "chainermn", "diffusers", "ptypy", "cuda-python",
}


def load(path: Path) -> list[dict]:
    with open(path, "rb") as f:
        return tomllib.load(f)["bug"]


def load_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_heldout_manifest_parses_and_has_enough_bugs():
    bugs = load(HELDOUT / "manifest.toml")
    assert len(bugs) >= 30
    assert len({b["id"] for b in bugs}) == len(bugs)


def test_heldout_is_not_only_pytorch():
    bugs = load(HELDOUT / "manifest.toml")
    assert sum(b["framework"] != "pytorch" for b in bugs) >= 8


def test_every_heldout_bug_has_the_fields_the_scorer_reads():
    for b in load(HELDOUT / "manifest.toml"):
        missing = [k for k in REQUIRED if k not in b]
        assert not missing, (b.get("id"), missing)
        assert b["framework"] in FRAMEWORKS, b["id"]
        assert b["rule"][:3] in FAMILIES and len(b["rule"]) == 5, b["id"]
        assert len(b["fix"]) == 40 and len(b["parent"]) == 40, b["id"]
        assert b["parent_lines"] and b["fixed_lines"], b["id"]
        for entry in b["parent_lines"] + b["fixed_lines"]:
            assert entry["line"] >= 1 and entry["text"], b["id"]


def test_no_heldout_repository_is_used_by_the_development_set():
    dev_repos = {b["repo"].lower() for b in load(RECALL / "manifest.toml")}
    for b in load(HELDOUT / "manifest.toml"):
        repo = b["repo"].lower()
        assert repo not in dev_repos, b["id"]
        assert repo.split("/")[1] not in DEV_MINED_NAMES, b["id"]


def test_heldout_manifest_is_generated_from_its_labels():
    # The manifest is build_manifest.py's output for heldout/bugs.py: same bugs, same order,
    # same labels (line numbers need the mirrors, the rest does not).
    build = load_module("build_manifest_under_test", RECALL / "build_manifest.py")
    labels = build.load_bugs(HELDOUT / "bugs.py")
    bugs = load(HELDOUT / "manifest.toml")
    assert [b["id"] for b in labels] == [b["id"] for b in bugs]
    for label, bug in zip(labels, bugs):
        assert bug["fix"].startswith(label["fix"]), bug["id"]
        assert (label["repo"], label["path"], label["rule"], label["framework"]) == (
            bug["repo"], bug["path"], bug["rule"], bug["framework"])
        assert len(label["p"]) == len(bug["parent_lines"]) and len(label["f"]) == len(bug["fixed_lines"])


def test_build_manifest_still_defaults_to_the_development_set():
    build = load_module("build_manifest_defaults", RECALL / "build_manifest.py")
    dev = build.load_bugs(RECALL / "bugs.py")
    assert [b["id"] for b in dev] == [b["id"] for b in load(RECALL / "manifest.toml")]


def test_score_reads_another_manifest():
    score = load_module("score_under_test", RECALL / "score.py")
    assert [b["id"] for b in score.load_manifest(HELDOUT / "manifest.toml")] == [
        b["id"] for b in load(HELDOUT / "manifest.toml")]
