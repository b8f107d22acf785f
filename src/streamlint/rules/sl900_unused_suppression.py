"""SL900 unused-suppression: a suppression comment that suppresses no finding."""

from __future__ import annotations

from streamlint.rules.base import Rule


class UnusedSuppression(Rule):
    """
    ## What it does
    Flags a suppression comment, or one code in it, that suppresses no finding:
    `# noqa: SL103`, `# streamlint: ignore[SL103]` and
    `# streamlint: ignore-file[SL4]` (like ruff's RUF100).

    Only streamlint's own codes are looked at, and only where the answer is known:
    - Codes of other tools (`# noqa: E501, F401`) are never reported, and the fix
      leaves them in place.
    - A code is reported only when its rule ran on the file: a suppression of a
      rule switched off by `select`, `ignore` or `per-file-ignores` is not
      reported, and a prefix (`SL4`) only when every rule it covers ran. Codes
      that name no streamlint rule are left alone too.
    - A bare `# noqa` is never reported: it also silences other tools, whose
      findings streamlint cannot see. A bare `# streamlint: ignore` is reported
      when it suppresses nothing on its line.
    - Nothing is reported in a file that could not be checked (SL000), nor in a
      file that mentions no GPU framework (such files are not analysed at all).
    - A `noqa` comment written wrong is reported as ruff reads it: `# noqa SL103`
      (no colon) is a bare `# noqa` that suppresses every code, and the unsafe fix
      adds the colon (ruff's PGH004); `# noqa:` with no code suppresses nothing
      (ruff warns it is invalid), and the fix removes it.

    A code counts as used when it suppresses a finding, even if another comment
    suppresses the same finding too.

    This rule is enabled by default, like every rule: it only ever reports
    streamlint codes, so comments shared with other linters are safe. To keep a
    suppression that is unused on purpose, add `SL900` to it
    (`# noqa: SL103, SL900`); a code that covers SL900 (`SL900`, `SL9`, `SL`,
    `ALL`) is never reported itself. `--select SL900` alone reports nothing,
    since no other rule runs: add it with `--extend-select`.

    ## Why is this bad?
    A suppression outlives the code it was written for: after a refactor the
    finding is gone but the comment stays, and it will silently hide the next,
    real finding of that rule on the line (or, for `ignore-file`, in the whole
    file). Stale suppressions also mislead readers into thinking the line is a
    known hazard.

    ## Example
    ```python
    import torch

    for batch in loader:
        out = model(batch)
    torch.cuda.synchronize()  # noqa: SL103
    ```
    The synchronization used to run inside the loop; after it moved out of the
    loop SL103 no longer flags it, and the `noqa` suppresses nothing.

    ## Use instead
    ```python
    import torch

    for batch in loader:
        out = model(batch)
    torch.cuda.synchronize()
    ```

    ## Fix safety
    The fix is safe: it removes the unused codes from the comment (`# noqa:
    SL101, SL103` becomes `# noqa: SL101`), or the whole directive when no code
    is left, keeping other tools' codes and the rest of the comment. A comment
    that suppresses nothing changes no finding and no behaviour.

    ## Known limits
    - A baseline (`--baseline`) is applied after this rule: a suppression whose
      finding is also recorded in the baseline still counts as used.
    - The written-wrong forms are reported whatever they name: a lower-case code
      (`# noqa: sl103` suppresses nothing, as in ruff; the unsafe fix writes it in
      upper case) and an `ignore-file` directive after code on its line (it
      suppresses nothing; put it on a line of its own, as ruff's `# ruff: noqa`).
    """

    code = "SL900"
    name = "unused-suppression"
    summary = "Suppression comment that suppresses no finding"
    meta = True
    fix_availability = "always"

    def check(self, analysis):
        # The work needs the other rules' findings and the comments, so it is done
        # by the engine after suppression (streamlint.suppression.unused).
        return ()
