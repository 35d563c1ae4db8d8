"""dlc's thread pool (lib/Runtime/ParallelRuntime.cpp) called directly:
dlc_parallel_for(body, ctx, lb, ub, step, threads) must run every iteration
exactly once, in contiguous chunks, and return only when all have run."""

import ctypes
import os
import signal
import threading
import time

import numpy as np
import pytest

import dlc
from dlc import runtime

BODY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


@pytest.fixture(scope="module")
def lib():
    library = runtime._load_parallel_runtime()
    library.dlc_parallel_for.argtypes = [BODY, ctypes.c_void_p, ctypes.c_int64,
                                         ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
    library.dlc_parallel_for.restype = None
    library.dlc_runtime_num_threads.restype = ctypes.c_int64
    return library


def run(lib, lb, ub, step, threads, inner=None):
    chunks = []
    idents = set()
    lock = threading.Lock()

    def body(_ctx, begin, end):
        with lock:
            chunks.append((begin, end))
            idents.add(threading.get_ident())
        if inner is not None:
            inner()

    callback = BODY(body)
    lib.dlc_parallel_for(callback, None, lb, ub, step, threads)
    return sorted(chunks), idents


@pytest.mark.parametrize("lb,ub,step,threads", [
    (0, 100, 1, 2), (0, 100, 1, 1), (0, 100, 1, 0), (0, 100, 1, -3),
    (0, 7, 1, 16), (5, 1000, 7, 3), (-50, 50, 3, 4), (0, 1, 1, 8), (3, 4, 10, 2),
])
def test_every_iteration_once_in_contiguous_chunks(lib, lb, ub, step, threads):
    chunks, _ = run(lib, lb, ub, step, threads)
    iterations = [i for begin, end in chunks for i in range(begin, end, step)]
    assert iterations == list(range(lb, ub, step))
    wanted = threads if threads > 0 else lib.dlc_runtime_num_threads()
    assert len(chunks) == min(max(wanted, 1), len(range(lb, ub, step)))
    for (_, end), (begin, _) in zip(chunks, chunks[1:]):
        assert end == begin  # contiguous: each chunk starts where one ended


def test_empty_ranges_run_nothing(lib):
    assert run(lib, 10, 10, 1, 2)[0] == []
    assert run(lib, 10, 0, 1, 2)[0] == []


def test_nested_call_runs_serially_inside_a_chunk(lib):
    inner_chunks = []

    def inner():
        chunks, _ = run(lib, 0, 64, 1, 4)
        inner_chunks.append(chunks)

    outer, _ = run(lib, 0, 4, 1, 4, inner=inner)
    assert len(outer) == 4
    assert inner_chunks == [[(0, 64)]] * 4


def test_concurrent_callers_both_complete(lib):
    results = [None, None]

    def caller(slot):
        total = []
        for _ in range(50):
            chunks, _ = run(lib, 0, 1000, 1, 2)
            total.append([i for b, e in chunks for i in range(b, e)] == list(range(1000)))
        results[slot] = all(total)

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert results == [True, True]


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_chunks_run_on_worker_threads(lib):
    seen = set()
    for _ in range(20):
        # Each chunk sleeps (without the GIL): the caller cannot claim both
        # before the worker wakes.
        _, idents = run(lib, 0, 2, 1, 2, inner=lambda: time.sleep(0.005))
        seen |= idents
    assert len(seen) >= 2


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_gets_a_fresh_pool(lib):
    """The child of a fork has none of the parent's workers: its parallel
    loops must still run (on a pool of its own), not wait for them."""
    f = dlc.jit(lambda a: a * 2.0 + 1.0, parallel_min_work=0)
    a = np.arange(4096, dtype=np.float32).reshape(64, 64)
    assert len(run(lib, 0, 100, 1, 2)[0]) == 2  # the parent's pool exists
    # Compiled before the fork: the child must not compile (MLIR's own
    # thread pool has no threads in a forked child either).
    np.testing.assert_array_equal(f(a), a * 2 + 1)
    saved = dlc.get_num_threads()
    dlc.set_num_threads(2)
    try:
        pid = os.fork()
        if pid == 0:
            signal.alarm(60)  # a hang fails the test instead of blocking it
            try:
                ok = (bool(np.array_equal(f(a), a * 2 + 1))
                      and len(run(lib, 0, 100, 1, 2)[0]) == 2)
            except BaseException:
                ok = False
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
    finally:
        dlc.set_num_threads(saved)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_can_compile():
    """A child forked after its parent compiled compiles too (it used to hang
    in MLIR's thread pool, whose threads the child does not have: the child
    now traces into a context of its own)."""
    f = dlc.jit(lambda a: a * 2.0 + 1.0)
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    np.testing.assert_array_equal(f(a), a * 2 + 1)
    pid = os.fork()
    if pid == 0:
        signal.alarm(120)  # a hang fails the test instead of blocking it
        try:
            g = dlc.jit(lambda a: dlc.tanh(a) - 3.0)
            ok = (bool(np.allclose(g(a), np.tanh(a) - 3, atol=1e-6))
                  and bool(np.array_equal(f(a), a * 2 + 1))
                  and bool(np.array_equal(f(a[:4]), a[:4] * 2 + 1)))
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    np.testing.assert_array_equal(f(a), a * 2 + 1)  # the parent goes on
