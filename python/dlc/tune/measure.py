"""Building and measuring candidates, each in a process of its own.

:func:`build` compiles one candidate (a task's module with a strategy
written on its op) into a library (:func:`dlc.export`'s format) in a new
Python process; :func:`measure` loads such a library with :mod:`dlcrt` in
another new process and times it. A candidate that crashes the compiler or
its code, or runs past its timeout, is a failed trial with the reason: the
tuner never dies with it. Both are plain functions of picklable arguments
that return dicts, so any ``concurrent.futures.Executor`` runs them (a
thread pool here, ``dask.distributed`` workers on a cluster: see
:mod:`dlc.tune.distributed`).

A library is compiled for the task's target (a complete ``#dl.target``),
whatever machine builds it; :func:`measure` refuses one whose target is not
the measuring machine's own (``wrong_target`` in its result), so a
measurement is only ever taken on the kind of CPU it is for.
"""

import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import tempfile
import time

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _environment():
    env = dict(os.environ)
    paths = [_PACKAGE_PARENT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    # A candidate's compile is never the disk cache's business.
    env["DLC_CACHE_DIR"] = "off"
    return env


def _describe_exit(code, stderr):
    tail = stderr.decode(errors="replace").strip().splitlines()[-6:]
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        head = f"killed by {name}"
    else:
        head = f"exited with status {code}"
    return head + (": " + " | ".join(tail) if tail else "")


def _run_worker(mode, job, timeout):
    """Runs ``python -m dlc.tune.worker <mode>`` on `job`; its JSON result,
    or a failure saying why (crash, timeout, no answer)."""
    start = time.time()
    try:
        done = subprocess.run([sys.executable, "-m", "dlc.tune.worker", mode],
                              input=pickle.dumps(job), capture_output=True,
                              timeout=timeout, env=_environment())
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"{mode} timed out after {timeout:g} s"}
    lines = done.stdout.decode(errors="replace").strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"ok": False, "error": f"{mode} " + _describe_exit(done.returncode, done.stderr)}
    try:
        result = json.loads(lines[-1])
    except json.JSONDecodeError:
        return {"ok": False, "error": f"{mode}: no result ({lines[-1][:200]})"}
    result.setdefault("wall_seconds", time.time() - start)
    return result


def build(job):
    """Compiles `job` ({"module": dl text with the candidate's strategy,
    "target": the task's #dl.target text, "timeout": seconds}) into a
    library; {"ok": True, "library": bytes, "seconds": compile seconds} or
    {"ok": False, "error": why}."""
    with tempfile.TemporaryDirectory(prefix="dlc-tune-build-") as folder:
        path = os.path.join(folder, "candidate.so")
        result = _run_worker("build", dict(job, path=path), job.get("timeout", 120))
        if result.get("ok"):
            with open(path, "rb") as library:
                result["library"] = library.read()
        return result


def measure(job, library):
    """Times the candidate `library` (bytes from :func:`build`) on this
    machine: `job` has "inputs" ([shape, dtype] per argument), "target_key"
    (the task's target), "repeats", "min_repeat_seconds", "flush_cache",
    "timeout". Returns {"ok", "seconds" (median per call), "runs"
    (per-call seconds of each repeat), "sample" (output values at fixed
    positions, to check against the heuristic's), "worker", "start",
    "end"} or {"ok": False, "error": why} ("wrong_target": True when this
    machine is not of the task's target)."""
    from . import tasks
    from ..target import Target

    here = tasks.target_key(Target.host())
    if job.get("target_key") and job["target_key"] != here:
        return {"ok": False, "wrong_target": True,
                "error": f"this machine ({socket.gethostname()}, target {here}) is not "
                         f"of the task's target {job['target_key']}"}
    with tempfile.TemporaryDirectory(prefix="dlc-tune-run-") as folder:
        path = os.path.join(folder, "candidate.so")
        with open(path, "wb") as out:
            out.write(library)
        start = time.time()
        result = _run_worker("measure", dict(job, path=path), job.get("timeout", 60))
        # The whole measurement, process start to end, for the overlap check.
        result["start"], result["end"] = start, time.time()
    result["worker"] = _worker_name()
    return result


def _worker_name():
    try:
        from distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return f"{socket.gethostname()}:{os.getpid()}"
