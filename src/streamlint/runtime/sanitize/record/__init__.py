"""Recorders: what the executed program does, as sanitizer events (`..log`).

`log_writer.Recorder` holds the log and the program's stack; one module per framework
installs its hooks on it (`torch_recorder`, `cupy_recorder`, `numba_recorder`,
`driver_recorder` for cuda-python) and reports which hooks it could install.
"""
