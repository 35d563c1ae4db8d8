"""The search: a task scheduler, an evolutionary proposal of candidates, a
learned cost model, and measurement through an executor.

Each round gives a batch of trials to one task: the task whose share of
the model's time (count x best time so far) times its recent relative gain
is largest, every task once before any task twice (Ansor's gradient
scheduler, simplified); a task's gain floor shrinks with each round that
did not improve it, so the others get their turns. The batch comes from a population (the task's
best measured candidates and the heuristic) mutated one parameter at a
time, plus random candidates, ranked by a LightGBM regressor trained on
every measurement of the run (and the records' earlier trials): features of
the task's product and the candidate's tile, blocks and working sets
(:meth:`.space.Space.features`), predicting log(seconds per FLOP), so that
one model serves every task. A share of each batch is random, so a wrong
model cannot stop the search from exploring.

Builds of a batch run in parallel (each in its own process); measurements
run one at a time, after the builds, so that no compile shares the CPU with
a measurement. Every measurement's output is checked against the
heuristic's (rtol 1e-3 of the output's scale): a candidate computing
something else is a failed trial, never a record.
"""

import math
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import measure as _measure
from . import records as _records
from .space import Space, key, parse_strategy, strategy_text

#: share of each batch proposed at random, not by the cost model
RANDOM_SHARE = 0.25
#: measurements before the cost model is trained
MIN_TRAINING = 8
#: the best candidates measured again against the heuristic at the end
FINALISTS = 3


class Progress:
    """One line on stderr, updated in place on a terminal."""

    def __init__(self, total, enabled=True, width=24):
        self.total, self.width, self.done = max(total, 1), width, 0
        self.enabled = enabled
        self.interactive = sys.stderr.isatty()
        self.last = 0.0

    def update(self, done, label):
        self.done = done
        if not self.enabled:
            return
        now = time.time()
        if not self.interactive and now - self.last < 5 and done < self.total:
            return
        self.last = now
        filled = int(self.width * min(done, self.total) / self.total)
        text = f"dlc.tune [{'#' * filled}{'.' * (self.width - filled)}] {label}"
        if self.interactive:
            sys.stderr.write("\r" + text[:118].ljust(118))
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def close(self):
        if self.enabled and self.interactive:
            sys.stderr.write("\n")
            sys.stderr.flush()


class CostModel:
    """log(seconds per FLOP) from candidate features, a LightGBM regressor
    retrained on every measurement so far."""

    def __init__(self, seed=0):
        self.seed = seed
        self.x, self.y = [], []
        self.model = None

    def add(self, features, seconds, flops):
        self.x.append(features)
        self.y.append(math.log(seconds / flops))

    def fit(self):
        if len(self.y) < MIN_TRAINING:
            self.model = None
            return
        import lightgbm
        self.model = lightgbm.LGBMRegressor(
            n_estimators=120, learning_rate=0.1, num_leaves=15, min_child_samples=3,
            subsample=0.9, subsample_freq=1, random_state=self.seed, verbose=-1,
            n_jobs=1)
        self.model.fit(np.asarray(self.x, dtype=np.float64), np.asarray(self.y))

    def predict(self, features):
        if self.model is None:
            return None
        return self.model.predict(np.asarray(features, dtype=np.float64))


class TaskState:
    """What the search knows of one task."""

    def __init__(self, task, space):
        self.task, self.space = task, space
        self.measured = {}   # key -> seconds
        self.candidates = {}  # key -> candidate
        self.failed = {}     # key -> why
        self.heuristic_seconds = None
        self.reference = None
        self.rounds = 0
        self.history = []    # best seconds after each round

    @property
    def best(self):
        if not self.measured:
            return None, None
        k = min(self.measured, key=self.measured.get)
        return self.candidates[k], self.measured[k]

    def gain(self):
        """Relative improvement of the best over the last two rounds; after
        rounds without any, a floor that shrinks with each (so that a task
        which stopped improving yields its turn to the others)."""
        if len(self.history) < 2:
            return 1.0
        old, new = self.history[-3] if len(self.history) >= 3 else self.history[0], self.history[-1]
        stale = 0
        for before, after in zip(self.history[-2::-1], self.history[::-1]):
            if after < before:
                break
            stale += 1
        return max((old - new) / old, 0.05 / (1 + stale))

    def priority(self):
        _, seconds = self.best
        return self.task.count * (seconds or 0.0) * self.gain()


def _executors(executor, build_executor, target_key):
    """(build executor, measure executor, closers) for `executor`: None
    (builds on every core here, measurements one at a time here), a
    concurrent.futures.Executor (both through it), or a
    dask.distributed.Client (builds on any worker; measurements on the
    workers holding the target's resource, one at a time each)."""
    closers = []
    if executor is None:
        measure_executor = ThreadPoolExecutor(1)
        closers.append(measure_executor)
    elif hasattr(executor, "get_executor") and hasattr(executor, "scheduler_info"):
        from .distributed import measure_resource
        measure_executor = executor.get_executor(resources={measure_resource(target_key): 1})
        if build_executor is None:
            build_executor = executor.get_executor()
    else:
        measure_executor = executor
    if build_executor is None:
        if executor is None:
            build_executor = ThreadPoolExecutor(max(1, len(os.sched_getaffinity(0))))
            closers.append(build_executor)
        else:
            build_executor = measure_executor
    return build_executor, measure_executor, closers


class Search:
    """A tuning run over `tasks` (see :func:`dlc.tune.tune`)."""

    def __init__(self, tasks, target, records_path, *, repeats=5, min_repeat_seconds=0.02,
                 flush_cache=False, timeout=120.0, batch=8, seed=0, progress=True,
                 executor=None, build_executor=None):
        self.target = target
        self.records_path = records_path
        self.rng = np.random.default_rng(seed)
        self.model = CostModel(seed)
        self.batch = batch
        self.job_base = {"repeats": repeats, "min_repeat_seconds": min_repeat_seconds,
                         "flush_cache": flush_cache, "timeout": timeout,
                         "target": str(target)}
        self.states = [TaskState(t, Space(t, target)) for t in tasks]
        self.executor, self.build_executor = executor, build_executor
        self.progress_enabled = progress
        self.trials = 0
        self.failures = 0
        self.measurements = []  # (worker, start, end) of every measurement
        self._modules = {}

    # -- jobs ----------------------------------------------------------------

    def _job(self, state, candidate):
        task = state.task
        if task.workload not in self._modules:
            self._modules[task.workload] = task.module_text()
        text = self._modules[task.workload]
        marker = f"dl.strategy = {task.heuristic}"
        module = text.replace(marker, f"dl.strategy = {strategy_text(candidate)}", 1)
        inputs = [[list(shape), dtype] for shape, dtype, const in zip(
            task.operand_shapes, task.operand_dtypes, task.constant) if not const]
        return dict(self.job_base, module=module, inputs=inputs, target_key=task.target_key)

    def _run(self, pairs, builds, measures):
        """Builds then measures each (state, candidate); returns the
        results in order."""
        jobs = [self._job(s, c) for s, c in pairs]
        built = [f.result() for f in [builds.submit(_measure.build, j) for j in jobs]]
        # Every measurement at once: the measuring executor runs one at a
        # time per machine (a thread here; a worker resource on Dask).
        futures = [measures.submit(_measure.measure, job, b["library"]) if b.get("ok") else None
                   for job, b in zip(jobs, built)]
        results = []
        for future, b in zip(futures, built):
            if future is None:
                results.append(b)
                continue
            result = future.result()
            if result.get("wrong_target"):
                result["error"] = "no machine of the task's target measured it: " + result["error"]
            if "start" in result:
                self.measurements.append((result.get("worker"), result["start"], result["end"]))
            result["compile_seconds"] = b.get("seconds")
            results.append(result)
        return results

    def _check(self, state, result):
        if state.reference is None or not result.get("ok"):
            return result
        sample, ref = np.asarray(result["sample"]), state.reference
        scale = max(float(np.max(np.abs(ref))) if ref.size else 0.0, 1e-30)
        if sample.shape != ref.shape or not np.allclose(sample, ref, rtol=1e-3,
                                                        atol=1e-3 * scale):
            worst = float(np.max(np.abs(sample - ref))) if sample.shape == ref.shape else float("inf")
            return {"ok": False, "error": f"wrong result: differs from the heuristic's "
                    f"by up to {worst:.3g} (scale {scale:.3g})"}
        return result

    def _record(self, state, candidate, result):
        task = state.task
        k = key(candidate)
        state.candidates[k] = candidate
        line = {"kind": "trial", "target": task.target_key, "target_cpu": self.target.cpu,
                "workload": task.workload, "signature": task.signature,
                "strategy": strategy_text(candidate), "ok": bool(result.get("ok"))}
        if result.get("ok"):
            state.measured[k] = result["seconds"]
            line["seconds"] = result["seconds"]
            self.model.add(state.space.features(candidate), result["seconds"], task.flops)
        else:
            state.failed[k] = result.get("error", "failed")
            line["error"] = state.failed[k][:500]
            self.failures += 1
        return line

    # -- proposals -------------------------------------------------------------

    def _propose(self, state, count):
        seen = set(state.measured) | set(state.failed)
        population = sorted(state.measured, key=state.measured.get)[:8]
        parents = [state.candidates[k] for k in population] or [state.space.heuristic]
        pool = {}
        for _ in range(256):
            if self.rng.random() < 0.5:
                child = parents[self.rng.integers(len(parents))]
                for _ in range(1 + int(self.rng.integers(2))):
                    child = state.space.mutate(child, self.rng)
            else:
                child = state.space.random(self.rng)
            k = key(child)
            if k not in seen:
                pool[k] = child
        candidates = list(pool.values())
        if not candidates:
            return []
        scores = self.model.predict([state.space.features(c) for c in candidates])
        randoms = max(1, int(round(count * RANDOM_SHARE))) if scores is not None else count
        order = list(self.rng.permutation(len(candidates)))
        if scores is not None:
            order = list(np.argsort(scores))
        chosen = [candidates[i] for i in order[:count - randoms]]
        rest = [candidates[i] for i in order[count - randoms:]]
        for i in self.rng.permutation(len(rest))[:randoms]:
            chosen.append(rest[i])
        return chosen[:count]

    def warm_start(self):
        """Trains the cost model on the records' earlier trials of these
        tasks (same target and version), and returns per task the earlier
        runs' kept strategy and best trials: measured again first, so that
        a short rerun starts where the last one ended instead of
        superseding its records with less."""
        seeds = {}
        if not os.path.isfile(self.records_path):
            return seeds
        by_workload = {s.task.workload: s for s in self.states}
        trials = {}
        for record in _records.read_lines(self.records_path):
            state = by_workload.get(record["workload"])
            if state is None or record["target"] != state.task.target_key or \
                    not _records.compatible(record):
                continue
            if record.get("kind") == "best" and record.get("improved"):
                seeds.setdefault(state.task.workload, []).insert(0, record["strategy"])
            if record.get("kind") != "trial" or not record.get("ok"):
                continue
            candidate = parse_strategy(record["strategy"])
            self.model.add(state.space.features(candidate), record["seconds"], state.task.flops)
            trials.setdefault(state.task.workload, []).append((record["seconds"],
                                                               record["strategy"]))
        for workload, measured in trials.items():
            seeds.setdefault(workload, []).extend(s for _, s in sorted(measured)[:2])
        return {w: list(dict.fromkeys(s))[:FINALISTS] for w, s in seeds.items()}

    # -- the run ---------------------------------------------------------------

    def run(self, trials=None, seconds=None):
        builds, measures, closers = _executors(self.executor, self.build_executor,
                                               self.states[0].task.target_key)
        budget = trials if trials is not None else 10 ** 9
        deadline = time.time() + seconds if seconds is not None else float("inf")
        progress = Progress(trials if trials is not None else int(seconds or 1),
                            self.progress_enabled)
        started = time.time()

        def tick(label):
            done = self.trials if trials is not None else int(time.time() - started)
            progress.update(done, f"{self.trials} trials, {self.failures} failed; {label}")

        try:
            seeds = self.warm_start()
            # The heuristic of every task first: the reference and the bar.
            pending = [(s, s.space.heuristic) for s in self.states]
            lines = []
            for state, result in zip([p[0] for p in pending],
                                     self._run(pending, builds, measures)):
                self.trials += 1
                lines.append(self._record(state, state.space.heuristic, result))
                if result.get("ok"):
                    state.heuristic_seconds = result["seconds"]
                    state.reference = np.asarray(result["sample"])
                    state.history.append(result["seconds"])
            _records.append(self.records_path, lines)
            self.states = [s for s in self.states if s.heuristic_seconds is not None] + \
                [s for s in self.states if s.heuristic_seconds is None]
            live = [s for s in self.states if s.heuristic_seconds is not None]
            tick("heuristics measured")
            # Then what earlier runs kept and measured best, again.
            # Each task's kept strategy first, then the best trials.
            pending = [(s, parse_strategy(seeds[s.task.workload][i]))
                       for i in range(FINALISTS) for s in live
                       if i < len(seeds.get(s.task.workload, ()))
                       and key(parse_strategy(seeds[s.task.workload][i])) !=
                       key(s.space.heuristic)]
            pending = pending[:max(0, budget - self.trials)]
            if pending:
                lines = []
                for (state, candidate), result in zip(pending, self._run(pending, builds,
                                                                         measures)):
                    self.trials += 1
                    lines.append(self._record(state, candidate, self._check(state, result)))
                _records.append(self.records_path, lines)
                for state in {id(s): s for s, _ in pending}.values():
                    state.history.append(state.best[1])
                tick("earlier runs' best measured again")
            while live and self.trials < budget and time.time() < deadline:
                fresh = [s for s in live if s.rounds == 0]
                state = max(fresh or live, key=TaskState.priority)
                self.model.fit()
                count = min(self.batch, budget - self.trials)
                proposals = self._propose(state, count)
                state.rounds += 1
                if not proposals:
                    live.remove(state)
                    continue
                lines = []
                for candidate, result in zip(proposals, self._run(
                        [(state, c) for c in proposals], builds, measures)):
                    self.trials += 1
                    lines.append(self._record(state, candidate, self._check(state, result)))
                _records.append(self.records_path, lines)
                state.history.append(state.best[1])
                tick(f"{state.task.describe()}: {state.heuristic_seconds * 1e3:.3f} -> "
                     f"{state.best[1] * 1e3:.3f} ms")
            return self._finish(builds, measures)
        finally:
            progress.close()
            for closer in closers:
                closer.shutdown()

    def _finish(self, builds, measures):
        """Measures each task's best few again, interleaved with the
        heuristic, and writes one "best" record per task."""
        lines, results = [], []
        for state in self.states:
            task = state.task
            if state.heuristic_seconds is None:
                results.append(TaskResult(task, None, None, None, state, error=next(
                    iter(state.failed.values()), "failed")))
                continue
            heuristic_key = key(state.space.heuristic)
            finalists = [k for k in sorted(state.measured, key=state.measured.get)
                         if k != heuristic_key][:FINALISTS]
            chosen, chosen_seconds = state.space.heuristic, state.heuristic_seconds
            heuristic_seconds = state.heuristic_seconds
            if finalists:
                pairs = [(state, state.candidates[k]) for k in [heuristic_key] + finalists]
                again = [self._check(state, r) for r in self._run(pairs, builds, measures)]
                times, spread = {}, {}
                for (_, candidate), result, k in zip(pairs, again, [heuristic_key] + finalists):
                    if result.get("ok"):
                        # The lower of the search's and this measurement.
                        times[k] = min(result["seconds"], state.measured[k])
                        runs = result.get("runs") or [result["seconds"]]
                        spread[k] = (max(runs) - min(runs)) / 2
                heuristic_seconds = times.get(heuristic_key, state.heuristic_seconds)
                best = min((k for k in times if k != heuristic_key), key=times.get, default=None)
                # Faster by more than 1% and by more than either one's spread
                # of repeats: a few microseconds of noise are not a gain.
                margin = max(0.01 * heuristic_seconds, spread.get(heuristic_key, 0.0),
                             spread.get(best, 0.0))
                if best is not None and times[best] < heuristic_seconds - margin:
                    chosen, chosen_seconds = state.candidates[best], times[best]
                else:
                    chosen_seconds = heuristic_seconds
            improved = key(chosen) != heuristic_key
            lines.append({"kind": "best", "target": task.target_key,
                          "target_cpu": self.target.cpu, "workload": task.workload,
                          "signature": task.signature, "strategy": strategy_text(chosen),
                          "seconds": chosen_seconds, "heuristic": task.heuristic,
                          "heuristic_seconds": heuristic_seconds,
                          "trials": len(state.measured) + len(state.failed),
                          "improved": improved})
            results.append(TaskResult(task, strategy_text(chosen), chosen_seconds,
                                      heuristic_seconds, state))
        _records.append(self.records_path, lines)
        return results


class TaskResult:
    """One task's outcome: the strategy kept and the times measured."""

    def __init__(self, task, strategy, seconds, heuristic_seconds, state, error=None):
        self.task, self.strategy = task, strategy
        self.seconds, self.heuristic_seconds = seconds, heuristic_seconds
        self.trials = len(state.measured) + len(state.failed)
        self.failed = len(state.failed)
        self.error = error

    @property
    def speedup(self):
        if not self.seconds:
            return None
        return self.heuristic_seconds / self.seconds

    def __repr__(self):
        if self.error:
            return f"TaskResult({self.task.describe()}: failed: {self.error})"
        return (f"TaskResult({self.task.describe()}: {self.heuristic_seconds * 1e3:.3f} -> "
                f"{self.seconds * 1e3:.3f} ms, {self.strategy})")
