"""Auto-tuning: ``dlc.tune`` searches each matmul's and convolution's
strategy by measuring it, and writes what it finds to a records database.

    summary = dlc.tune(model, x, records="model.tune.jsonl", trials=200)
    print(summary)                                   # per task: heuristic -> tuned
    fast = dlc.from_torch(torch_model, x, tuning_records="model.tune.jsonl")

A model is split into *tasks* (:mod:`.tasks`: one per distinct op signature
at the graph stage, weighted by how often it occurs and how long it runs);
each task's *space* (:mod:`.space`) is the ``#dl.strategy`` parameters the
passes obey: convolution kind, register tile, cache blocks. The *search*
(:mod:`.search`) gives trials to the tasks where the end-to-end gain is
largest, proposes candidates by mutation ranked by a LightGBM cost model
trained on the run's measurements, builds each candidate in a process of
its own and measures it in another (:mod:`.measure`: a crash or a hang is a
failed trial), checks its output against the heuristic's, and measures the
best few again before keeping one. The records (:mod:`.records`) are keyed
by workload, target and dlc version; compiling with them
(``tuning_records=`` or ``$DLC_TUNING_RECORDS``) measures nothing.
Measurements can run on other machines through any
``concurrent.futures.Executor``, or a ``dask.distributed.Client``
(:mod:`.distributed`). ``python -m dlc.tune`` is the command line.
"""

import os
import re
import time
from dataclasses import replace

import numpy as np

from .records import Records, TuningWarning, load  # noqa: F401
from .search import Search, TaskResult  # noqa: F401
from .tasks import Task, extract_tasks, target_key  # noqa: F401

__all__ = ["tune", "Records", "TuningWarning", "TuningSummary", "load", "tasks_of",
           "measure_end_to_end"]


def target_of(text):
    """The dlc.Target of a complete ``#dl.target`` text."""
    from ..target import Target

    fields = dict(re.findall(r'(\w+) = ("(?:[^"\\]|\\.)*"|\d+)', text))
    strings = {k: v[1:-1] for k, v in fields.items() if v.startswith('"')}
    numbers = {k: int(v) for k, v in fields.items() if not v.startswith('"')}
    return Target(strings.get("cpu", "host"), features=strings.get("features", ""),
                  triple=strings.get("triple"), **numbers)


def _lowered(f, example_args, target):
    """`f` lowered for `example_args` (`target` for a plain function or a
    dlc.nn.Module; the others keep the target they were made for)."""
    from ..frontends.common import ImportedFunction
    from ..jit import JitFunction, jit
    from ..nn import Module
    from ..stages import Lowered

    if isinstance(f, Lowered):
        lowered = f
    elif isinstance(f, (ImportedFunction, JitFunction)):
        lowered = f.lower(*example_args)
    elif isinstance(f, Module):
        lowered = jit(f, constants=True, target=target).lower(*example_args)
    elif callable(f):
        lowered = jit(f, target=target).lower(*example_args)
    else:
        raise TypeError(f"dlc.tune: expected a function, a dlc.jit function, a "
                        f"dlc.nn.Module or an imported model, but got {f!r}")
    if lowered.options.is_cuda:
        raise ValueError("dlc.tune tunes CPU code; this function is compiled for 'cuda'")
    return lowered


def _with_records(lowered, records):
    """A copy of `lowered` compiled with `records` (None: without any)."""
    from ..stages import Lowered

    return Lowered(lowered._traced, lowered.symbol, lowered.arg_specs,
                   lowered._structure, lowered.result_specs,
                   replace(lowered.options, tuning_records=records),
                   lowered.parameter_slots, lowered.donations)


def _first(result):
    while isinstance(result, (tuple, list)):
        result = result[0]
    return np.asarray(result)


def measure_end_to_end(lowered, example_args, records, rounds=10, min_seconds=0.05):
    """(untuned seconds, tuned seconds, largest difference of the first
    output): the whole function compiled without and with `records`
    (Records), timed in alternating rounds here (medians)."""
    arrays = [a.numpy() if hasattr(a, "numpy") and not isinstance(a, np.ndarray) else a
              for a in example_args]
    untuned = _with_records(lowered, None).compile()
    tuned = _with_records(lowered, records).compile()
    expected, got = _first(untuned(*arrays)), _first(tuned(*arrays))
    difference = float(np.max(np.abs(expected - got))) if expected.size else 0.0
    start = time.perf_counter()
    untuned(*arrays)
    calls = max(1, int(min_seconds / max(time.perf_counter() - start, 1e-6)))
    times = ([], [])
    for _ in range(rounds):
        for compiled, out in zip((untuned, tuned), times):
            start = time.perf_counter()
            for _ in range(calls):
                compiled(*arrays)
            out.append((time.perf_counter() - start) / calls)
    return float(np.median(times[0])), float(np.median(times[1])), difference


def tasks_of(f, *example_args, target="cpu"):
    """The tuning tasks of `f` for `example_args` (most expensive first)."""
    from .. import compiler

    lowered = _lowered(f, example_args, target)
    options = replace(lowered.options, tuning_records=None)
    module = compiler.run_stages(lowered._module_at("dl"), "dl", "graph", options,
                                 lowered.symbol)
    return extract_tasks(module, options.cpu_target), options.cpu_target


class TuningSummary:
    """What :func:`tune` did: per task, the heuristic's and the kept
    strategy's times; ``estimated_speedup`` weighs them by how often each
    op runs (the ops tuned, not the whole model)."""

    def __init__(self, results, target, records, trials, failures, seconds, measurements,
                 end_to_end=None):
        self.tasks = results
        #: (untuned seconds, tuned seconds, largest output difference) of
        #: the whole function with this run's records, or None
        self.end_to_end = end_to_end
        self.target = target
        self.records = records
        self.trials = trials
        self.failures = failures
        self.seconds = seconds
        #: (worker, start, end) of every measurement
        self.measurements = measurements

    @property
    def estimated_speedup(self):
        done = [r for r in self.tasks if r.seconds]
        before = sum(r.heuristic_seconds * r.task.count for r in done)
        after = sum(r.seconds * r.task.count for r in done)
        return before / after if after else None

    def __str__(self):
        lines = [f"dlc.tune on {self.target.cpu}: {len(self.tasks)} task(s), {self.trials} "
                 f"trial(s) ({self.failures} failed) in {self.seconds:.0f} s -> {self.records}"]
        for r in self.tasks:
            if r.error:
                lines.append(f"  {r.task.describe():<40} failed: {r.error[:80]}")
                continue
            mark = "tuned" if r.strategy != r.task.heuristic else "heuristic kept"
            lines.append(f"  {r.task.describe():<40} {r.heuristic_seconds * 1e3:9.3f} -> "
                         f"{r.seconds * 1e3:9.3f} ms  {r.speedup:5.2f}x  {mark}: {r.strategy}")
        if self.estimated_speedup:
            lines.append(f"  tuned ops together: {self.estimated_speedup:.2f}x")
        if self.end_to_end:
            before, after, _ = self.end_to_end
            lines.append(f"  the whole function: {before * 1e3:.3f} ms untuned, "
                         f"{after * 1e3:.3f} ms tuned ({before / after:.2f}x, interleaved)")
        return "\n".join(lines)

    __repr__ = __str__


def tune(f, *example_args, records, trials=None, seconds=None, executor=None,
         build_executor=None, target="cpu", batch=8, repeats=5, min_repeat_seconds=0.02,
         flush_cache=False, timeout=120.0, seed=0, progress=True, max_tasks=None,
         end_to_end=True):
    """Tunes the matmuls and convolutions of `f` for `example_args` and
    appends what it measured to `records` (a JSON-lines file, created if
    missing); returns a :class:`TuningSummary`.

    Args:
      f: a function of dlc ops, a ``dlc.jit`` function, a ``dlc.nn.Module``
        or an imported model (``dlc.from_torch``, ``dlc.from_onnx``).
      records: the records file; an earlier run's trials in it warm-start
        the cost model, and its results are superseded by this run's.
      trials / seconds: the budget: measurements in all, or seconds of
        search (at least one must be given); the heuristic of each task is
        measured first, and each task's best few again at the end.
      executor: where candidates are built and measured: None (builds on
        every core here, then measurements one at a time here), any
        ``concurrent.futures.Executor``, or a ``dask.distributed.Client``
        (builds on any worker, measurements on workers holding the
        resource :func:`dlc.tune.distributed.measure_resource` names).
      build_executor: where builds run, when not on `executor`.
      target: the target whose code is tuned ("cpu": this machine), for a
        plain function or a ``dlc.nn.Module`` (a ``dlc.jit`` function or an
        imported model is tuned for the target it was made for); it is
        measured only on machines of that target.
      batch: candidates per round of one task.
      repeats, min_repeat_seconds: each measurement is the median of
        `repeats` timings of at least `min_repeat_seconds` each, after a
        warm-up; flush_cache: write a 256 MiB buffer before each call.
      timeout: seconds a build or a measurement may take before it is a
        failed trial.
      seed: of the search's random choices.
      progress: a progress line on stderr.
      max_tasks: tune only the most expensive tasks (FLOPs x count).
      end_to_end: when a strategy was kept and the code runs here, time the
        whole function without and with the records, in alternating rounds
        (``summary.end_to_end``); a warning when the tuned one is slower.
    """
    if trials is None and seconds is None:
        raise ValueError("dlc.tune: give a budget: trials=N or seconds=S")
    if trials is not None and (not isinstance(trials, int) or trials < 1):
        raise ValueError(f"dlc.tune: trials must be a positive int, but got {trials!r}")
    if seconds is not None and not seconds > 0:
        raise ValueError(f"dlc.tune: seconds must be positive, but got {seconds!r}")
    records = os.path.abspath(os.fspath(records))
    if not os.path.isdir(os.path.dirname(records)):
        raise FileNotFoundError(f"dlc.tune: the folder of {records} does not exist")
    start = time.time()
    found, tuned_target = tasks_of(f, *example_args, target=target)
    if max_tasks is not None:
        found = found[:max_tasks]
    if not found:
        return TuningSummary([], tuned_target, records, 0, 0, time.time() - start, [])
    search = Search(found, tuned_target, records, repeats=repeats,
                    min_repeat_seconds=min_repeat_seconds, flush_cache=flush_cache,
                    timeout=timeout, batch=batch, seed=seed, progress=progress,
                    executor=executor, build_executor=build_executor)
    results = search.run(trials=trials, seconds=seconds)
    whole = None
    tuned_any = any(r.strategy and r.strategy != r.task.heuristic for r in results)
    if end_to_end and tuned_any and tuned_target.why_not_runnable() is None:
        lowered = _lowered(f, example_args, target)
        whole = measure_end_to_end(lowered, example_args, Records(records))
        if whole[1] > whole[0] * 1.02:
            import warnings
            warnings.warn(f"dlc.tune: the whole function ran slower with the tuned strategies "
                          f"({whole[0] * 1e3:.3f} -> {whole[1] * 1e3:.3f} ms): the ops "
                          f"measured alone are not what runs together; compile without "
                          f"these records", TuningWarning, stacklevel=2)
    return TuningSummary(results, tuned_target, records, search.trials, search.failures,
                         time.time() - start, search.measurements, whole)


class _CallableModule(type(os)):
    """``dlc.tune`` is both this package and the function :func:`tune`."""

    def __call__(self, *args, **kwargs):
        return tune(*args, **kwargs)


import sys as _sys  # noqa: E402

_sys.modules[__name__].__class__ = _CallableModule
