"""The engine: lint (and fix) files. `lint` does one text, `run` many files (through
the cache and, when it pays, `pool`). This package file imports nothing, so that
importing one of its modules never drags in the others."""
