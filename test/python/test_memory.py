"""Allocation in compiled code (lib/Runtime/Memory.cpp): a failed allocation
becomes MemoryError, on the calling thread and inside parallel loops, and
large blocks are reused across calls without changing results."""

import ctypes
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dlc
from dlc import runtime


def test_a_temporary_larger_than_memory_raises_memory_error():
    # x[:, None] * y[None, :] of two 2^17-element vectors is a 64 GiB
    # temporary; this used to segfault (a store through malloc's NULL). The
    # address-space limit makes the failure certain on any machine.
    script = textwrap.dedent("""
        import resource, numpy as np, dlc
        f = dlc.jit(lambda x, y: dlc.sum(x[:, None] * y[None, :], axis=1))
        small = np.arange(4, dtype=np.float32)
        assert np.allclose(f(small, small), small * small.sum())
        big = np.ones(2 ** 17, np.float32)
        compiled = f.lower(big, big).compile()
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/statm") as statm:
            used = int(statm.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + (2 << 30), hard))
        try:
            compiled(big, big)
        except MemoryError as error:
            print("MemoryError:", error)
        # The function, and the process, go on working.
        assert np.allclose(f(small, small), small * small.sum())
        print("still works")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "could not allocate 68719476" in result.stdout, result.stdout
    assert "still works" in result.stdout


C_PROGRAM = r"""
#include <stdint.h>
#include <stddef.h>
void *_mlir_memref_to_llvm_alloc(size_t size);
void _mlir_memref_to_llvm_free(void *p);
void dlc_parallel_for(void (*body)(void *, int64_t, int64_t), void *ctx,
                      int64_t lb, int64_t ub, int64_t step, int64_t threads);
static void body(void *ctx, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    /* One iteration asks for an impossible block; the others a small one. */
    size_t size = i == *(int64_t *)ctx ? (size_t)1 << 62 : 64;
    void *p = _mlir_memref_to_llvm_alloc(size);
    ((volatile char *)p)[0] = 1;
    _mlir_memref_to_llvm_free(p);
  }
}
void entry(void **packed) {
  dlc_parallel_for(body, packed[0], 0, 64, 1, 2);
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
@pytest.mark.parametrize("failing", [0, 63, -1])
def test_a_failed_allocation_in_a_parallel_loop_reaches_the_caller(tmp_path, failing):
    # In the caller's chunk (0), in the worker's (63), or nowhere (-1): the
    # failure reaches dlc_call_guarded once both chunks have ended.
    lib = runtime._load_parallel_runtime()
    source = tmp_path / "body.c"
    source.write_text(C_PROGRAM)
    shared = tmp_path / "body.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", str(source), "-o", str(shared)],
                   check=True)
    program = ctypes.CDLL(str(shared))
    guarded = lib.dlc_call_guarded
    guarded.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    guarded.restype = ctypes.c_int64
    index = ctypes.c_int64(failing)
    packed = (ctypes.c_void_p * 1)(ctypes.addressof(index))
    entry = ctypes.cast(program.entry, ctypes.c_void_p)
    for _ in range(3):  # the guards are reset after each failure
        failed = guarded(entry, packed)
        assert failed == (0 if failing < 0 else 1 << 62)


def test_large_blocks_are_reused_across_calls_with_the_same_results():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 1024)).astype(np.float32)

    @dlc.jit
    def f(x):
        # Temporaries of 2 MiB: the arena is reused from call to call.
        y = dlc.exp(x) * 2.0
        return dlc.sum(y * y, axis=1) + dlc.sum(x, axis=1)

    expected = np.sum((np.exp(x) * 2) ** 2, axis=1) + np.sum(x, axis=1)
    first = f(x)
    for _ in range(5):
        np.testing.assert_allclose(f(x), first, rtol=0, atol=0)
    np.testing.assert_allclose(first, expected, rtol=1e-5)
    runtime.release_memory()
    np.testing.assert_allclose(f(x), first, rtol=0, atol=0)


def _allocators():
    """dlc's runtime allocation functions and plain libc malloc/free, typed."""
    lib = runtime._load_parallel_runtime()
    alloc, free = lib._mlir_memref_to_llvm_alloc, lib._mlir_memref_to_llvm_free
    alloc.argtypes, alloc.restype = [ctypes.c_size_t], ctypes.c_void_p
    free.argtypes, free.restype = [ctypes.c_void_p], None
    libc = ctypes.CDLL(None)
    libc.malloc.argtypes, libc.malloc.restype = [ctypes.c_size_t], ctypes.c_void_p
    libc.free.argtypes, libc.free.restype = [ctypes.c_void_p], None
    return alloc, free, libc


def test_a_freed_large_block_serves_the_next_allocation_of_its_size():
    alloc, free, libc = _allocators()
    runtime.release_memory()
    size = 6 << 20
    first = alloc(size)
    ctypes.memset(first, 1, size)  # usable, all of it
    free(first)                    # kept (>= 1 MiB), not unmapped
    # A block of the same size from plain malloc: had `first` been returned
    # to the system, this one would most likely take its address.
    blocker = libc.malloc(size)
    again = alloc(size - 4096)     # fits within 25%: the same block
    assert again == first and blocker != first
    libc.free(blocker)
    free(again)
    runtime.release_memory()       # frees it for good
    small = alloc(64)              # small blocks are plain malloc
    assert small
    free(small)


def test_a_freed_medium_block_serves_the_same_thread_again_and_at_most_eight_are_kept():
    alloc, free, libc = _allocators()
    runtime.release_memory()
    size = 192 << 10  # over glibc's first mmap threshold (128 KiB)
    first = alloc(size)
    ctypes.memset(first, 1, size)
    free(first)                    # kept by this thread, not freed
    # Plain malloc of the same size: had `first` gone back to malloc, this
    # one would most likely take its address.
    blocker = libc.malloc(size)
    again = alloc(size - 1024)     # fits within 25%: the same block
    assert again == first and blocker != first
    libc.free(blocker)
    smaller = alloc(size // 2)     # too small for it: not that block
    assert smaller != first
    free(smaller)
    free(again)
    # Nine blocks freed in a row: the oldest goes back to malloc, the
    # other eight come back in any order.
    blocks = [alloc(size) for _ in range(9)]
    for block in blocks:
        free(block)
    taken = {alloc(size) for _ in range(8)}
    assert taken <= set(blocks) and len(taken) == 8
    for block in taken:
        free(block)
    runtime.release_memory()


def _resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux's /proc")
def test_resident_memory_stays_flat_over_100k_calls():
    # Each call allocates its result and temporaries (small ones from the
    # allocator, large ones through dlc's cache); none may leak.
    @dlc.jit
    def f(x, y):
        return dlc.sum(dlc.softmax(x @ y + 1.0, axis=-1), axis=0)

    x = np.ones((8, 16), np.float32)
    y = np.ones((16, 8), np.float32)
    for _ in range(5000):  # warm up: caches, allocator pools
        f(x, y)
    before = _resident_bytes()
    for _ in range(100_000):
        f(x, y)
    grown = _resident_bytes() - before
    assert grown <= 1 << 20, f"resident memory grew by {grown / 2**20:.2f} MiB over 100k calls"


# -- memrefCopy (lib/Runtime/Copy.cpp) and what no longer gets loaded ---------

class _Unranked(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int64), ("descriptor", ctypes.c_void_p)]


def _descriptor(array):
    """MLIR's ranked descriptor of a numpy view: {allocated, aligned, offset,
    sizes, strides} (in elements, offset from the view's base)."""
    rank = array.ndim
    fields = (ctypes.c_int64 * (3 + 2 * rank))()
    base = array.base if array.base is not None else array
    fields[0] = fields[1] = base.ctypes.data
    fields[2] = (array.ctypes.data - base.ctypes.data) // array.itemsize
    for d in range(rank):
        fields[3 + d] = array.shape[d]
        fields[3 + rank + d] = array.strides[d] // array.itemsize
    return fields, _Unranked(rank, ctypes.addressof(fields))


@pytest.mark.parametrize("make", [
    lambda a, b: (a[1:5, 1::2, 1], b[:, :, 0]),         # strided source and destination
    lambda a, b: (a[:4, :3, :], b[:, :, :]),           # contiguous inner runs
    lambda a, b: (a[2:3, 1, 3], b[1, 1:2, 0]),         # one element
    lambda a, b: (a[:0, :3, 0], b[:0, :3, 0]),         # empty
], ids=["strided", "runs", "one", "empty"])
def test_memref_copy_copies_strided_views(make):
    lib = runtime._load_parallel_runtime()
    source_base = np.arange(6 * 7 * 5, dtype=np.float32).reshape(6, 7, 5)
    destination_base = np.full((4, 3, 5), -1.0, np.float32)
    source, destination = make(source_base, destination_base)
    want = destination_base.copy()
    make(source_base, want)[1][...] = source        # numpy's copy into the same view
    keep = [_descriptor(source), _descriptor(destination)]
    lib.memrefCopy(ctypes.c_int64(4), ctypes.byref(keep[0][1]), ctypes.byref(keep[1][1]))
    np.testing.assert_array_equal(destination_base, want)  # nothing else written


def test_a_library_with_its_own_llvm_loads_after_a_compile():
    # MLIR's runtime libraries link libLLVM.so; loaded with global visibility
    # (the ExecutionEngine did so), they put LLVM's symbols in the global
    # scope, and `import triton` (torch.compile, torch.onnx's dynamo
    # exporter) then segfaulted in libtriton's static initializers.
    pytest.importorskip("triton")
    script = textwrap.dedent("""
        import numpy as np, dlc
        f = dlc.jit(lambda x: x * 2 + 1)
        assert np.allclose(f(np.ones(4, np.float32)), 3)
        import triton
        print("imported")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300, env=dict(os.environ, DLC_CACHE_DIR="off"))
    assert result.returncode == 0 and "imported" in result.stdout, result.stderr[-2000:]


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the x86-64 bf16 return ABI")
def test_bf16_truncations_round_to_nearest_even():
    # lib/Runtime/BFloat16.cpp: what LLVM calls for fptrunc to bf16 on CPUs
    # without the instruction (MLIR's copy, in a library linking libLLVM, is
    # no longer loaded); compared with ml_dtypes' conversion
    from dlc.dtypes import BFLOAT16
    lib = runtime._load_parallel_runtime()
    for name, ctype, dtype in (("__truncsfbf2", ctypes.c_float, np.float32),
                               ("__truncdfbf2", ctypes.c_double, np.float64)):
        function = getattr(lib, name)
        function.argtypes, function.restype = [ctype], ctypes.c_float
        rng = np.random.default_rng(0)
        values = np.concatenate([
            rng.standard_normal(2000).astype(dtype) * dtype(1e3),
            np.array([0.0, -0.0, 1.0, 1.00390625, 1.01171875, 3.3895314e38, 3.4e38,
                      1e-40, -1e-45, np.inf, -np.inf], dtype),
            # halfway and just-off-halfway cases of the last bf16 bit
            (np.float32(1) + np.float32(2 ** -8) * np.arange(1, 16, 2, dtype=np.float32)
             ).astype(dtype)])

        def bits(v):
            return int(np.float32(function(v)).view(np.uint32)) & 0xFFFF
        got = np.array([bits(v) for v in values], np.uint16)
        want = values.astype(BFLOAT16).view(np.uint16)
        np.testing.assert_array_equal(got, want, err_msg=name)
        nan = bits(dtype("nan"))
        assert (nan & 0x7F80) == 0x7F80 and (nan & 0x0040), hex(nan)
    # just off the halfway point between 1 and 1 + 2^-7 in double: rounded
    # once, correctly (rounding through float first, as MLIR's copy and
    # ml_dtypes do, makes it a tie and rounds the first one down)
    assert bits(1 + 2 ** -8 + 2 ** -40) == 0x3F81
    assert bits(1 + 2 ** -8 - 2 ** -40) == 0x3F80
