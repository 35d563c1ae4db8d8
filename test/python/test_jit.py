"""dlc.jit: tracing, caching, stages, locations, the calling convention and
buffer ownership."""

import gc
import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import dlc

F32 = np.float32
DL_OPT = os.path.join(os.path.dirname(__file__), "..", "..", "build", "bin", "dl-opt")


def mlp(x, w1, b1, w2, b2):
    h = dlc.relu(x @ w1 + b1)
    return dlc.softmax(h @ w2 + b2, axis=-1)


def mlp_args(batch=4, rng=None):
    rng = rng or np.random.default_rng(0)
    return (rng.random((batch, 784), dtype=F32),
            (rng.standard_normal((784, 128)) * 0.05).astype(F32),
            rng.standard_normal(128).astype(F32) * 0.1,
            (rng.standard_normal((128, 10)) * 0.1).astype(F32),
            rng.standard_normal(10).astype(F32) * 0.1)


def test_traces_once_per_signature():
    calls = []

    @dlc.jit
    def f(x):
        calls.append(x.shape)
        return x * 2.0

    f(np.ones(3, F32))
    f(np.zeros(3, F32))
    assert calls == [(3,)] and f.cache_size() == 1
    f(np.ones(4, F32))
    f(np.ones(4, np.float64))
    assert calls == [(3,), (4,), (4,)] and f.cache_size() == 3


def test_traced_tensor_attributes():
    seen = {}

    @dlc.jit(dynamic_batch=True)
    def f(x):
        seen.update(shape=x.shape, dtype=x.dtype, ndim=x.ndim, repr=repr(x),
                    T=dlc.transpose(x.reshape(-1, 5, 1), (0, 2, 1)).shape)
        return x

    f(np.ones((2, 5), np.float64))
    assert seen == dict(shape=(None, 5), dtype=np.float64, ndim=2,
                        repr="Tensor(float64[?, 5])", T=(None, 1, 5))
    g = dlc.jit(lambda x: x.T)
    assert g(np.ones((2, 5), np.float64)).shape == (5, 2)


def test_every_stage_shows_its_ir():
    lowered = dlc.jit(mlp).lower(*mlp_args())
    assert dlc.STAGES == ("dl", "graph", "linalg", "bufferized", "affine", "vector", "llvm")
    expected = {
        "dl": ["dl.matmul", "dl.relu", "dl.softmax", "tensor<4x784xf32>"],
        "graph": ["dl.matmul"],
        "linalg": ["linalg.matmul", "linalg.reduce", "math.exp"],
        "bufferized": ["memref<4x784xf32>", "memref.alloc", "memref.dealloc"],
        "affine": ["affine.for", "affine.load"],
        "vector": ["affine.vector_load", f"vector<{dlc.Target.host().lanes(F32)}xf32>",
                   "vector.fma"],
        "llvm": ["llvm.func @dlc_mlp", "llvm.func @_mlir_ciface_dlc_mlp"],
    }
    unexpected = {"linalg": "= dl.", "bufferized": "tensor<", "affine": "linalg.",
                  "llvm": "memref."}
    for stage in dlc.STAGES:
        text = lowered.as_text(stage)
        assert f"dl.target = {dlc.Target.host()}" in text, stage
        for needle in expected[stage]:
            assert needle in text, (stage, needle)
        if stage in unexpected:
            assert unexpected[stage] not in text, stage


def test_ops_carry_the_users_file_and_line():
    def f(x, w):
        y = x @ w  # line A
        return dlc.exp(y)  # line B

    text = dlc.jit(f).lower(np.ones((2, 3), F32), np.ones((3, 4), F32)).as_text(
        "dl", debug_info=True)
    lines, first = inspect.getsourcelines(f)
    line_a = first + next(i for i, l in enumerate(lines) if "line A" in l)
    line_b = first + next(i for i, l in enumerate(lines) if "line B" in l)
    assert f'loc("{__file__}":{line_a}:' in text
    assert f'loc("{__file__}":{line_b}:' in text


def test_llvm_stage_is_reproducible_with_dl_opt(tmp_path):
    # With the source locations printed: the parallel regions are named after
    # the source lines of their loops.
    lowered = dlc.jit(mlp).lower(*mlp_args())
    source = tmp_path / "mlp.mlir"
    source.write_text(lowered.as_text("dl", debug_info=True))
    replayed = subprocess.run(
        [DL_OPT, str(source), "--pass-pipeline=builtin.module(dl-cpu-pipeline)"],
        check=True, capture_output=True, text=True).stdout
    assert replayed.strip() == lowered.as_text("llvm").strip()

    staged = tmp_path / "mlp.affine.mlir"
    staged.write_text(lowered.as_text("affine", debug_info=True))
    replayed = subprocess.run(
        [DL_OPT, str(staged), "--pass-pipeline=builtin.module(dl-cpu-pipeline{from=affine})"],
        check=True, capture_output=True, text=True).stdout
    assert replayed.strip() == lowered.as_text("llvm").strip()


def test_compile_then_call():
    args = mlp_args()
    compiled = dlc.jit(mlp).lower(*args).compile()
    assert compiled.compile_seconds > 0
    assert [s.name for s in compiled.arg_specs] == ["x", "w1", "b1", "w2", "b2"]
    np.testing.assert_allclose(compiled(*args), dlc.jit(mlp)(*args), rtol=1e-6)


def test_keyword_arguments_and_defaults():
    @dlc.jit
    def f(x, y, scale=2.0):
        return (x + y) * scale

    a, b = np.ones(3, F32), np.full(3, 2, F32)
    np.testing.assert_allclose(f(a, y=b), 6.0)
    np.testing.assert_allclose(f(a, b, scale=0.5), 1.5)


def test_var_and_keyword_only_parameters():
    @dlc.jit
    def f(x, *rest, scale, **named):
        total = x * scale
        for r in rest:
            total = total + r
        return total - named["offset"]

    a = np.ones(2, F32)
    np.testing.assert_allclose(f(a, a, a, scale=2.0, offset=a), 3.0)
    compiled = f.lower(a, a, scale=1.0, offset=a).compile()
    assert [s.name for s in compiled.arg_specs] == ["x", "rest[0]", "scale", "offset"]
    np.testing.assert_allclose(compiled(a, a, 1.0, a), 1.0)


def test_multiple_outputs_keep_their_structure():
    x = np.arange(6, dtype=F32).reshape(2, 3)
    as_tuple = dlc.jit(lambda x: (x * 2.0, dlc.sum(x)))(x)
    as_list = dlc.jit(lambda x: [x, x.T])(x)
    assert isinstance(as_tuple, tuple) and isinstance(as_list, list)
    np.testing.assert_array_equal(as_tuple[0], x * 2)
    assert as_tuple[1] == 15.0 and as_tuple[1].shape == ()
    np.testing.assert_array_equal(as_list[1], x.T)


def test_inputs_are_never_modified_nor_aliased():
    x = np.arange(12, dtype=F32).reshape(3, 4)
    before = x.copy()
    identity, reshaped, doubled = dlc.jit(lambda x: (x, x.reshape(4, 3), x * 2.0))(x)
    np.testing.assert_array_equal(x, before)
    for out in (identity, reshaped):
        assert not np.shares_memory(out, x)
    identity[0, 0] = 100.0
    assert x[0, 0] == 0.0
    np.testing.assert_array_equal(doubled, before * 2)


def test_repeated_results_do_not_share_memory():
    a, b = dlc.jit(lambda x: (x * 2.0, x * 2.0))(np.ones(4, F32))
    a[0] = 5.0
    assert b[0] == 2.0


def test_non_contiguous_and_readonly_inputs():
    base = np.arange(40, dtype=F32).reshape(5, 8)
    strided = base[::2, 1::3]
    f = dlc.jit(lambda x: x * 1.0)
    np.testing.assert_array_equal(f(strided), strided)
    np.testing.assert_array_equal(f(base.T), base.T)
    readonly = base.copy()
    readonly.setflags(write=False)
    np.testing.assert_array_equal(f(readonly), base)


def test_python_and_numpy_scalars_as_arguments():
    f = dlc.jit(lambda x, s: x * s)
    np.testing.assert_allclose(f(np.ones(2, F32), 3.0), 3.0)
    np.testing.assert_allclose(f(np.ones(2, F32), 4.0), 4.0)
    assert f.cache_size() == 2  # Python scalars are compile-time constants
    g = dlc.jit(lambda x, s: x * s)
    np.testing.assert_allclose(g(np.ones(2, F32), F32(3)), 3.0)
    np.testing.assert_allclose(g(np.ones(2, F32), F32(5)), 5.0)
    assert g.cache_size() == 1  # numpy scalars are 0-d arguments


def test_calling_a_jit_function_while_tracing_inlines_it():
    inner = dlc.jit(lambda x: x * 3.0)
    outer = dlc.jit(lambda x: inner(x) + 1.0)
    np.testing.assert_allclose(outer(np.ones(2, F32)), 4.0)
    assert "func.call" not in outer.lower(np.ones(2, F32)).as_text("dl")


def test_results_are_freed():
    """Results are malloc'ed by compiled code and freed by numpy's garbage
    collection; temporaries are freed by the compiled code. 200 calls of 8 MB
    each would leak 1.6 GB if either leaked."""
    f = dlc.jit(lambda x: dlc.softmax(x * 2.0, axis=-1), dynamic_batch=True)
    x = np.ones((2048, 1024), F32)
    f(x)

    def rss_mb():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    gc.collect()
    start = rss_mb()
    for _ in range(200):
        f(x)
    gc.collect()
    assert rss_mb() - start < 200


@pytest.mark.parametrize("vector_width,tile_size", [(None, 0), (0, 0), (16, 0), (8, 4)])
def test_compile_options(vector_width, tile_size):
    args = mlp_args(batch=3)
    f = dlc.jit(mlp, vector_width=vector_width, tile_size=tile_size)
    np.testing.assert_allclose(f(*args), dlc.jit(mlp)(*args), rtol=1e-5)
    # The matmuls become register-tiled micro-kernels of the target's vector
    # width (their bias and relu computed on the tiles); the elementwise
    # loops are vectorized by `vector_width` (None: the target's too) unless
    # tiled (intra-tile loops do not start at 0). An elementwise tail of its
    # own, wider than any vector, shows the latter.
    y = np.linspace(-1, 1, 3 * 128, dtype=np.float32).reshape(3, 128)
    g = dlc.jit(lambda y: dlc.tanh(dlc.exp(y) * 2.0 + y), vector_width=vector_width,
                tile_size=tile_size)
    np.testing.assert_allclose(g(y), np.tanh(np.exp(y) * 2 + y), rtol=1e-5, atol=1e-6)
    vector_text = f.lower(*args).as_text("vector") + g.lower(y).as_text("vector")
    lanes = dlc.Target.host().lanes(np.float32)
    assert ("vector<" in vector_text) == (vector_width != 0)
    if vector_width != 0:
        assert f"vector<{lanes}xf32>" in vector_text
    if vector_width:
        assert (f"vector<{vector_width}xf32>" in vector_text) == (tile_size == 0) \
            or vector_width == lanes


# -- threads ------------------------------------------------------------------


@pytest.fixture
def restore_threads():
    saved = dlc.get_num_threads()
    yield
    dlc.set_num_threads(saved)


def test_parallel_loops_run_on_any_thread_count(restore_threads):
    """The outer parallel loops split into as many chunks as threads; each
    output element is computed by the same operations in the same order
    whatever the split, so every thread count gives bitwise the same result."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((67, 129), dtype=F32)
    b = rng.standard_normal((129, 45), dtype=F32)
    c = rng.standard_normal((67, 45), dtype=F32)
    f = dlc.jit(lambda a, b, c: dlc.relu(a @ b + c) * 2.0 + dlc.exp(c), parallel_min_work=0)
    assert "affine.parallel" in f.lower(a, b, c).as_text("vector")
    dlc.set_num_threads(1)
    serial = f(a, b, c)
    expected = np.maximum(a.astype(np.float64) @ b + c, 0) * 2 + np.exp(c.astype(np.float64))
    np.testing.assert_allclose(serial, expected, rtol=1e-5, atol=1e-5)
    for threads in (2, 3, 8, 200):
        dlc.set_num_threads(threads)
        np.testing.assert_array_equal(f(a, b, c), serial)


def test_dynamic_batch_parallel_any_size(restore_threads):
    f = dlc.jit(lambda x, w: dlc.tanh(x @ w), dynamic_batch=("x",), parallel_min_work=0)
    w = np.random.default_rng(1).standard_normal((96, 80), dtype=F32)
    for threads in (1, 2, 5):
        dlc.set_num_threads(threads)
        for batch in (1, 2, 7, 8, 9, 33, 200):
            x = np.random.default_rng(batch).standard_normal((batch, 96), dtype=F32)
            np.testing.assert_allclose(f(x, w), np.tanh(x.astype(np.float64) @ w),
                                       rtol=1e-5, atol=1e-5)
    assert f.cache_size() == 1


def test_parallel_min_work_decides_which_nests_run_on_threads():
    """A 64x64 elementwise nest: sequential by default (too little work to
    pay for a fork/join), on threads with a lower threshold; bad values are
    refused."""
    a = np.ones((64, 64), F32)
    assert "affine.parallel" not in dlc.jit(lambda a: a * 2.0).lower(a).as_text("vector")
    low = dlc.jit(lambda a: a * 2.0, parallel_min_work=100)
    assert "affine.parallel" in low.lower(a).as_text("vector")
    np.testing.assert_array_equal(low(a), a * 2)
    for bad in (-1, 1.5, "10", True):
        with pytest.raises(ValueError, match="parallel_min_work must be None or a non-negative"):
            dlc.jit(lambda a: a, parallel_min_work=bad)


def test_parallel_false_compiles_sequential_code():
    a = np.ones((2048, 1024), F32)
    f = dlc.jit(lambda a: a * 2.0 + 1.0, parallel=False)
    g = dlc.jit(lambda a: a * 2.0 + 1.0)
    assert "affine.parallel" not in f.lower(a).as_text("vector")
    assert "affine.parallel" in g.lower(a).as_text("vector")
    assert "dlc_parallel_for" not in f.lower(a).as_text("llvm")
    assert "dlc_parallel_for" in g.lower(a).as_text("llvm")
    np.testing.assert_array_equal(f(a), g(a))


def test_set_num_threads_rejects_bad_counts(restore_threads):
    for bad in (0, -1, 1.5, "2", True, None):
        with pytest.raises(ValueError, match="positive integer"):
            dlc.set_num_threads(bad)
    dlc.set_num_threads(np.int64(3))
    assert dlc.get_num_threads() == 3


def test_num_threads_from_environment():
    code = "import dlc; print(dlc.get_num_threads())"
    env = dict(os.environ, DLC_NUM_THREADS="3")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "3"
    env["DLC_NUM_THREADS"] = "many"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True)
    assert out.returncode != 0 and "DLC_NUM_THREADS must be a positive integer" in out.stderr
    env.pop("DLC_NUM_THREADS")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    assert int(out.stdout) == len(os.sched_getaffinity(0))


def test_parallel_functions_outlive_each_other(restore_threads):
    """Every compiled module shares dlc's thread pool (libdlc_runtime);
    deleting one (its ExecutionEngine) must not tear the pool down under the
    others."""
    dlc.set_num_threads(2)
    a = np.ones((512, 512), F32)
    keep = dlc.jit(lambda a: a + 1.0)
    keep(a)
    for scale in range(5):
        temporary = dlc.jit(lambda a, s=float(scale): a * s)
        np.testing.assert_array_equal(temporary(a), a * scale)
        del temporary
        gc.collect()
    np.testing.assert_array_equal(keep(a), a + 1.0)


def test_engines_freed_right_after_parallel_calls_survive():
    """Freeing a compiled function right after a multithreaded call is safe:
    dlc_parallel_for returns only once every worker has left the module's
    code."""
    x = np.random.default_rng(0).random((256, 512), dtype=np.float32)
    for i in range(20):
        compiled = dlc.jit(lambda a: dlc.exp(a) * 2.0,
                           parallel_min_work=0).lower(x).compile()
        np.testing.assert_allclose(compiled(x), np.exp(x) * 2.0, rtol=1e-6)
        del compiled
        gc.collect()


def test_argument_shapes_alternating_between_calls():
    """The runtime keeps the last call's shapes in its descriptors and
    refills them only on change: alternating batch sizes must see each."""
    f = dlc.jit(lambda x: dlc.sum(x * 2.0, axis=1), dynamic_batch=True)
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((b, 7)).astype(np.float32) for b in (3, 1, 3, 8, 1)]
    for x in inputs + inputs[::-1]:
        np.testing.assert_allclose(f(x), (x * 2.0).sum(axis=1), rtol=1e-5, atol=1e-6)
    assert f.cache_size() == 1


def test_fast_argument_path_and_its_fallbacks():
    """Arguments matching the compiled signature exactly take a short check;
    Fortran-ordered arguments take the full one (and are copied), read-only
    and empty ones work too (their buffers go to call_packed like any), and
    wrong ones still raise."""
    f = dlc.jit(lambda a, b: a * 2.0 + b)
    a = np.arange(12, dtype=F32).reshape(3, 4)
    b = np.ones((3, 4), F32)
    np.testing.assert_array_equal(f(a, b), a * 2 + 1)
    frozen = a.copy()
    frozen.setflags(write=False)
    np.testing.assert_array_equal(f(frozen, b), a * 2 + 1)
    np.testing.assert_array_equal(f(np.asfortranarray(a), b), a * 2 + 1)
    compiled = f.lower(a, b).compile()
    np.testing.assert_array_equal(compiled(frozen, b), a * 2 + 1)
    with pytest.raises(dlc.DTypeError, match="argument 'a'"):
        compiled(a.astype(np.float64), b)
    with pytest.raises(dlc.ShapeError, match="argument 'b'"):
        compiled(a, b[:2])
    empty = dlc.jit(lambda a: a + 1.0)
    assert empty(np.zeros((0, 4), F32)).shape == (0, 4)


def test_call_packed_fills_descriptors_or_declines():
    """The C++ call path fills each memref descriptor (allocated, aligned,
    offset, sizes, strides in elements) from the buffer protocol and calls
    the entry with the packed pointer (through libdlc_runtime's guard); an
    argument with no buffer, or of another rank, makes it decline without
    calling."""
    import ctypes
    from dlc import runtime
    if runtime._call_packed is None:
        pytest.skip("dlc's extension has no call_packed")
    calls = []
    entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda packed: calls.append(packed))
    entry_address = ctypes.cast(entry, ctypes.c_void_p).value
    invoke = runtime._guarded_call_address()
    descriptor = (ctypes.c_int64 * 7)()
    a = np.zeros((2, 3), F32)[:, ::1]
    addresses = runtime._call_packed(invoke, entry_address, 1234,
                                     [ctypes.addressof(descriptor)], [2], [a])
    assert addresses == [a.ctypes.data] and calls == [1234]
    assert list(descriptor) == [a.ctypes.data, a.ctypes.data, 0, 2, 3, 3, 1]
    for bad, rank in (([1.0, 2.0], 1), (a, 3)):
        assert runtime._call_packed(invoke, entry_address, 1, [ctypes.addressof(descriptor)],
                                    [rank], [bad]) is None
    assert calls == [1234]
    with pytest.raises(ValueError, match="differ in length"):
        runtime._call_packed(invoke, entry_address, 1, [0, 0], [2], [a])
    import ml_dtypes  # bfloat16 arrays export a buffer without a format: fine
    f = dlc.jit(lambda a: a * 2.0)
    x = (np.arange(6, dtype=F32).reshape(2, 3) / 4).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(f(x).astype(F32), x.astype(F32) * 2)


# -- options as objects ---------------------------------------------------------


def test_compile_options_objects_and_keywords_agree():
    """dlc.CompileOptions carries what a compilation depends on; dlc.jit's
    keywords set its fields on top of `options`."""
    options = dlc.CompileOptions(cpu=dlc.CPUOptions(vector_width=8, parallel=False),
                                 disable={"dl-simplify"})
    args = mlp_args(batch=2)
    by_object = dlc.jit(mlp, options=options)
    by_keywords = dlc.jit(mlp, vector_width=8, parallel=False, disable="dl-simplify")
    assert by_object._options == by_keywords._options
    np.testing.assert_allclose(by_object(*args), dlc.jit(mlp)(*args), rtol=1e-5)
    # A keyword wins over the object's field; the rest of the object stays.
    mixed = dlc.jit(mlp, options=options, vector_width=4)
    assert mixed._options.cpu == dlc.CPUOptions(vector_width=4, parallel=False)
    assert mixed._options.disable == {"dl-simplify"}
    # (the MLP's only nests left for the vectorizer were the fills of its
    # GEMM outputs, which the micro-kernels now start from in registers)
    exp = dlc.jit(lambda x: dlc.ops.exp(x), options=options, vector_width=4)
    assert "vector<4xf32>" in exp.lower(np.ones((2, 64), np.float32)).as_text("vector")


def test_unknown_options_are_named():
    with pytest.raises(TypeError, match="unknown option\\(s\\) vectorwidth; the options "
                                        "are: vector_width, tile_size"):
        dlc.jit(mlp, vectorwidth=8)
    with pytest.raises(ValueError, match="vector_width must be None or a non-negative integer"):
        dlc.CPUOptions(vector_width=-2)
    with pytest.raises(TypeError, match="options must be a dlc.CompileOptions"):
        dlc.jit(mlp, options={"vector_width": 8})


def test_stage_and_chip_names_come_from_the_pipelines():
    """dlc.STAGES, dlc.GPU_STAGES and dlc.CHIPS are the C++ pipelines' own
    lists (dl::cpuStages, gpuStages, gpuChips), each with a description."""
    assert dlc.STAGES == ("dl", "graph", "linalg", "bufferized", "affine", "vector", "llvm")
    assert dlc.GPU_STAGES == ("dl", "graph", "linalg", "bufferized", "gpu", "binary",
                              "emulated")
    assert "sm_90" in dlc.CHIPS and "sm_80" in dlc.CHIPS
    assert set(dlc.STAGE_DESCRIPTIONS) == set(dlc.STAGES) | set(dlc.GPU_STAGES)


# -- reproducers ------------------------------------------------------------------


def test_a_failed_compile_says_how_to_reproduce_it(tmp_path, monkeypatch):
    """A lowering that fails names the error, writes the IR it started from
    to a file, and gives the dl-opt command that replays the failure."""
    import subprocess
    from dlc import compiler
    from dlc.mlir import ir
    from dlc.tracing import context
    monkeypatch.setenv("DLC_REPRO_DIR", str(tmp_path))
    # A launch of dlc's thread pool whose body does not exist: refused by
    # dl-lower-parallel-launch in the llvm stage.
    text = """
    llvm.func @missing_launch(i64, i64, i64, i64) attributes {dl.parallel_launch = @missing}
    """
    module = ir.Module.parse(text, context=context())
    with pytest.raises(dlc.CompileError) as failure:
        compiler.run_stages(module, "vector", "llvm", dlc.CompileOptions(), "f")
    message = str(failure.value)
    assert "lowering from stage 'vector' to 'llvm' failed" in message
    assert "the parallel body @missing of this launch is not an llvm.func" in message
    saved = list(tmp_path.glob("dlc-f-vector-*.mlir"))
    assert len(saved) == 1 and f"the IR at stage 'vector' is in {saved[0]}" in message
    command = message.splitlines()[-1].strip()
    assert command.startswith(_build_config_dl_opt())
    replay = subprocess.run(command, shell=True, capture_output=True, text=True)
    assert replay.returncode != 0 and "the parallel body @missing" in replay.stderr


def test_reproducers_of_the_graph_stage_use_dlc_opt(tmp_path):
    """The graph stage runs Python passes: its reproducer runs them with
    ``python -m dlc.opt``, which replays the whole slice."""
    import subprocess
    import sys
    from dlc import compiler
    lowered = dlc.jit(mlp).lower(*mlp_args(batch=2))
    path = tmp_path / "input.mlir"
    path.write_text(lowered.as_text("dl"))
    command = compiler.reproducer_command(str(path), "dl", "linalg", lowered.options)
    assert command.startswith("python -m dlc.opt ")
    replay = subprocess.run(sys.executable + command[len("python"):], shell=True,
                            capture_output=True, text=True)
    assert replay.returncode == 0, replay.stderr
    assert "linalg.matmul" in replay.stdout and "dl.target" in replay.stdout


def _build_config_dl_opt():
    from dlc import _build_config
    return _build_config.DL_OPT


def test_compiled_signatures_are_bounded_and_clearable(monkeypatch):
    """Each jit function keeps at most DLC_JIT_CACHE_SIZE signatures (least
    recently used evicted first); clear_cache() forgets them all."""
    monkeypatch.setenv("DLC_JIT_CACHE_SIZE", "2")
    f = dlc.jit(lambda a: a + 1.0)
    arrays = [np.ones(n, F32) for n in (1, 2, 3)]
    for a in arrays:
        np.testing.assert_array_equal(f(a), a + 1)
    assert f.cache_size() == 2
    f(arrays[1])                # the 2-element one becomes the most recent
    f(np.ones(4, F32))          # evicts the 3-element one
    assert f.cache_size() == 2
    keys = [spec[0][0].shape for spec in f._cache]
    assert keys == [(2,), (4,)], keys
    assert all(v[0] in f._cache.values() for v in f._fast_cache.values())
    np.testing.assert_array_equal(f(arrays[2]), arrays[2] + 1)  # compiles again
    dlc.clear_cache()
    assert f.cache_size() == 0 and not f._fast_cache
    np.testing.assert_array_equal(f(arrays[0]), arrays[0] + 1)
    monkeypatch.setenv("DLC_JIT_CACHE_SIZE", "0")
    with pytest.raises(ValueError, match="DLC_JIT_CACHE_SIZE"):
        f(np.ones(5, F32))


def test_large_functions_are_cut_into_parts_with_the_same_results():
    """dl-split-function: with max_function_ops small, a network's function
    becomes calls of private parts (LLVM's time stays linear in the program);
    the results are bit-identical to the uncut function's, threads included."""
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((8, 8, 3, 3)).astype(np.float32)
    lin = rng.standard_normal((8, 10)).astype(np.float32)

    def net(x):
        y = dlc.relu(dlc.conv2d(x, w1, padding=1))
        y = dlc.relu(dlc.conv2d(y, w2, padding=1)) + y
        y = dlc.mean(y, axis=(2, 3))
        return dlc.log_softmax(y @ lin, axis=-1), y

    x = rng.standard_normal((4, 3, 16, 16)).astype(np.float32)
    whole = dlc.jit(net, max_function_ops=0, early_split_ops=0)
    cut = dlc.jit(net, max_function_ops=10)
    assert "_part_" not in whole.lower(x).as_text("llvm")
    llvm = cut.lower(x).as_text("llvm")
    assert llvm.count('passthrough = ["noinline"]') >= 3
    for got, want in zip(cut(x), whole(x)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="max_function_ops must be"):
        dlc.jit(net, max_function_ops=-1)


def test_functions_cut_before_the_affine_stage_keep_their_kernels():
    """dl-split-function{early}: with early_split_ops small, the function is
    cut into parts before the affine passes (which then run on the
    compiler's threads); each part takes the arena as a fresh buffer, so
    the convolutions are register-tiled with their epilogues as in one
    function, and the results are bit-identical to the uncut function's."""
    rng = np.random.default_rng(1)
    w1 = rng.standard_normal((16, 3, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    w3 = rng.standard_normal((16, 16, 1, 1)).astype(np.float32)
    lin = rng.standard_normal((16, 10)).astype(np.float32)

    def net(x):
        y = dlc.relu(dlc.conv2d(x, w1, padding=1))
        y = dlc.relu(dlc.conv2d(y, w2, padding=1)) + y
        y = dlc.relu(dlc.conv2d(y, w3))
        return dlc.mean(y, axis=(2, 3)) @ lin

    x = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
    whole = dlc.jit(net, early_split_ops=0, max_function_ops=0)
    early = dlc.jit(net, early_split_ops=1, max_function_ops=0)
    affine = early.lower(x).as_text("affine")
    assert "_part_" not in whole.lower(x).as_text("affine")
    assert affine.count("dl.split_part") >= 3, affine[:2000]
    assert "dl.fresh_buffer" in affine
    fused = whole.lower(x).fused_epilogues()
    assert fused >= 3 and early.lower(x).fused_epilogues() == fused
    np.testing.assert_array_equal(early(x), whole(x))
    np.testing.assert_allclose(early(x), net_reference(x, w1, w2, w3, lin),
                               rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="early_split_ops must be"):
        dlc.jit(net, early_split_ops=-1)


def net_reference(x, w1, w2, w3, lin):
    import torch
    import torch.nn.functional as F
    t = torch.from_numpy
    y = F.relu(F.conv2d(t(x), t(w1), padding=1))
    y = F.relu(F.conv2d(y, t(w2), padding=1)) + y
    y = F.relu(F.conv2d(y, t(w3)))
    return (y.mean(dim=(2, 3)) @ t(lin)).numpy()


def test_donated_arguments_hold_the_results():
    """donate_argnums: a result of a donated argument's shape and dtype is
    written into that argument and returned as its array; in place where
    nothing reads the old value later, through a copy at the return where
    something does (the old sum), both right."""
    p = np.arange(6, dtype=np.float32)
    g = np.ones(6, np.float32)
    f = dlc.jit(lambda p, g: (p - 0.5 * g, dlc.sum(p)), donate_argnums=0)
    expected = (p - 0.5 * g, p.sum())
    new, total = f(p, g)
    assert new is p
    np.testing.assert_array_equal(p, expected[0])
    assert total == expected[1]
    # In place: the update's loop writes the argument (no copy back).
    in_place = dlc.jit(lambda p, g: p - 0.5 * g, donate_argnums=(0,))
    text = in_place.lower(p, g).as_text("bufferized")
    assert "outs(%arg0 : memref<6xf32>)" in text and "memref.copy" not in text
    assert in_place(p, g) is p
    np.testing.assert_array_equal(p, expected[0] - 0.5)
    # Swapped donated arguments: both written back from snapshots.
    a, b = np.zeros(3, np.float32), np.ones(3, np.float32)
    ra, rb = dlc.jit(lambda a, b: (b, a), donate_argnums=(0, 1))(a, b)
    assert ra is a and rb is b
    np.testing.assert_array_equal(a, 1)
    np.testing.assert_array_equal(b, 0)
    # A result of another shape or dtype, and the non-donated argument, are
    # untouched: new arrays.
    h = dlc.jit(lambda p: (p.astype(np.int32), p[:2] * 2.0), donate_argnums=0)
    p = np.arange(6, dtype=np.float32)
    ints, head = h(p)
    assert ints is not p and head is not p
    np.testing.assert_array_equal(p, np.arange(6))


def test_donated_arguments_that_cannot_be_written_are_copied():
    """The same array passed twice, a read-only array, a list: the donated
    argument is copied first, the result is right, the caller's data is
    left as it was."""
    add = dlc.jit(lambda a, b: a + b, donate_argnums=0)
    q = np.arange(3, dtype=np.float32)
    out = add(q, q)
    np.testing.assert_array_equal(out, [0, 2, 4])
    np.testing.assert_array_equal(q, [0, 1, 2])
    out = add(q, q[::-1].copy())
    assert out is q  # a different array: written in place
    frozen = np.arange(3, dtype=np.float32)
    frozen.flags.writeable = False
    out = add(frozen, np.ones(3, np.float32))
    assert out is not frozen and np.array_equal(frozen, [0, 1, 2])
    np.testing.assert_array_equal(add([1.0, 2.0, 3.0], np.ones(3)), [2, 3, 4])


def test_bad_donate_argnums_are_named():
    with pytest.raises(TypeError, match="donate_argnums entries must be argument positions"):
        dlc.jit(lambda a: a, donate_argnums=("a",))
    with pytest.raises(ValueError, match="position 2 is out of range for <lambda>"):
        dlc.jit(lambda a, b: a, donate_argnums=2)
    x = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="a compile-time constant"):
        dlc.jit(lambda a, n: a * n, donate_argnums=1)(x, 2)
    with pytest.raises(ValueError, match="batch dimension is dynamic"):
        dlc.jit(lambda a: a + 1.0, donate_argnums=0, dynamic_batch=True)(x)
    with pytest.raises(ValueError, match="export it without donate_argnums"):
        dlc.export(dlc.jit(lambda a: a + 1.0, donate_argnums=0), x, path="/tmp/never.so")


def test_large_constants_stay_out_of_the_compiled_code(monkeypatch):
    """Constants of 1 MiB or more are not compiled by LLVM: the code reads
    them through pointers to aligned numpy arrays (runtime's
    externalize_constants). The llvm stage still shows them; results, and
    constants returned as they are, unchanged."""
    monkeypatch.setenv("DLC_CACHE_DIR", "off")
    from dlc import runtime
    w = np.random.default_rng(3).standard_normal((600, 700)).astype(np.float32)
    small = np.arange(6, dtype=np.float32)
    f = dlc.jit(lambda a: (dlc.relu(a) @ w + small[:1], w))
    # 300 rows: more than dl-pack-weights packs for (a packed copy would be
    # a second weight beside the returned one)
    x = np.random.default_rng(4).standard_normal((300, 600)).astype(np.float32)
    lowered = f.lower(x)
    compiled = lowered.compile()
    weights = compiled._function.code.weights
    assert list(weights) == ["__dlc_weight_0"]
    (array,) = weights.values()
    assert array.nbytes >= runtime.EXTERNAL_CONSTANT_BYTES and array.ctypes.data % 64 == 0
    assert "__dlc_weight" not in lowered.as_text("llvm")
    product, same = compiled(x)
    np.testing.assert_allclose(product, np.maximum(x, 0).astype(np.float64) @ w + small[0],
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(same, w)
    same[...] = 0  # a copy: the weight the code reads is not changed
    np.testing.assert_array_equal(compiled(x)[1], w)


def test_tracing_and_compiling_pause_the_garbage_collector_and_restore_it():
    # Tracing a model makes thousands of acyclic objects; the cyclic
    # collector's full passes over a process holding a model cost more than
    # a compile from the disk cache. It is off while dlc traces and compiles,
    # back as it was after (off stays off), nested uses included.
    import gc
    from dlc.tracing import gc_paused
    seen = []

    def f(x):
        seen.append(gc.isenabled())
        return x * 2.0
    x = np.ones(4, np.float32)
    assert gc.isenabled()
    np.testing.assert_array_equal(dlc.jit(f)(x), x * 2)
    assert seen == [False] and gc.isenabled()
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        dlc.jit(lambda y: y + 1.0)(x)
        assert not gc.isenabled()
    finally:
        gc.enable()
