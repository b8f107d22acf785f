"""`python -m streamlint`.

For `-m`, Python puts the working directory first on sys.path, so a checked project's own
`libcst.py`, `pathspec.py` or `tomllib.py` would be imported (run) instead of the real
module. As pip does, drop that entry before importing anything else.
"""

import os
import sys

if sys.path and sys.path[0] in ("", os.getcwd()):
    sys.path.pop(0)

from streamlint.cli import main  # noqa: E402

raise SystemExit(main())
