"""Session 18 measurement: where one checked file's time goes. Runs `streamlint check --no-cache
<file>` in this process and splits the checking thread's CPU time (time.thread_time) by phase,
with wrappers around the solver (no product change):

- parse: every module parsed (modules._parse: libcst), inside whatever phase asked;
- package: Program.package_units (the package's modules read, filtered by spelling, parsed);
- roots: the checked module's own functions at the root context (solve_module's first loop);
- callers: the callers search's walks (each caller at the root context and every callee it reaches);
- joined: the checked functions walked again in what their callers pass, joined;
- class state: _class_state_of + _class_pending, outermost calls (overlaps the phases above).

    cd <project> && PYTHONPATH=<src> python <this> <file> [--cprofile out.prof]
"""
from __future__ import annotations

import cProfile, collections, sys, time

from streamlint.model.interproc import solver as S, modules as M, program as P
from streamlint import isolation

T = collections.Counter()
N = collections.Counter()
state = {"phase": "other", "class": 0, "parse": 0}
walks = {"caller_roots": 0, "callers_walks": 0, "caller_funcs": set(), "root_walks": 0}
prof = None


def timed(bucket, fn, nest_key=None):
    def inner(*a, **k):
        if nest_key and state[nest_key]:
            return fn(*a, **k)
        if nest_key:
            state[nest_key] += 1
        t = time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            T[bucket] += time.thread_time() - t
            N[bucket] += 1
            if nest_key:
                state[nest_key] -= 1
    return inner


M._parse = timed("parse (libcst, any phase)", M._parse, "parse")
S.Solver._class_state_of = timed("class state (_class_state_of, any phase)", S.Solver._class_state_of, "class")
S.Solver._class_pending = timed("class state (_class_pending, any phase)", S.Solver._class_pending, "class")
P.Program.package_units = timed("package (package_units: read, spelled, parsed)", P.Program.package_units)

_orig_solve = S.Solver._solve
def _solve(self, q, ctx):
    if getattr(self, "_probe_depth", 0) == 0:
        phase = "joined" if self._joining is not None else "callers" if self._from_callers else state["phase"]
        self._probe_depth = 1
        before = len(self.solved.walks)
        t = time.thread_time()
        try:
            return _orig_solve(self, q, ctx)
        finally:
            T["walk: " + phase] += time.thread_time() - t
            N["walk: " + phase] += 1
            self._probe_depth = 0
            if phase == "callers":
                walks["caller_roots"] += 1
                walks["callers_walks"] += len(self.solved.walks) - before
    return _orig_solve(self, q, ctx)
S.Solver._solve = _solve

_orig_sm = S.Solver.solve_module
def solve_module(self, *a, **k):
    state["phase"] = "roots (solve_module)"
    t = time.thread_time()
    try:
        return _orig_sm(self, *a, **k)
    finally:
        T["solve_module (all)"] += time.thread_time() - t
        state["phase"] = "after solve_module (rules' asks)"
        walks["funcs_total"] = len({q for q, _ in self.solved.walks})
        walks["walks_total"] = len(self.solved.walks)
        walks["main_funcs"] = len(self.program.main.functions)
        walks["package_units"] = len(getattr(self.program, "_package_read", ()) or ())
S.Solver.solve_module = solve_module

_orig_suc = S.Solver._solve_under_callers
S.Solver._solve_under_callers = timed("_solve_under_callers (all)", _orig_suc)

_orig = isolation.call_with_large_stack
def _check(fn, *args, timeout=None):
    def wrapped(*a):
        t = time.thread_time()
        if prof:
            prof.enable()
        try:
            return fn(*a)
        finally:
            if prof:
                prof.disable()
            T["checking thread (all)"] += time.thread_time() - t
    return _orig(wrapped, *args, timeout=timeout)
isolation.call_with_large_stack = _check


def main() -> int:
    global prof
    argv = sys.argv[1:]
    dump = None
    if "--cprofile" in argv:
        i = argv.index("--cprofile"); dump = argv[i + 1]; del argv[i:i + 2]
        prof = cProfile.Profile(time.thread_time)
    from streamlint.cli import main as cli
    t0 = time.process_time()
    cli(["check", "--no-cache", "--exit-zero", "--timeout", "900", *argv])
    total = time.process_time() - t0
    if prof and dump:
        prof.dump_stats(dump)
    print(f"\nprocess CPU {total:.2f}s")
    for k in sorted(T, key=lambda k: -T[k]):
        print(f"  {k:60s} {T[k]:8.2f}s  ({N[k]} calls)")
    print("  " + ", ".join(f"{k}={len(v) if isinstance(v, set) else v}" for k, v in walks.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
