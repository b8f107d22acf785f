"""The GitHub Action (action.yml): its shape, and its shell steps run as a runner
would run them (bash, inputs passed as environment variables)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import SL501_SNIPPET, write

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS = {step["name"]: step for step in ACTION["runs"]["steps"]}
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def test_a_composite_action_with_documented_inputs():
    assert ACTION["runs"]["using"] == "composite"
    assert all(spec.get("description") for spec in ACTION["inputs"].values())
    used = {m.group(1) for m in EXPRESSION.finditer((ROOT / "action.yml").read_text(encoding="utf-8"))}
    inputs = {u.split(".", 1)[1] for u in used if u.startswith("inputs.")}
    assert inputs <= set(ACTION["inputs"]), f"undeclared inputs: {inputs - set(ACTION['inputs'])}"
    # Inputs reach scripts through `env:`, never pasted into them (script injection).
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step["name"]
        assert step.get("shell", "bash") == "bash"


def test_annotations_and_the_optional_sarif_upload():
    assert "--format github" in STEPS["Check"]["run"]
    upload = STEPS["Upload SARIF"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["if"] == STEPS["Write SARIF"]["if"] == "inputs.sarif == 'true'"
    assert ACTION["inputs"]["sarif"]["default"] == "false"
    order = list(STEPS)
    assert order.index("Write SARIF") < order.index("Upload SARIF") < order.index("Check")
    # With no version asked for, the action installs its own copy.
    assert '"${SPEC:-$ACTION_PATH}"' in STEPS["Install streamlint"]["run"]


def run_step(name: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """A step's script as the runner runs it: `bash -e {0}` with the step's env."""
    # The streamlint of this environment stands in for the one the action installs.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", STEPS[name]["run"]],
        cwd=cwd, env=dict(os.environ, PATH=path, **env), capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.mark.slow  # four streamlint processes
@pytest.mark.skipif(shutil.which("bash") is None or not shutil.which("streamlint", path=str(Path(sys.executable).parent)),
                    reason="needs bash and the streamlint script of this environment")  # fmt: skip
def test_the_steps_run(tmp_path):
    write(tmp_path / "src" / "loop.py", SL501_SNIPPET)
    write(tmp_path / "src" / "clean.py", "import torch\nx = torch.ones(3)\n")
    args = "src --no-cache --select SL5"

    failed = run_step("Check", tmp_path, ARGS=args, FAIL="true")
    assert failed.returncode == 1, failed.stderr
    assert failed.stdout.startswith("::error title=streamlint (SL501),file=src/loop.py,line=3,col=9")
    passed = run_step("Check", tmp_path, ARGS=args, FAIL="false")
    assert passed.returncode == 0 and "::error " in passed.stdout
    clean = run_step("Check", tmp_path, ARGS="src/clean.py --no-cache", FAIL="true")
    assert clean.returncode == 0 and clean.stdout == ""

    sarif = run_step("Write SARIF", tmp_path, ARGS=args, SARIF_FILE="out.sarif")
    assert sarif.returncode == 0, sarif.stderr
    [run] = json.loads((tmp_path / "out.sarif").read_text())["runs"]
    assert [r["ruleId"] for r in run["results"]] == ["SL501"]
