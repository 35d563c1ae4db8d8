"""LLVM code generation in parallel parts (runtime.compile_library,
lib/CAPI/ObjectCode.cpp): a large module is split at function boundaries,
each part optimized and compiled on its own thread, and the parts linked
into one library, which runs what the ExecutionEngine's code runs, is what
the disk cache stores, and carries the profiler's region table."""

import os
import subprocess

import numpy as np
import pytest

import dlc
from dlc import cache, compiler, runtime
from dlc.mlir import ir
from dlc.mlir._mlir_libs import _site_initialize_0 as capi

RNG = np.random.default_rng(7)
# Constants of each kind the split handles: W1 (24 KB: externalized where
# a test lowers the threshold, else defined beside the function reading it),
# W2 (3.8 KB) and B1 (copied into each part).
W1 = (RNG.standard_normal((64, 96)) / 8).astype(np.float32)
W2 = (RNG.standard_normal((96, 10)) / 10).astype(np.float32)
B1 = RNG.standard_normal(96).astype(np.float32)


def model(x):
    h = dlc.relu(x @ W1 + B1)
    h = h - dlc.mean(h, axis=-1, keepdims=True)
    return dlc.softmax(h @ W2, axis=-1)


def reference(x):
    h = np.maximum(x @ W1 + B1, 0)
    h = h - h.mean(axis=-1, keepdims=True)
    z = h @ W2
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


X = RNG.standard_normal((48, 64)).astype(np.float32)


@pytest.fixture
def every_module_in_parts(monkeypatch):
    """Every module compiled by compile_library, on two threads."""
    monkeypatch.setattr(runtime, "PARALLEL_CODEGEN_MIN_OPERATIONS", 0)
    monkeypatch.setenv("DLC_COMPILE_THREADS", "2")
    monkeypatch.setenv("DLC_CACHE_DIR", "off")


def test_a_large_module_becomes_a_library_with_the_same_results(every_module_in_parts,
                                                                 monkeypatch):
    compiled = dlc.jit(model).lower(X).compile()
    assert isinstance(compiled._function.code, runtime.LibraryCode)
    got = compiled(X)
    np.testing.assert_allclose(got, reference(X), rtol=1e-5, atol=1e-6)
    # The same module JIT-compiled on one thread: the same numbers.
    monkeypatch.setenv("DLC_COMPILE_THREADS", "1")
    jit = dlc.jit(model).lower(X).compile()
    assert isinstance(jit._function.code, runtime.JITCode)
    np.testing.assert_allclose(got, jit(X), rtol=1e-6, atol=1e-7)
    assert compiled.phase_seconds["llvm"] > 0


def test_small_modules_are_jit_compiled(monkeypatch):
    monkeypatch.setenv("DLC_CACHE_DIR", "off")
    monkeypatch.setenv("DLC_COMPILE_THREADS", "2")
    compiled = dlc.jit(lambda a: a + 1.0).lower(np.ones(4, np.float32)).compile()
    assert isinstance(compiled._function.code, runtime.JITCode)


def test_without_a_linker_the_jit_compiles(every_module_in_parts, monkeypatch):
    monkeypatch.setattr(cache, "_linker", lambda: None)
    compiled = dlc.jit(model).lower(X).compile()
    assert isinstance(compiled._function.code, runtime.JITCode)
    np.testing.assert_allclose(compiled(X), reference(X), rtol=1e-5, atol=1e-6)


def _llvm_module(fn, *args):
    lowered = dlc.jit(fn).lower(*args)
    return lowered, compiler.clone(lowered._module_at("llvm"))


def _exported(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def test_parts_link_and_only_the_module_s_own_symbols_are_exported(tmp_path):
    lowered, module = _llvm_module(model, X)
    weights = runtime.externalize_constants(module, min_bytes=1024)
    assert weights  # W1 (24 KB) is read through a pointer
    parts, translate, seconds = capi.compile_objects(module, 3, 4, 2, str(tmp_path))
    assert parts > 1 and translate >= 0 and seconds > 0
    objects = [str(tmp_path / f"part{i}.o") for i in range(parts)]
    assert all(os.path.getsize(o) > 0 for o in objects)
    library = str(tmp_path / "code.so")
    assert cache.link(objects, library)
    symbols = _exported(library)
    symbol = lowered.symbol
    # The entry points, the packed wrappers, the weight pointers and the
    # profiler's table are exported; the parallel bodies (internal functions
    # some of which other parts call) are not.
    assert {symbol, "_mlir_ciface_" + symbol, "_mlir_" + symbol, "dlc_num_threads",
            "dlc_parallel_regions", "dlc_parallel_region_count"} <= symbols
    assert set(weights) <= symbols
    assert not any(s.startswith(symbol + "_parallel_") for s in symbols)
    code = runtime.LibraryCode(library, weights)
    function = runtime.CompiledFunction(code, symbol, lowered._compiled_result_specs)
    np.testing.assert_allclose(function([X])[0], reference(X), rtol=1e-5, atol=1e-6)


def test_one_part_when_asked_for_one(tmp_path):
    _, module = _llvm_module(model, X)
    parts, _, _ = capi.compile_objects(module, 2, 1, 1, str(tmp_path))
    assert parts == 1 and (tmp_path / "part0.o").is_file()


def test_a_module_llvm_cannot_take_is_an_error(tmp_path):
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        module = ir.Module.parse('func.func @f() { "test.unknown"() : () -> () '
                                 'return }')
        with pytest.raises(RuntimeError, match="could not be translated to LLVM IR"):
            capi.compile_objects(module, 3, 2, 2, str(tmp_path))
    with pytest.raises(RuntimeError, match="optimization level"):
        capi.compile_objects(_llvm_module(model, X)[1], 7, 2, 2, str(tmp_path))


def test_bad_thread_count_is_named(monkeypatch):
    monkeypatch.setenv("DLC_COMPILE_THREADS", "zero")
    with pytest.raises(ValueError, match="DLC_COMPILE_THREADS"):
        runtime.compile_threads()


def _parts_into_a_cache(tmp_path, monkeypatch, min_seconds):
    """Every module compiled in parts, on two threads, into a cache of its
    own that stores compiles of `min_seconds` or more."""
    monkeypatch.setattr(runtime, "PARALLEL_CODEGEN_MIN_OPERATIONS", 0)
    monkeypatch.setenv("DLC_COMPILE_THREADS", "2")
    monkeypatch.setenv("DLC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DLC_CACHE_MIN_SECONDS", str(min_seconds))


def test_the_cache_stores_the_library_built_in_place(tmp_path, monkeypatch):
    _parts_into_a_cache(tmp_path, monkeypatch, 0)
    monkeypatch.setattr(runtime, "EXTERNAL_CONSTANT_BYTES", 1024)
    cold = dlc.jit(model).lower(X).compile()
    assert isinstance(cold._function.code, runtime.LibraryCode)
    entries = cache.entries()
    assert len(entries) == 1
    folder = entries[0][0]
    # Nothing of the build is left beside the entry: no objects, no
    # private folders.
    assert sorted(os.listdir(folder)) == sorted(
        ["code.so", "entry.json"] + [n + ".npy" for n in cold._function.code.weights])
    assert not [p for p in (tmp_path / "cache").glob("*/.*")]
    hit = dlc.jit(model).lower(X).compile()
    assert "cache" in hit.phase_seconds
    np.testing.assert_array_equal(hit(X), cold(X))


def test_below_the_minimum_time_nothing_is_stored(tmp_path, monkeypatch):
    _parts_into_a_cache(tmp_path, monkeypatch, 1000)
    compiled = dlc.jit(model).lower(X).compile()
    assert isinstance(compiled._function.code, runtime.LibraryCode)
    np.testing.assert_allclose(compiled(X), reference(X), rtol=1e-5, atol=1e-6)
    assert cache.entries() == []
    assert not [p for p in (tmp_path / "cache").glob("*/.*")]


def test_only_the_entry_gets_a_packed_wrapper(every_module_in_parts):
    # The functions dlc outlines (parallel bodies, loops, parts) are private
    # in the MLIR module: the library has no `_mlir_<f>` wrapper for them
    # (lib/CAPI/ObjectCode.cpp, addPackedWrappers), only for the entry. Cut
    # into parts: those keep external linkage (linked across LLVM's parts).
    import re
    lowered = dlc.jit(model, max_function_ops=10).lower(X)
    compiled = lowered.compile()
    code = compiled._function.code
    assert isinstance(code, runtime.LibraryCode)
    private = []
    for line in lowered.as_text("llvm").splitlines():
        found = re.match(r"\s*llvm\.func (internal )?@(\w+)\(", line)
        if found and (found.group(1) or 'sym_visibility = "private"' in line):
            private.append(found.group(2))
    assert any("_part_" in name for name in private)
    for name in private:
        assert not code.address("_mlir_" + name), name
    np.testing.assert_allclose(compiled(X), reference(X), rtol=1e-5, atol=1e-6)
    assert code.address("_mlir__mlir_ciface_" + lowered.symbol)


def test_the_profiler_reads_the_library_s_regions(every_module_in_parts):
    compiled = dlc.jit(model).lower(X).compile()
    assert isinstance(compiled._function.code, runtime.LibraryCode)
    profile = dlc.profile(compiled, X, calls=2, warmup=1)
    assert profile.regions
    assert all(r.launches > 0 for r in profile.regions)


# Compiles `model` through compile_library in a fresh process (LLVM options
# are read once per process); prints the result's sum.
OPTIONS_PROGRAM = """
import numpy as np, dlc
from dlc import runtime
runtime.PARALLEL_CODEGEN_MIN_OPERATIONS = 0
x = np.ones((8, 16), np.float32)
w = np.linspace(-1, 1, 16 * 24, dtype=np.float32).reshape(16, 24)
compiled = dlc.jit(lambda a: dlc.tanh(a @ w)).lower(x).compile()
print(type(compiled._function.code).__name__, float(compiled(x).sum()))
"""


def _run_with(env, program=OPTIONS_PROGRAM):
    import sys
    return subprocess.run([sys.executable, "-c", program], capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "DLC_CACHE_DIR": "off", **env})


def test_loop_strength_reduction_is_off_unless_asked_for():
    timed = {"DLC_COMPILE_THREADS": "2", "DLC_LLVM_TIME_PASSES": "1"}
    default = _run_with(timed)
    assert default.returncode == 0, default.stderr
    assert default.stdout.startswith("LibraryCode")
    assert "X86 DAG->DAG Instruction Selection" in default.stderr  # timed
    assert "Loop Strength Reduction" not in default.stderr
    asked = _run_with({**timed, "DLC_LLVM_OPTIONS": "-disable-lsr=false"})
    assert asked.returncode == 0, asked.stderr
    assert "Loop Strength Reduction" in asked.stderr
    assert asked.stdout == default.stdout


# A 7x7 convolution over 3 channels, a depthwise 3x3 one and a softmax over
# odd sizes: short constant loops (windows, remainders) LLVM would unroll.
UNROLL_PROGRAM = """
import numpy as np, torch, dlc
from dlc import runtime
runtime.PARALLEL_CODEGEN_MIN_OPERATIONS = 0
model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 7, stride=2, padding=3), torch.nn.ReLU(),
                            torch.nn.Conv2d(8, 8, 3, padding=1, groups=8),
                            torch.nn.Softmax(1)).eval()
x = np.linspace(-1, 1, 3 * 19 * 19, dtype=np.float32).reshape(1, 3, 19, 19)
compiled = dlc.from_torch(model, torch.from_numpy(x)).lower(x).compile()
expected = model(torch.from_numpy(x)).detach().numpy()
np.testing.assert_allclose(compiled(x), expected, rtol=1e-4, atol=1e-6)
print(type(compiled._function.code).__name__, float(compiled(x).sum()))
"""


def test_llvm_s_full_unrolling_is_capped_unless_asked_for():
    # LLVM's remarks name each loop it unrolls completely: fewer under dlc's
    # cap (lib/CAPI/ObjectCode.cpp, ScopedOption), LLVM's own count where
    # DLC_LLVM_OPTIONS sets the cap; the same code computed either way.
    remarks = {"DLC_COMPILE_THREADS": "2", "DLC_LLVM_OPTIONS": "-pass-remarks=loop-unroll"}
    default = _run_with(remarks, UNROLL_PROGRAM)
    assert default.returncode == 0, default.stderr
    assert default.stdout.startswith("LibraryCode")
    asked = _run_with({**remarks, "DLC_LLVM_OPTIONS": "-pass-remarks=loop-unroll "
                       "-unroll-full-max-count=4294967295"}, UNROLL_PROGRAM)
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout == default.stdout
    assert 0 < default.stderr.count("completely unrolled") < \
        asked.stderr.count("completely unrolled")


def test_llvm_options_llvm_does_not_take_are_named():
    bad = _run_with({"DLC_COMPILE_THREADS": "2", "DLC_LLVM_OPTIONS": "-no-such-option"})
    assert bad.returncode != 0
    assert "CompileError" in bad.stderr and "DLC_LLVM_OPTIONS='-no-such-option'" in bad.stderr
    assert "no-such-option" in bad.stderr.split("DLC_LLVM_OPTIONS=")[1]


@pytest.mark.parametrize("min_operations", [0, 10 ** 9], ids=["library", "jit"])
def test_the_whole_compile_counts_toward_the_cache_s_minimum(tmp_path, monkeypatch,
                                                            min_operations):
    # LLVM's part alone is under the minimum; tracing and the passes count
    # too (a compile from the cache saves them all).
    _parts_into_a_cache(tmp_path, monkeypatch, 100)
    monkeypatch.setattr(runtime, "PARALLEL_CODEGEN_MIN_OPERATIONS", min_operations)
    lowered = dlc.jit(model).lower(X)
    lowered.phase_seconds["trace"] = 150.0  # as if tracing had taken that long
    compiled = lowered.compile()
    kind = runtime.LibraryCode if min_operations == 0 else runtime.JITCode
    assert isinstance(compiled._function.code, kind)
    assert len(cache.entries()) == 1


def test_the_size_threshold_can_be_set(monkeypatch):
    monkeypatch.setenv("DLC_CACHE_DIR", "off")
    monkeypatch.setenv("DLC_COMPILE_THREADS", "2")
    monkeypatch.setenv("DLC_PARALLEL_CODEGEN_MIN_OPS", "0")
    compiled = dlc.jit(lambda a: a + 1.0).lower(np.ones(4, np.float32)).compile()
    assert isinstance(compiled._function.code, runtime.LibraryCode)
    np.testing.assert_array_equal(compiled(np.ones(4, np.float32)), np.full(4, 2, np.float32))
    monkeypatch.setenv("DLC_PARALLEL_CODEGEN_MIN_OPS", "many")
    with pytest.raises(ValueError, match="DLC_PARALLEL_CODEGEN_MIN_OPS"):
        dlc.jit(lambda a: a + 2.0).lower(np.ones(4, np.float32)).compile()


def test_a_library_is_unloaded_with_its_last_user(every_module_in_parts):
    import gc

    def mapped(path):
        with open("/proc/self/maps") as maps:
            return any(path in line for line in maps)

    compiled = dlc.jit(model).lower(X).compile()
    code = compiled._function.code
    assert isinstance(code, runtime.LibraryCode)
    path = code.path
    result = compiled(X)
    assert mapped(path)
    del compiled, code
    gc.collect()
    assert not mapped(path)
    np.testing.assert_allclose(result, reference(X), rtol=1e-5, atol=1e-6)


# One library file opened by several compiles in one process (a cache hit
# of the library the cold compile built in place, or two hits of one
# entry): the loader maps it once, so its weight pointers are shared. A
# second user's arrays bound over the first's and freed with it left the
# first reading unmapped memory (a segfault in `python -m dlc.bench
# --models`). Run in a process of its own: the failure is a crash.
SHARED_LIBRARY_PROGRAM = """
import gc, sys, numpy as np, dlc
from dlc import runtime
runtime.PARALLEL_CODEGEN_MIN_OPERATIONS = int(sys.argv[1])
runtime.EXTERNAL_CONSTANT_BYTES = 1024
rng = np.random.default_rng(3)
w1 = rng.standard_normal((64, 96)).astype(np.float32)
w2 = rng.standard_normal((96, 16)).astype(np.float32)
x = rng.standard_normal((8, 64)).astype(np.float32)
f = lambda a: dlc.tanh(a @ w1) @ w2
cold = dlc.jit(f).lower(x).compile()
first, second = [dlc.jit(f).lower(x).compile() for _ in range(2)]
assert "cache" in first.phase_seconds and "cache" in second.phase_seconds
want = cold(x)
kind = type(cold._function.code).__name__
del cold, second
gc.collect()
junk = [np.full(1 << 18, 7.0) for _ in range(64)]  # reuse what was freed
print(kind, bool(np.array_equal(first(x), want)))
"""


@pytest.mark.parametrize("min_operations", [0, 10 ** 9], ids=["library", "jit"])
def test_a_library_opened_twice_keeps_its_weights(tmp_path, min_operations):
    import sys
    process = subprocess.run(
        [sys.executable, "-c", SHARED_LIBRARY_PROGRAM, str(min_operations)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "DLC_CACHE_DIR": str(tmp_path / "cache"),
             "DLC_CACHE_MIN_SECONDS": "0", "DLC_COMPILE_THREADS": "2"})
    assert process.returncode == 0, process.stderr[-2000:]
    kind = "LibraryCode" if min_operations == 0 else "JITCode"
    assert process.stdout.split() == [kind, "True"]
