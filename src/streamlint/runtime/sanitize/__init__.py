"""`streamlint verify --sanitize PROGRAM`: a stream sanitizer for PyTorch, CuPy, Numba-CUDA
and cuda-python.

The executed program's kernel launches, copies, memsets, allocations and frees are
recorded with their stream and the byte ranges they read and write (`record/`), written
as an event log (`log.py`, one JSON line per event), and checked with the happens-before
model of the static analysis (`clocks.py`, CSAN's vector clocks, plus the host and the
legacy default stream) over per-byte-range access histories (`memory.py`). `checker.py`
turns unordered conflicting pairs into findings with the static codes SL401-SL404.
"""
