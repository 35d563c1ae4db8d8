"""The process that builds or measures one candidate (dlc.tune.measure):
``python -m dlc.tune.worker build|measure`` reads a pickled job on stdin and
prints one JSON line. Not for users: a crash here is a failed trial."""

import json
import pickle
import sys
import time


def _build(job):
    from ..aot import lower_text
    from ..export import export_lowered
    from . import target_of

    start = time.perf_counter()
    target = target_of(job["target"])
    lowered = lower_text(job["module"], "task", target=target, where="<tuning candidate>")
    export_lowered(lowered, job["path"], name="task")
    return {"ok": True, "seconds": time.perf_counter() - start}


def _measure(job):
    import numpy as np

    import dlcrt

    library = dlcrt.load(job["path"])
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal(shape).astype(dtype) for shape, dtype in job["inputs"]]
    call = library.task.prepare(*inputs)
    flush = None
    if job.get("flush_cache"):
        flush = np.zeros(job.get("flush_bytes", 256 << 20) // 8)

    def once():
        if flush is not None:
            np.add(flush, 1.0, out=flush)
        start = time.perf_counter()
        out = call()
        return time.perf_counter() - start, out

    # Warm-up: at least 3 calls and 0.05 s.
    began, calls = time.perf_counter(), 0
    while calls < 3 or time.perf_counter() - began < 0.05:
        single, out = once()
        calls += 1
    number = 1 if flush is not None else max(1, int(job.get("min_repeat_seconds", 0.02) / max(single, 1e-7)))
    runs = []
    started = time.time()
    for _ in range(job.get("repeats", 5)):
        total = 0.0
        for _ in range(number):
            seconds, out = once()
            total += seconds
        runs.append(total / number)
    ended = time.time()
    result = out[0] if isinstance(out, (list, tuple)) else out
    flat = np.asarray(result).reshape(-1)
    positions = np.linspace(0, flat.size - 1, min(flat.size, 4096)).astype(np.int64)
    return {"ok": True, "seconds": float(np.median(runs)), "runs": runs,
            "sample": flat[positions].astype(np.float64).tolist(),
            "start": started, "end": ended}


def main():
    mode = sys.argv[1]
    job = pickle.loads(sys.stdin.buffer.read())
    try:
        result = _build(job) if mode == "build" else _measure(job)
    except Exception as error:  # noqa: BLE001 - reported as the trial's failure
        result = {"ok": False, "error": f"{mode}: {type(error).__name__}: {error}"[:2000]}
    sys.stdout.write("\n" + json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
