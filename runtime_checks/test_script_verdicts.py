"""A verdict per finding of a script, from real recorded runs (data/scripts/) and from
small hand-made cases for the branches the recordings do not reach."""

from __future__ import annotations

from streamlint.runtime import script_verdicts as sv
from streamlint.runtime.evidence import Evidence
from streamlint.runtime.trace import ApiCall, GpuOp, Range, Trace

from .rc_data import finding, script_report


def test_a_real_missing_wait_is_confirmed_by_provoking_it():
    f = finding("race_missing_wait", "SL401:22")
    assert f["verdict"] == "confirmed"
    p = f["provoked"]
    # every provoked run printed another checksum than the control run, and the trace
    # of every provoked run shows the consumer starting before the producer ended
    assert p["runs"] == 3 and p["comparable"] and p["differing"] == 3
    assert all(c["misordered"] > 0 for c in p["checks"])
    assert all(c["misordered"] == 0 for c in p["control_checks"])
    assert "3 of 3" in f["why"]


def test_its_correction_is_not_observed_in_any_run():
    f = finding("race_fixed", "SL401:24")
    assert f["verdict"] == "not observed"
    assert f["provoked"]["differing"] == 0 and all(c["misordered"] == 0 for c in f["provoked"]["checks"])
    assert "ordered on the device" in f["why"] and "masked" not in f["why"]


def test_a_race_masked_by_a_host_read_is_reported_as_masked():
    f = finding("race_masked", "SL401:32")
    assert f["verdict"] == "not observed"
    assert f["why"].startswith("masked")
    assert f["figures"]["masked"] > 0


def test_an_unseeded_program_is_judged_without_its_output():
    # race_unseeded.py draws its inputs without a seed: the two control runs print
    # different checksums, so output comparison is dropped and the report says why; the
    # missing wait is still confirmed, from the traced accesses alone
    f = finding("race_unseeded", "SL401:22")
    p = f["provoked"]
    assert not p["comparable"] and p["deterministic"] is False
    assert "not deterministic" in p["why"]
    assert f["verdict"] == "confirmed" and "output" not in f["why"]
    assert all(c["misordered"] > 0 for c in p["checks"])
    # a rule whose only measure is the output is not judged from a changing one
    reuse = finding("race_unseeded", "SL404:20")
    assert reuse["verdict"] == "not measurable" and "not deterministic" in reuse["why"]


def test_race_counts_are_per_finding_not_pooled_per_rule():
    # two SL4 findings in one script: each counts its own access pairs
    a = finding("race_missing_wait", "SL401:22")["hazard_trace"]
    b = finding("race_missing_wait", "SL404:20")["hazard_trace"]
    assert a["pairs"] != b["pairs"]
    steps = 8
    assert a["pairs"] % steps == 0 and a["pairs"] <= 4 * steps


def test_warm_up_is_left_out_and_counted():
    for name in ("race_missing_wait", "numba_race", "cupy_pipeline"):
        for f in script_report(name)["script"]["findings"]:
            if f.get("occurrences", 0) > 1:
                assert f["warmup_excluded"] >= 1
                assert f["cost"]["occurrences"] == f["occurrences"] - f["warmup_excluded"]


def test_jit_compile_is_never_charged_as_lost_overlap():
    # numba_race.py: the first launch of each kernel compiles it (about 100 ms); the
    # synchronous to_device before it ran once, so nothing can be left out there
    f = finding("numba_race", "SL202:37")
    assert f["occurrences"] == 1
    assert f["cost"]["gpu_idle_ms"] < 5.0
    for f in script_report("numba_race")["script"]["findings"]:
        assert f["cost"]["gpu_idle_ms"] < 20.0, f["label"]


def test_overhead_findings_of_cupy_and_numba_programs_are_confirmed():
    assert finding("cupy_pipeline", "SL501:14")["verdict"] == "confirmed"
    assert finding("cupy_pipeline", "SL502:19")["verdict"] == "confirmed"
    numba = finding("numba_race", "SL102:47")
    assert numba["verdict"] == "confirmed" and numba["figures"]["per_execution"] >= 2


def _hazard(base=None, provoked=None, shared=()):
    return sv.judge_hazard("SL401:9", base, provoked, list(shared))


def test_hazard_branches():
    never = _hazard({"pairs": 0})
    assert never["verdict"] == "not observed" and "never ran" in never["why"]
    changed = {"runs": 3, "differing": 2, "comparable": True, "checks": [{"pairs": 4, "misordered": 0}] * 3}
    ordered = {"pairs": 4, "misordered": 0}
    assert _hazard(ordered, changed)["verdict"] == "confirmed"
    other = _hazard(ordered, changed, ["SL401 at line 22"])
    assert other["verdict"] == "not observed" and "SL401 at line 22" in other["why"]
    same = {"runs": 3, "differing": 0, "comparable": True, "checks": [{"pairs": 4, "misordered": 0}] * 3}
    assert _hazard(ordered, same)["verdict"] == "not observed"
    assert _hazard({"pairs": 4, "misordered": 1, "max_lead_ms": 0.2}, same)["verdict"] == "confirmed"


def test_sl404_is_not_confirmed_by_ordering_alone():
    ran_ahead = {"runs": 3, "differing": 0, "comparable": True, "checks": [{"pairs": 4, "misordered": 4}] * 3}
    out = sv.judge_hazard("SL404:20", {"pairs": 4, "misordered": 4}, ran_ahead, [])
    assert out["verdict"] == "not observed" and "block was not reused" in out["why"]


def _cost(**kw):
    base = dict(occurrences=10, host_ms=1.0, host_blocked_ms=0.0, gpu_ms=0.0, ops=0, copies=0, pageable_bytes=0,
                pinned_bytes=0, syncs=0, gpu_idle_ms=0.0, host_ms_each=0.1, creates=0, host_allocs=0,
                sync_reads=0, pageable_gpu_ms=0.0)
    base.update(kw)
    return base


def test_cost_verdicts_use_each_family_s_measure():
    assert sv.judge_cost("SL501", _cost(creates=10), 100.0)["verdict"] == "confirmed"
    assert sv.judge_cost("SL501", _cost(creates=3), 100.0)["verdict"] == "not observed"
    assert sv.judge_cost("SL502", _cost(sync_reads=10), 100.0)["verdict"] == "confirmed"
    assert sv.judge_cost("SL301", _cost(), 100.0)["why"].startswith("no copy")
    held = _cost(pageable_bytes=1 << 24, host_blocked_ms=2.0, pageable_gpu_ms=2.5)
    assert sv.judge_cost("SL301", held, 100.0)["verdict"] == "confirmed"
    # a host stall is host time in the call: GPU idle around it is no stall
    assert sv.judge_cost("SL103", _cost(gpu_idle_ms=5.0, host_blocked_ms=0.01), 100.0)["verdict"] == "not observed"
    assert sv.judge_cost("SL103", _cost(host_blocked_ms=5.0), 100.0)["verdict"] == "confirmed"
    # a device barrier is the overlap lost between streams: a held host is no barrier
    assert sv.judge_cost("SL101", _cost(host_blocked_ms=5.0, barrier_ops=10), 100.0)["verdict"] == "not observed"
    lost = sv.judge_cost("SL101", _cost(barrier_lost_ms=4.0, barrier_ops=10), 100.0)
    assert lost["verdict"] == "confirmed" and "overlap lost between streams" in lost["why"]
    assert sv.judge_cost("SL101", _cost(), 100.0)["why"] == "no work was queued on the legacy default stream here"
    assert sv.judge_cost("SL303", _cost(host_allocs=10), 100.0)["verdict"] == "confirmed"


def _call_site_trace() -> Trace:
    """`print(main())` flagged at line 30 wraps main(), whose loop holds SL502:12."""
    t = Trace()
    t.ranges = [Range("SL502:30", 0.0, 1000.0, 1)] + [Range("SL502:12", 100.0 * k, 100.0 * k + 20, 1)
                                                       for k in range(1, 9)]  # fmt: skip
    t.api = [ApiCall("cudaStreamSynchronize", "sync", 100.0 * k + 2, 100.0 * k + 18, k, 1, "runtime")
             for k in range(1, 9)] + [ApiCall("cudaStreamSynchronize", "sync", 950.0, 990.0, 99, 1, "runtime")]  # fmt: skip
    t.gpu = [GpuOp("kernel", "k", 7, 100.0 * k - 50, 100.0 * k + 15, k) for k in range(1, 9)]
    return t


def test_a_call_site_finding_is_charged_only_what_it_does_itself():
    ev = Evidence(_call_site_trace())
    inner = sv.enclosed_labels(ev, "SL502:30", ["SL502:30", "SL502:12"])
    assert inner == ["SL502:12"]
    tail = sv.tail_ranges(ev, "SL502:30", inner)
    assert tail[0].start == 820.0 and tail[0].end == 1000.0
    cost, n, _ = sv.steady_cost(ev, "SL502:30", tail)
    assert n == 1 and cost["syncs"] == 1  # the final print's read, not the loop's 8
    assert cost["host_ms"] < 200


def test_numba_copies_without_a_recorded_call_count_as_host_blocking():
    # under the PyTorch profiler, Numba's synchronous cuMemcpyHtoD/DtoH calls are not
    # recorded; their pageable copies hold the host for the whole transfer all the same
    from streamlint.runtime.evidence import uncalled_blocking

    from .rc_data import evidence_of

    ev = evidence_of("SL102", "bad")
    rep = ev._reps[0]
    uncalled = uncalled_blocking(ev.trace, ev.rep_ops(rep))
    assert len(uncalled) >= 10
    assert ev.rep_metrics(rep)["blocked_ms"] >= 0.9 * sum(e - s for s, e in uncalled) * 1e-3


def test_a_pair_not_confirmed_is_run_again_before_the_verdict_stands(monkeypatch, tmp_path):
    from streamlint.runtime import runner

    verdicts = iter(["not confirmed", "confirmed"])
    calls = []
    monkeypatch.setattr(runner, "run_pair", lambda *a, **k: calls.append(1) or {"code": "SL303"})
    monkeypatch.setattr(runner, "_verdict_of", lambda records, code: next(verdicts))
    (tmp_path / "SL303").mkdir()
    pair = runner.Pair("SL303", tmp_path)
    record = runner.run_pair_robustly(pair, runner.Settings(rerun_flaky=1), tmp_path, tmp_path)
    assert len(calls) == 2 and record["attempts"] == ["not confirmed", "confirmed"]
