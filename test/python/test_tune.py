"""dlc.tune: tasks, the search space, measurement in processes of their own,
the records database (written, applied, refused), the command line and the
Dask executor. Small budgets: the mechanics, not the speed (make bench
measures that)."""

import json
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import dlc
from dlc.mlir import ir
from dlc.tune import measure, records as R, search, space, tasks as T
from dlc.tracing import context

RNG = np.random.default_rng(7)
W1 = RNG.standard_normal((96, 80)).astype(np.float32)
W2 = RNG.standard_normal((80, 80)).astype(np.float32)
W3 = RNG.standard_normal((80, 80)).astype(np.float32)


def mlp(x):
    h = dlc.relu(x @ W1)
    h = dlc.relu(h @ W2)
    return h @ W3


X = RNG.standard_normal((300, 96)).astype(np.float32)


def reference(x):
    h = np.maximum(x @ W1, 0)
    h = np.maximum(h @ W2, 0)
    return h @ W3


def test_tasks_group_ops_of_one_signature():
    found, target = dlc.tune.tasks_of(dlc.jit(mlp), X)
    assert target == dlc.Target.host()
    # W2 and W3 are two products of one signature: one task, count 2.
    assert sorted(t.count for t in found) == [1, 2]
    for task in found:
        assert task.op_name == "dl.matmul"
        assert "const tensor<" in task.signature and "dl.strategy" not in task.signature
        assert task.constant == [False, True]
        assert task.heuristic.startswith("#dl.strategy<kind = register_tiled_gemm")
    # The workload keys are stable: another trace, the same keys.
    again, _ = dlc.tune.tasks_of(dlc.jit(mlp), X)
    assert {t.workload for t in found} == {t.workload for t in again}
    # Another target, another target key; the workloads stay.
    other, znver3 = dlc.tune.tasks_of(mlp, X, target=dlc.Target("znver3"))
    assert znver3.cpu == "znver3"
    assert {t.target_key for t in other} == {T.target_key(znver3)} != \
        {t.target_key for t in found}


def test_task_module_compiles_alone_and_computes_the_op():
    found, _ = dlc.tune.tasks_of(dlc.jit(mlp), X)
    task = found[0]
    text = task.module_text(seed=3)
    lowered = __import__("dlc.aot", fromlist=["lower_text"]).lower_text(text, "task")
    compiled = lowered.compile()
    # The constant operand is the seeded random weight of the task.
    rng = np.random.default_rng(3)
    weight = rng.standard_normal(task.operand_shapes[1]).astype(np.float32)
    a = RNG.standard_normal(task.operand_shapes[0]).astype(np.float32)
    np.testing.assert_allclose(compiled(a), a @ weight, rtol=1e-4, atol=1e-3)


def test_convolution_tasks_search_direct_and_im2col():
    def conv(x, w):
        return dlc.conv2d(x, w, padding=1)
    w = RNG.standard_normal((32, 16, 3, 3)).astype(np.float32)
    found, target = dlc.tune.tasks_of(lambda x: conv(x, w), np.zeros((1, 16, 20, 20), np.float32),
                                      target=dlc.Target("znver4"))
    assert len(found) == 1 and found[0].op_name == "dl.conv2d"
    sp = space.Space(found[0], target)
    assert sp.kinds == ["direct", "im2col_gemm"]
    _, m, n, k = found[0].gemm
    assert (m, n, k) == (400, 32, 144)


def test_space_candidates_are_valid_strategies():
    found, target = dlc.tune.tasks_of(dlc.jit(mlp), X)
    sp = space.Space(found[0], target)
    assert sp.size() > 100
    rng = np.random.default_rng(0)
    candidates = [sp.random(rng) for _ in range(50)]
    candidates += [sp.mutate(c, rng) for c in candidates]
    with context():
        for candidate in candidates:
            text = space.strategy_text(candidate)
            attr = ir.Attribute.parse(text)  # the verifier accepts it
            assert space.parse_strategy(str(attr)) == dict(candidate, layout="")
            assert candidate["rows"] * candidate["vectors"] + candidate["vectors"] + 1 \
                <= target.vector_registers
            if candidate["column_block"]:
                assert candidate["column_block"] % (candidate["vectors"] *
                                                    target.lanes(np.float32)) == 0
    assert len(sp.features(candidates[0])) == len(sp.features(candidates[1]))
    # The heuristic is a point of the space.
    assert space.strategy_text(sp.heuristic) == found[0].heuristic


def test_a_failing_candidate_is_a_failed_trial():
    # Invalid IR, a build past its timeout, and a library that is no library:
    # each a result saying why, none an exception in the tuner.
    broken = measure.build({"module": "this is not MLIR", "target": str(dlc.Target.host()),
                            "timeout": 60})
    assert not broken["ok"] and "build" in broken["error"]
    found, _ = dlc.tune.tasks_of(dlc.jit(mlp), X)
    job = {"module": found[0].module_text(), "target": str(dlc.Target.host()),
           "timeout": 0.01}
    slow = measure.build(job)
    assert not slow["ok"] and "timed out" in slow["error"]
    garbage = measure.measure({"inputs": [[[300, 96], "float32"]], "timeout": 60,
                               "target_key": T.target_key(dlc.Target.host())}, b"\0" * 64)
    assert not garbage["ok"] and "measure" in garbage["error"]
    elsewhere = measure.measure({"inputs": [], "target_key": "0" * 16}, b"")
    assert not elsewhere["ok"] and elsewhere["wrong_target"]


def test_a_candidate_computing_something_else_is_rejected():
    found, target = dlc.tune.tasks_of(dlc.jit(mlp), X)
    state = search.TaskState(found[0], space.Space(found[0], target))
    state.reference = np.linspace(-5, 5, 100)
    good = {"ok": True, "sample": list(state.reference * (1 + 1e-6)), "seconds": 1.0}
    bad = {"ok": True, "sample": list(state.reference + 0.5), "seconds": 1.0}
    s = search.Search([found[0]], target, "/dev/null", progress=False)
    assert s._check(state, good)["ok"]
    checked = s._check(state, bad)
    assert not checked["ok"] and "wrong result" in checked["error"]


def _best_record(task, target, strategy, improved=True, **changes):
    record = {"kind": "best", "format": R.FORMAT, "dlc": dlc.__version__,
              "target": task.target_key, "target_cpu": target.cpu,
              "workload": task.workload, "signature": task.signature,
              "strategy": strategy, "seconds": 1e-4, "heuristic_seconds": 2e-4,
              "trials": 9, "improved": improved}
    record.update(changes)
    return record


TUNED = "#dl.strategy<kind = register_tiled_gemm, rows = 3, vectors = 2, reduction_block = 32>"


def _write(path, lines):
    with open(path, "w") as out:
        out.writelines(json.dumps(line) + "\n" for line in lines)


def _matmul_lines(text):
    return [line for line in text.splitlines() if "dl.matmul" in line]


def test_records_are_applied_without_measuring(tmp_path, monkeypatch):
    found, target = dlc.tune.tasks_of(dlc.jit(mlp), X)
    twice = next(t for t in found if t.count == 2)
    path = tmp_path / "r.jsonl"
    _write(path, [_best_record(twice, target, TUNED)])
    # Applying records builds and measures nothing.
    monkeypatch.setattr(measure, "build", None)
    monkeypatch.setattr(measure, "measure", None)
    f = dlc.jit(mlp, tuning_records=str(path))
    lines = _matmul_lines(f.lower(X).as_text("graph"))
    tuned = [line for line in lines if "dl.tuned" in line]
    assert len(tuned) == 2 and all(TUNED in line for line in tuned)
    assert '"0.100 ms, heuristic 0.200 ms, 9 trials"' in tuned[0]
    np.testing.assert_allclose(f(X), reference(X), rtol=1e-4, atol=1e-3)
    # The same through $DLC_TUNING_RECORDS, and "off" ignores it.
    monkeypatch.setenv("DLC_TUNING_RECORDS", str(path))
    assert sum("dl.tuned" in line for line in
               _matmul_lines(dlc.jit(mlp).lower(X).as_text("graph"))) == 2
    assert not any("dl.tuned" in line for line in _matmul_lines(
        dlc.jit(mlp, tuning_records="off").lower(X).as_text("graph")))


def test_records_not_improved_or_superseded_are_not_applied(tmp_path):
    found, target = dlc.tune.tasks_of(dlc.jit(mlp), X)
    twice = next(t for t in found if t.count == 2)
    path = tmp_path / "r.jsonl"
    # A later run that kept the heuristic supersedes the earlier tuned record.
    _write(path, [_best_record(twice, target, TUNED),
                  _best_record(twice, target, twice.heuristic, improved=False)])
    text = dlc.jit(mlp, tuning_records=str(path)).lower(X).as_text("graph")
    assert "dl.tuned" not in text
    assert dlc.tune.load(path).for_target(target) == {}


def test_records_of_another_target_or_version_are_refused(tmp_path):
    found, target = dlc.tune.tasks_of(dlc.jit(mlp), X)
    twice = next(t for t in found if t.count == 2)
    path = tmp_path / "r.jsonl"
    _write(path, [_best_record(twice, target, TUNED)])
    # Tuned on this CPU: refused for a named other one, with one warning.
    other = dlc.Target("haswell") if target.cpu != "haswell" else dlc.Target("znver3")
    with pytest.warns(R.TuningWarning, match="only for another target"):
        text = dlc.jit(mlp, tuning_records=str(path), target=other).lower(X).as_text("graph")
    assert "dl.tuned" not in text
    # Another dlc version or records format: refused too.
    for change in ({"dlc": "0.0.1"}, {"format": R.FORMAT + 1}):
        stale = tmp_path / f"stale{len(change)}{list(change)[0]}.jsonl"
        _write(stale, [_best_record(twice, target, TUNED, **change)])
        with pytest.warns(R.TuningWarning, match="another target or dlc version"):
            text = dlc.jit(mlp, tuning_records=str(stale)).lower(X).as_text("graph")
        assert "dl.tuned" not in text


def test_records_errors_are_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="no tuning records file"):
        dlc.jit(mlp, tuning_records=str(tmp_path / "missing.jsonl"))
    with pytest.raises(TypeError, match="tuning_records must be"):
        dlc.jit(mlp, tuning_records=3)
    # A stale $DLC_TUNING_RECORDS is a warning, not a failure of every compile.
    os.environ["DLC_TUNING_RECORDS"] = str(tmp_path / "gone.jsonl")
    try:
        with pytest.warns(R.TuningWarning, match="not a file"):
            f = dlc.jit(mlp)
        assert f.lower(X).options.tuning_records is None
    finally:
        del os.environ["DLC_TUNING_RECORDS"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n{\"kind\": \"best\"}\n")
    with pytest.warns(R.TuningWarning, match="2 line"):
        assert dlc.tune.load(bad).best == {}
    with pytest.raises(ValueError, match="budget"):
        dlc.tune(mlp, X, records=str(tmp_path / "r.jsonl"))
    with pytest.raises(ValueError, match="trials must be"):
        dlc.tune(mlp, X, records=str(tmp_path / "r.jsonl"), trials=0)


def test_cache_key_follows_the_applied_records(tmp_path):
    found, target = dlc.tune.tasks_of(dlc.jit(mlp), X)
    twice = next(t for t in found if t.count == 2)
    one, two = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    _write(one, [_best_record(twice, target, TUNED)])
    _write(two, [_best_record(twice, target, TUNED.replace("rows = 3", "rows = 2"))])
    a, b = dlc.tune.load(one), dlc.tune.load(two)
    assert a.key_text(target) != b.key_text(target)
    assert a != b and a == dlc.tune.load(one)
    # Records of other workloads only: the same key as none for this target.
    assert a.key_text(dlc.Target("znver3")) == b.key_text(dlc.Target("znver3"))


def _tune_small(tmp_path, name, **kwargs):
    path = tmp_path / name
    summary = dlc.tune(dlc.jit(mlp), X, records=str(path), trials=7, batch=3,
                       progress=False, repeats=3, min_repeat_seconds=0.002, **kwargs)
    return summary, R.read_lines(str(path))


def _kinds(lines):
    return sorted((r["kind"], r["workload"]) for r in lines if r["kind"] == "best"), \
        {r["workload"] for r in lines if r["kind"] == "trial"}


def test_tune_measures_writes_records_and_they_apply(tmp_path):
    summary, lines = _tune_small(tmp_path, "serial.jsonl")
    assert summary.trials == 7 and len(summary.tasks) == 2
    assert sum(r["kind"] == "trial" for r in lines) >= 7
    for result in summary.tasks:
        assert result.error is None and result.seconds > 0 and result.heuristic_seconds > 0
        # Kept only when measured faster than the heuristic.
        assert result.strategy == result.task.heuristic or \
            result.seconds < result.heuristic_seconds
    best = [r for r in lines if r["kind"] == "best"]
    assert len(best) == 2
    for record in best:
        assert record["dlc"] == dlc.__version__ and record["format"] == R.FORMAT
        assert record["improved"] == (record["strategy"] != record["heuristic"])
    assert "tuned ops together" in str(summary) or not summary.estimated_speedup
    # A fresh process compiles with the records, measuring nothing, and
    # computes the same.
    code = ("import numpy as np, dlc, sys; sys.path.insert(0, %r); import test_tune as t; "
            "from dlc.tune import measure; measure.build = measure.measure = None; "
            "f = dlc.jit(t.mlp, tuning_records=%r); "
            "np.testing.assert_allclose(f(t.X), t.reference(t.X), rtol=1e-4, atol=1e-3); "
            "print(f.lower(t.X).as_text('graph').count('dl.tuned'))"
            % (os.path.dirname(__file__), str(tmp_path / "serial.jsonl")))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) == sum(
        r.task.count for r in summary.tasks if r.strategy != r.task.heuristic)


def test_tune_on_a_two_worker_dask_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    del distributed
    from dlc.tune.distributed import local_cluster, measure_resource
    cluster, client = local_cluster(2)
    try:
        assert all(measure_resource() in w["resources"]
                   for w in client.scheduler_info()["workers"].values())
        summary, lines = _tune_small(tmp_path, "dask.jsonl", executor=client)
    finally:
        client.close()
        cluster.close()
    serial, serial_lines = _tune_small(tmp_path, "serial.jsonl")
    # The records of the same kinds, for the same workloads, as serially.
    assert _kinds(lines) == _kinds(serial_lines)
    assert summary.trials == serial.trials
    # Measured on both workers, never two at once on one worker.
    workers = {m[0] for m in summary.measurements}
    assert len(workers) == 2 and all(w.startswith("tcp://") for w in workers)
    for worker in workers:
        spans = sorted((s, e) for w, s, e in summary.measurements if w == worker)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans


def test_command_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run = subprocess.run([sys.executable, "-m", "dlc.tune", "--resource"],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0 and run.stdout.startswith("dlc-measure-")
    module = tmp_path / "model.py"
    module.write_text("import numpy as np, dlc\n"
                      "W = np.random.default_rng(0).standard_normal((64, 48)).astype(np.float32)\n"
                      "def f(x):\n    return dlc.relu(x @ W)\n")
    records = tmp_path / "cli.jsonl"
    run = subprocess.run([sys.executable, "-m", "dlc.tune", f"{module}:f", "--input", "40x64",
                          "--records", str(records), "--trials", "3"],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    # 40x48x64, or its panels where dl-pack-weights packs W (2 x 40x24x64 on
    # AVX2, whose panels are 24 columns wide)
    assert "dlc.tune on " in run.stdout
    assert re.search(r"matmul (\d+ x )?40x\d+x64", run.stdout), run.stdout
    show = subprocess.run([sys.executable, "-m", "dlc.tune", "--show", str(records)],
                          capture_output=True, text=True, env=env)
    assert show.returncode == 0 and "(applied)" in show.stdout and "1 task(s)" in show.stdout
    bad = subprocess.run([sys.executable, "-m", "dlc.tune", f"{module}:f", "--records",
                          str(records), "--trials", "3"], capture_output=True, text=True, env=env)
    assert bad.returncode != 0 and "--input" in bad.stderr


def test_attention_products_are_not_tasks():
    # Q K^T into a softmax and the probabilities times V are computed by
    # dl-fuse-attention in blocks of query rows: not tuned alone. The
    # projections (constant weights) are tasks.
    wq = RNG.standard_normal((64, 64)).astype(np.float32)
    wo = RNG.standard_normal((64, 64)).astype(np.float32)

    def attention(x):
        q = x @ wq
        scores = (q @ dlc.transpose(x, (0, 2, 1))) * 0.125
        return (dlc.softmax(scores, axis=-1) @ x) @ wo

    found, _ = dlc.tune.tasks_of(attention, np.zeros((2, 48, 64), np.float32))
    assert found and all(t.constant[1] for t in found)
    assert sum(t.count for t in found) == 2


def test_end_to_end_times_the_function_with_and_without_records(tmp_path):
    found, target = dlc.tune.tasks_of(dlc.jit(mlp), X)
    twice = next(t for t in found if t.count == 2)
    path = tmp_path / "r.jsonl"
    _write(path, [_best_record(twice, target, TUNED)])
    lowered = dlc.tune._lowered(dlc.jit(mlp), (X,), "cpu")
    untuned, tuned, difference = dlc.tune.measure_end_to_end(
        lowered, [X], dlc.tune.load(path), rounds=2, min_seconds=0.001)
    assert untuned > 0 and tuned > 0
    assert difference <= 1e-4 * float(np.abs(reference(X)).max())
    summary = dlc.tune.TuningSummary([], target, str(path), 0, 0, 1.0, [],
                                     (untuned, tuned, difference))
    assert "the whole function:" in str(summary)


def test_a_rerun_measures_the_earlier_runs_best_first(tmp_path):
    # A short rerun must not supersede an earlier run's tuned record with
    # less: what the records kept is measured again before any search.
    found, target = dlc.tune.tasks_of(dlc.jit(mlp), X)
    twice = next(t for t in found if t.count == 2)
    path = tmp_path / "r.jsonl"
    _write(path, [_best_record(twice, target, TUNED)])
    summary = dlc.tune(dlc.jit(mlp), X, records=str(path), trials=3, progress=False,
                       repeats=3, min_repeat_seconds=0.002, end_to_end=False)
    assert summary.trials == 3
    trials = [r for r in R.read_lines(str(path)) if r["kind"] == "trial"]
    assert [r["strategy"] for r in trials if r["workload"] == twice.workload] == \
        [twice.heuristic, TUNED]
    # The summary's strategy for the task is the better of the two.
    result = next(r for r in summary.tasks if r.task.workload == twice.workload)
    assert result.strategy in (TUNED, twice.heuristic)


def test_refusals_name_what_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="tunes CPU code"):
        dlc.tune(dlc.jit(mlp, target="cuda"), X, records=str(tmp_path / "r.jsonl"), trials=3)
    with pytest.raises(TypeError, match="expected a function"):
        dlc.tune(42, X, records=str(tmp_path / "r.jsonl"), trials=3)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        dlc.tune(mlp, X, records=str(tmp_path / "no" / "r.jsonl"), trials=3)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run = subprocess.run([sys.executable, "-m", "dlc.tune", "model.bin", "--records",
                          str(tmp_path / "r.jsonl"), "--trials", "3"],
                         capture_output=True, text=True, env=env)
    assert run.returncode != 0 and "not a .onnx or .mlir file nor module:function" in run.stderr
    run = subprocess.run([sys.executable, "-m", "dlc.tune", "x:f", "--input", "3xq"],
                         capture_output=True, text=True, env=env)
    assert run.returncode != 0 and "a shape like 1x3x224x224" in run.stderr
