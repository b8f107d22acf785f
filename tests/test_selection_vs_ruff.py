"""Rule selection side by side with ruff: for each combination of a config's and the
command line's select / ignore / extend-select and per-file-ignores, streamlint's
selection (settings.py, the one the engine and the cache key use) enables exactly
the rules ruff reports. Ruff's own codes are the universe: streamlint's selection
treats codes and prefixes alike whatever their letters, so ruff's `F4` plays our `SL4`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from streamlint.selection import RuleSelection
from streamlint.settings import Settings, enabled_codes_for_file

# A file on which ruff reports exactly these codes (of the ones we compare).
SOURCE = 'import os\nl = 1\nx = None\nif x == None:\n    pass\nif x == True:\n    pass\n\n\ndef f():\n    y = 1\n    return f"abc"\n\n\nz = 1 \n'
UNIVERSE = ("E711", "E712", "E741", "F401", "F541", "F841", "W291")


def _ruff() -> list[str] | None:
    exe = shutil.which("ruff", path=os.path.dirname(sys.executable)) or shutil.which("ruff")
    return [exe] if exe else None


RUFF = _ruff()
pytestmark = pytest.mark.skipif(RUFF is None, reason="ruff is not installed (the `test` extra has it)")

# (config: select, ignore, extend-select, per-file-ignores; command line: select, ignore, extend-select)
CASES = [
    (["F"], [], [], {}, None, [], []),
    (["F"], ["F4"], [], {}, None, [], []),
    (["F"], ["F4"], [], {}, ["F"], [], []),  # a CLI --select replaces the config's choice, ignore included
    (None, ["F401"], [], {}, None, [], ["E7"]),
    (["E", "F"], ["E7"], [], {}, ["E711"], [], []),
    (["ALL"], ["E"], ["E711"], {}, None, [], []),
    (["F4"], [], [], {}, None, ["F401"], ["W"]),
    (["E", "F"], ["E711"], [], {}, ["E71"], [], []),
    (None, [], [], {}, ["F"], ["F401"], ["F401"]),  # one layer: ignore wins a tie
    (["F"], [], ["E711"], {}, None, ["E"], []),
    (None, [], [], {}, None, ["E7", "W"], []),
    (["E7", "F"], ["E741"], [], {}, None, [], ["E74"]),  # more specific wins
    (None, [], [], {"a.py": ["F"]}, None, [], []),
    (None, [], [], {"./a.py": ["F4"]}, None, [], []),
    (None, [], [], {"*.py": ["E7"]}, ["E711", "F401"], [], []),
    (["F"], [], [], {"sub/*.py": ["F"]}, None, [], []),  # matches nothing here
]


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def _ruff_codes(tmp_path, cfg_select, cfg_ignore, cfg_extend, per_file, cli_select, cli_ignore, cli_extend) -> set[str]:
    # Ruff's default selection is a few families; streamlint's is every rule. ALL in
    # ruff's config stands for our default.
    lines = ["[lint]", f"select = {_toml_list(cfg_select or ['ALL'])}"]
    lines += [f"ignore = {_toml_list(cfg_ignore)}", f"extend-select = {_toml_list(cfg_extend)}"]
    if per_file:
        lines.append("[lint.per-file-ignores]")
        lines += [f"{json.dumps(k)} = {_toml_list(v)}" for k, v in per_file.items()]
    (tmp_path / "ruff.toml").write_text("\n".join(lines) + "\n")
    (tmp_path / "a.py").write_text(SOURCE)
    argv = [*RUFF, "check", "--no-cache", "--output-format", "json", "--exit-zero"]
    for flag, values in (("--select", cli_select), ("--ignore", cli_ignore), ("--extend-select", cli_extend)):
        if values is not None and (values or flag == "--select"):
            argv += [flag, ",".join(values)]
    done = subprocess.run(argv + ["a.py"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return {d["code"] for d in json.loads(done.stdout)} & set(UNIVERSE)


def _our_codes(tmp_path, cfg_select, cfg_ignore, cfg_extend, per_file, cli_select, cli_ignore, cli_extend) -> set[str]:
    settings = Settings(
        select=tuple(cfg_select) if cfg_select is not None else None,
        ignore=tuple(cfg_ignore), extend_select=tuple(cfg_extend),
        per_file_ignores=tuple((k, tuple(v)) for k, v in per_file.items()), root=tmp_path,
    ).with_overrides(RuleSelection(
        select=tuple(cli_select) if cli_select is not None else None,
        extend_select=tuple(cli_extend), ignore=tuple(cli_ignore),
    ))  # fmt: skip
    return set(enabled_codes_for_file(settings, str(tmp_path / "a.py"), UNIVERSE))


def test_the_file_triggers_every_code_of_the_universe(tmp_path):
    assert _ruff_codes(tmp_path, None, [], [], {}, None, [], []) == set(UNIVERSE)


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_selection_matches_ruff(tmp_path, case):
    assert _our_codes(tmp_path, *case) == _ruff_codes(tmp_path, *case)
