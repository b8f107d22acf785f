"""Runtime checks of `streamlint verify` (a package, so that its conftest does not clash
with tests/conftest.py: both would otherwise be imported as `conftest`)."""
