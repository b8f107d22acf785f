"""The runtime half of streamlint: run flagged code on a CUDA GPU under the PyTorch
profiler and measure what each finding claims (`streamlint verify`).

Only harness.py, hooks.py and capture.py need torch, and they run in the traced
subprocess; everything that reads traces, judges and reports runs without a GPU.

    instrument  wrap flagged statements in record_function ranges (libcst)
    harness     the traced subprocess: fixture runs or a script, under capture
    capture     the profiler configuration;   hooks   stream markers
    trace       Chrome trace -> typed events, and trimming for storage
    streams     CUPTI stream ids -> the program's streams
    intervals   merge / intersect / sweep;    evidence  metrics per run and per line
    hazards     race ordering in the trace;   pipeline  the ideal overlapped bound
    compare     trial results;                verdicts  per rule family
    provoke     where a race's delay goes, sized; preload  kernels loaded before it
    pairs       fixture discovery;            runner    subprocesses and records
    report      records -> report data;       render / timeline  Markdown, HTML, PNG
    verify      the `streamlint verify` command
"""
