"""One module per command (ruff's `commands/`): `check` (with `fix`, `add_noqa` and
`baseline` for its options of those names), `rule`, `clean`, `server`, `verify`.
Each takes the parsed arguments and returns an exit code; `cli.py` only parses and
dispatches. This package file imports nothing."""
