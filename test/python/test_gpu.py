"""The GPU path (target="cuda") on a machine without a GPU.

For every op of the operator table (test_ops_table.ALL_CASES), at its
first and last shapes: the GPU kernels dl-gpu-pipeline produces are run on
the CPU (emulate=True, i.e. dl-gpu-to-cpu: loops over blocks and threads)
and compared with numpy with the tolerances of the CPU tests, and their PTX
is checked (an .entry per kernel, the requested .target) and, where ptxas
is on PATH, assembled for sm_80 and sm_90. Execution on a CUDA device is
tested where one exists and skipped, with the reason, where not.
"""

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import dlc
from dlc import runtime
from conftest import run_on_fake_cuda
from test_ops_table import ALL_CASES, check, is_float, make_inputs, reference_of

PTXAS = shutil.which("ptxas")
CUDA_MISSING = runtime.cuda_status()


def gpu_cases():
    """The GPU registry: (case, shapes, id) for every op of the operator
    table at its first and last shapes (tools/gpu/prepare.py exports the
    same cases for a real GPU)."""
    for case in ALL_CASES:
        shapes = {tuple(case.shapes[0]), tuple(case.shapes[-1])}
        for s in sorted(shapes, key=repr):
            yield case, s, f"{case.name}-{s}"


def _params():
    for case, shapes, name in gpu_cases():
        yield pytest.param(case, shapes, id=name)


def gpu_inputs(case, shapes, dtype, rng):
    """The inputs of a GPU case: make_inputs', with float inputs of a cast to
    integers clipped to the integer's range (outside it, C leaves the result
    undefined)."""
    inputs = make_inputs(case, shapes, dtype, rng)
    if case.name.startswith("astype") and is_float(dtype) and case.result_dtype not in (
            np.bool_, "bool") and not is_float(case.result_dtype):
        info = np.iinfo(case.result_dtype)
        inputs = [np.clip(a.astype(np.float64), info.min, info.max).astype(dtype)
                  for a in inputs]
    return inputs


def random_placed(rng, shape, dtype, misaligned):
    """Normal random values of `shape`; with `misaligned`, in a view one
    element past an aligned start (so that kernels must take their
    element-by-element path, decided at run time)."""
    values = rng.standard_normal(shape).astype(dtype)
    if not misaligned:
        return values
    base = np.empty(values.size + 1, dtype)[1:]
    base[:] = values.ravel()
    return base.reshape(shape)


def _assemble(ptx, chip, tmp_path):
    """Splits as_text("ptx") into its modules and, where ptxas is on PATH,
    assembles each for `chip` (failing on any error); returns the modules."""
    modules = re.split(r"^// ---- gpu\.binary @\w+ ----$", ptx, flags=re.M)[1:]
    if PTXAS:
        for i, text in enumerate(modules):
            path = tmp_path / f"{chip}_{i}.ptx"
            path.write_text(text)
            result = subprocess.run([PTXAS, f"-arch={chip}", str(path), "-o", os.devnull],
                                    capture_output=True, text=True)
            assert result.returncode == 0, result.stderr
    return modules


@pytest.mark.parametrize("case,shapes", list(_params()))
def test_emulated_kernels_match_numpy(case, shapes, rng):
    dtype = case.dtypes[0]
    inputs = gpu_inputs(case, shapes, dtype, rng)
    f = dlc.jit(case.fn, target="cuda", emulate=True, block_size=32)
    check(case, inputs, dtype, f(*inputs))


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in ALL_CASES])
def test_ptx_of_every_op(case, rng, tmp_path):
    shapes = case.shapes[-1]
    inputs = gpu_inputs(case, shapes, case.dtypes[0], rng)
    for chip in ("sm_80", "sm_90"):
        lowered = dlc.jit(case.fn, target="cuda", chip=chip).lower(*inputs)
        ptx = lowered.as_text("ptx")
        kernels = ptx.count(".entry ")
        assert kernels == lowered.as_text("gpu").count("gpu.func @")
        assert ptx.count(f".target {chip}\n") == ptx.count(".version ")
        # Only an empty result (a slice 5:2) needs no kernel.
        results = reference_of(case, inputs)
        empty = any(np.asarray(r).size == 0 for r in
                    (results if isinstance(results, (list, tuple)) else [results]))
        assert kernels >= 1 or empty
        assert len(_assemble(ptx, chip, tmp_path)) == kernels
    # The host side translates to LLVM IR (ExecutionEngine creation): a
    # synchronous gpu.dealloc was left unlowered, so every function with a
    # temporary failed there, which no test without a GPU saw.
    runtime.JITCode(lowered._module_at("binary"), opt_level=0)


def test_emulation_with_a_dynamic_batch(rng):
    f = dlc.jit(lambda x, w: dlc.softmax(dlc.tanh(x @ w), axis=-1), target="cuda",
                emulate=True, dynamic_batch=(0,))
    w = rng.standard_normal((13, 7)).astype(np.float32)
    for batch in (1, 6):
        x = rng.standard_normal((batch, 13)).astype(np.float32)
        e = np.tanh(x.astype(np.float64) @ w)
        e = np.exp(e - e.max(-1, keepdims=True))
        np.testing.assert_allclose(f(x, w), e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    assert f.cache_size() == 1


def test_row_reductions_run_one_block_per_row(rng):
    """Layer norm, softmax and a whole-tensor sum reduce along contiguous
    rows: one block per output element whose threads stride along the row
    and combine in workgroup memory (dl-gpu-row-reductions), for a dynamic
    batch (0 rows included) and rows of any length; a channels-last pool
    reduces across the contiguous dimension and keeps one thread per output
    element (dl-gpu-parallel-outer puts n and c on the threads). Same
    results as numpy."""
    gamma = rng.standard_normal(300).astype(np.float32)

    def softmax64(y):
        e = np.exp(y - y.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    norm = dlc.jit(lambda x: dlc.softmax(dlc.layer_norm(x, gamma, None, axis=-1), axis=-1),
                   target="cuda", emulate=True, dynamic_batch=(0,))
    # the layer norm's mean and centred sums, softmax's max and sum: a tree
    # of 8 steps (256 threads) each
    assert norm.lower(np.zeros((1, 5, 300), np.float32)).as_text("gpu").count(
        "gpu.barrier") >= 4 * 9
    for batch in (2, 1, 0):
        x = rng.standard_normal((batch, 5, 300)).astype(np.float32)
        c = x.astype(np.float64) - x.mean(-1, keepdims=True)
        y = c / np.sqrt((c ** 2).mean(-1, keepdims=True) + 1e-5) * gamma
        np.testing.assert_allclose(norm(x), softmax64(y), rtol=1e-4, atol=1e-6)

    rows = dlc.jit(lambda x: (dlc.softmax(x, axis=-1), dlc.sum(x)), target="cuda",
                   emulate=True, dynamic={"x": {1: "row"}})
    for length in (33, 1, 300, 1000):
        x = rng.standard_normal((3, length)).astype(np.float32)
        soft, total = rows(x)
        np.testing.assert_allclose(soft, softmax64(x.astype(np.float64)), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(total, x.astype(np.float64).sum(), rtol=1e-5, atol=1e-4)

    pool = dlc.jit(lambda x: dlc.mean(x, axis=(1, 2)), target="cuda", emulate=True)
    x = rng.standard_normal((2, 7, 7, 64)).astype(np.float32)
    gpu = pool.lower(x).as_text("gpu")
    assert "gpu.barrier" not in gpu
    np.testing.assert_allclose(pool(x), x.astype(np.float64).mean((1, 2)), rtol=1e-5, atol=1e-6)


def test_emulated_unsigned_and_quantize_kernels(rng):
    """uint8 compares, max and casts, and a quantize/dequantize pair, as GPU
    kernels (emulated): the same numbers as the CPU's."""
    scale = np.float32(0.05)

    def f(img, x):
        q = dlc.quantize_linear(x, scale, np.uint8(128))
        return dlc.maximum(img, img[::-1]), img > 200, img.astype(np.float32) * 2.0, \
            q, dlc.dequantize_linear(q, scale, np.uint8(128))

    img = rng.integers(0, 256, (64, 33), dtype=np.uint8)
    x = rng.standard_normal((64, 33)).astype(np.float32) * 4
    got = dlc.jit(f, target="cuda", emulate=True, block_size=32)(img, x)
    want = dlc.jit(f)(img, x)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_emulated_mlp_with_graph_passes(rng):
    """A layer through fusion and memory planning, the threads of a block
    spread over several blocks (block size 16 < 37 columns)."""
    def mlp(x, w1, b1, w2):
        return dlc.relu(x @ w1 + b1) @ w2
    x = rng.standard_normal((5, 20)).astype(np.float32)
    w1 = rng.standard_normal((20, 37)).astype(np.float32)
    b1 = rng.standard_normal(37).astype(np.float32)
    w2 = rng.standard_normal((37, 3)).astype(np.float32)
    expected = np.maximum(x @ w1 + b1, 0) @ w2
    for block_size in (1, 16, 1024):
        f = dlc.jit(mlp, target="cuda", emulate=True, block_size=block_size)
        np.testing.assert_allclose(f(x, w1, b1, w2), expected, rtol=1e-4, atol=1e-4)


def test_gpu_stages(rng):
    x = rng.standard_normal((4, 9)).astype(np.float32)
    lowered = dlc.jit(lambda a: dlc.exp(a) + 1.0, target="cuda").lower(x)
    assert lowered.stages == dlc.GPU_STAGES
    gpu = lowered.as_text("gpu")
    assert "gpu.launch_func" in gpu and "gpu.thread_id" in gpu
    binary = lowered.as_text("binary")
    assert "gpu.binary" in binary
    # Buffers in device memory (dl-gpu-device-memory), not malloc'ed, not
    # managed (mgpuMemAlloc's last argument, host_shared, is false).
    assert "llvm.call @mgpuMemAlloc" in binary and "llvm.call @malloc" not in binary
    assert "llvm.mlir.constant(true) : i1" not in binary
    emulated = lowered.as_text("emulated")
    # No gpu op left (the profiler's region names may say test_gpu.py:<line>).
    assert not re.search(r"(?<![\w/])gpu\.", emulated) and "llvm.func" in emulated
    with pytest.raises(ValueError, match="unknown stage 'affine'"):
        lowered.as_text("affine")


def test_full_reductions_run_in_kernels(rng):
    """A reduction over every dimension (the sum of a whole tensor) is a
    kernel too: the host code touches no buffer (dl-gpu-check-mapped would
    refuse it), and the emulated kernel matches numpy."""
    x = rng.standard_normal((37, 5)).astype(np.float32)
    fns = [lambda a: dlc.sum(dlc.exp(a)), lambda a: dlc.max(a),
           lambda a: dlc.argmax(a), lambda a: dlc.mean(a * a)]
    refs = [np.exp(x.astype(np.float64)).sum(), x.max(), np.argmax(x), (x.astype(np.float64) ** 2).mean()]
    for fn, ref in zip(fns, refs):
        lowered = dlc.jit(fn, target="cuda").lower(x)
        host = lowered.as_text("gpu").split("gpu.module")[0]
        assert "memref.load" not in host and "scf.for" not in host
        got = dlc.jit(fn, target="cuda", emulate=True)(x)
        np.testing.assert_allclose(got, ref, rtol=1e-5)


_DRIVER_SCRIPT = """
import json, sys
import numpy as np
import dlc
W = np.linspace(-1, 1, 6 * 3, dtype=np.float32).reshape(6, 3)
f = dlc.jit(lambda x: (dlc.relu(x @ W), dlc.sum(x)), target="cuda")
x = np.ones((4, 6), np.float32)
lowered = f.lower(x)
binary = lowered.as_text("binary")
print(json.dumps({"launches": binary.count("gpu.launch_func"),
                  "modules": binary.count("gpu.binary @")}))
try:
    for _ in range(2):
        outs = f(x)
    print(json.dumps({"shapes": [list(o.shape) for o in outs],
                      "dtypes": [str(o.dtype) for o in outs]}))
except RuntimeError as error:
    print(json.dumps({"error": str(error)}))
"""


@pytest.mark.parametrize("fail", [False, True])
def test_cuda_function_with_a_stand_in_driver(fake_cuda, tmp_path, fail):
    """dlc.jit(target="cuda") called twice on a stand-in driver (fake_cuda.c:
    device memory the host cannot touch, kernels not run): the modules are
    loaded (the host code's global constructor runs), every kernel launched,
    the argument copied into device memory and the results out of it, the
    weight uploaded by the first call only and kept (dlc_cuda_resident),
    nothing in managed memory, everything else freed; a failed launch is a
    RuntimeError naming the call, and frees everything."""
    stdout, lines = run_on_fake_cuda(fake_cuda, _DRIVER_SCRIPT, tmp_path / "log.txt", fail)
    counts, result = [json.loads(line) for line in stdout.splitlines()[-2:]]
    starts = lambda word: [line for line in lines if line.startswith(word)]
    assert len(starts("load-ptx")) == counts["modules"] >= 2
    allocs = starts("alloc")
    assert allocs and len(allocs) == len(starts("free")) + 1  # W stays
    assert not [line for line in allocs if line.endswith(" 1")]  # managed
    weight, argument = f"h2d {6 * 3 * 4} 0", f"h2d {4 * 6 * 4} 0"
    assert not starts("copy ")  # the weight is not copied by the calls
    if fail:
        assert "cuLaunchKernel failed with CUDA_ERROR_LAUNCH_FAILED" in result["error"]
        assert len(starts("launch")) == 1 and not starts("d2h")
        assert sorted(starts("h2d")) == sorted([weight, argument])
    else:
        assert result == {"shapes": [[4, 3], []], "dtypes": ["float32", "float32"]}
        assert sorted(starts("h2d")) == sorted([weight, argument, argument])
        assert len(starts("launch")) == 2 * counts["launches"]
        # Launches chained on streams (gpu-async-region), not one stream each.
        assert len(set(starts("on-stream"))) < len(starts("launch"))
        assert starts("d2h") == [f"d2h {4 * 3 * 4} 0", "d2h 4 0"] * 2


_COPY_SCRIPT = """
import ctypes
import numpy as np
from dlc import runtime
shim = runtime.cuda_shim()
x = np.arange(5 * 7, dtype=np.float32).reshape(5, 7)
device = shim.to_device(x, "x")
address = device.__array_interface__["data"][0]
for offset, sizes, strides, expected in [
        (0, (5, 7), (7, 1), x), (8, (2, 3), (14, 2), x[1:5:2, 1:7:2]),
        (1, (4, 5), (0, 1), np.broadcast_to(x[0, 1:6], (4, 5))),
        (6, (), (), x.reshape(-1)[6])]:
    d = runtime.descriptor_type(len(sizes))()
    d.allocated = d.aligned = address
    d.offset = offset
    for i, (n, s) in enumerate(zip(sizes, strides)):
        d.sizes[i], d.strides[i] = n, s
    got = shim.to_host(d, len(sizes), np.dtype(np.float32), "view")
    assert got.shape == np.shape(expected) and np.array_equal(got, expected), (got, expected)
print("ok")
"""


def test_device_copies_of_strided_results(fake_cuda):
    """A result viewing device memory with an offset, strides, a broadcast
    (stride 0) or no dimension at all is copied back element for element;
    the host never reads the device buffer itself (the stand-in's device
    pages are not readable)."""
    run = subprocess.run([sys.executable, "-c", _COPY_SCRIPT], capture_output=True,
                         text=True, env=dict(os.environ, DLC_LIBCUDA=fake_cuda), timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr


def test_donated_arguments_on_the_gpu_path(rng):
    """donate_argnums with target="cuda": the update is written into the
    argument's buffer by a kernel (emulated here), and the caller's array
    holds it."""
    p = rng.standard_normal(37).astype(np.float32)
    g = rng.standard_normal(37).astype(np.float32)
    expected = p - 0.1 * g
    f = dlc.jit(lambda p, g: (p - 0.1 * g, dlc.sum(g)), target="cuda", emulate=True,
                donate_argnums=0)
    new, total = f(p, g)
    assert new is p
    np.testing.assert_allclose(p, expected, rtol=1e-6)
    np.testing.assert_allclose(total, g.sum(), rtol=1e-5)
    host = f.lower(p, g).as_text("gpu").split("gpu.module")[0]
    assert "-> memref<f32>" in host  # the update is no result


def test_ptx_needs_the_cuda_target(rng):
    lowered = dlc.jit(lambda a: a + 1.0).lower(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="target='cuda'"):
        lowered.as_text("ptx")


@pytest.mark.parametrize("kwargs,message", [
    (dict(target="tpu"), "unknown target 'tpu'; targets are: 'cpu', 'cuda', or a dlc.Target"),
    (dict(emulate=True), "emulate=True runs GPU kernels on the CPU: it needs target='cuda'"),
    (dict(target="cuda", chip="sm_99"), "unknown chip 'sm_99'"),
    (dict(target="cuda", block_size=0), "block_size must be an int in 1..1024, but got 0"),
    (dict(target="cuda", block_size=2048), "block_size must be an int in 1..1024"),
    (dict(target="cuda", matmul_tile=33), "matmul_tile must be an int in 1..32, but got 33"),
])
def test_bad_target_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        dlc.jit(lambda a: a, **kwargs)


@pytest.mark.skipif(CUDA_MISSING is None, reason="a CUDA device is present")
def test_cuda_without_a_gpu_says_so():
    f = dlc.jit(lambda a: a * 2.0, target="cuda")
    with pytest.raises(dlc.CUDAUnavailableError, match="emulate=True") as error:
        f(np.ones(4, np.float32))
    assert "needs an NVIDIA GPU" in str(error.value)
    assert isinstance(error.value, RuntimeError)


@pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no CUDA device: {CUDA_MISSING}")
def test_cuda_device_execution(rng):
    x = rng.standard_normal((64, 33)).astype(np.float32)
    f = dlc.jit(lambda a: dlc.relu(a) * 2.0, target="cuda")
    np.testing.assert_allclose(f(x), np.maximum(x, 0) * 2.0)


@pytest.mark.parametrize("shapes", [((37, 53), (53, 29)), ((1, 16), (16, 1)), ((33, 1), (1, 47)),
                                    ((4, 19, 21), (4, 21, 17))])
@pytest.mark.parametrize("tile", [16, 5])
def test_shared_memory_matmul_kernels(shapes, tile, rng):
    """Matmuls run as dl-gpu-shared-matmul kernels (tiles of A and B in
    workgroup memory between barriers), emulated block by block with the
    barriers honoured, at sizes no tile divides."""
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    b = rng.standard_normal(shapes[1]).astype(np.float32)
    f = dlc.jit(lambda x, y: x @ y, target="cuda", emulate=True, matmul_tile=tile)
    lowered = f.lower(a, b)
    gpu = lowered.as_text("gpu")
    assert f"memref<{tile}x{tile}xf32, #gpu.address_space<workgroup>>" in gpu
    assert gpu.count("gpu.barrier") == 2
    np.testing.assert_allclose(lowered.compile()(a, b), a.astype(np.float64) @ b,
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shapes", [((37, 52), (52, 28)), ((64, 64), (64, 48)),
                                    ((3, 20, 12), (3, 12, 8)), ((5, 4), (4, 4))])
@pytest.mark.parametrize("tile", [16, 8, 5])
@pytest.mark.parametrize("misaligned", [False, True])
def test_shared_memory_matmul_vector_staging(shapes, tile, misaligned, rng):
    """K and N multiples of 4 and tiles a multiple of 4: the tiles are staged
    by vector loads of 4 elements (element by element where 4 cross an edge:
    K = 52 is not a multiple of 16). A and B starting off a 16-byte boundary
    (views one float into a buffer) take the element path, decided at run
    time; tile 5 never vectorizes. Same results every way."""
    a, b = (random_placed(rng, shape, np.float32, misaligned) for shape in shapes)
    f = dlc.jit(lambda x, y: x @ y, target="cuda", emulate=True, matmul_tile=tile)
    lowered = f.lower(a, b)
    assert ("vector.load" in lowered.as_text("gpu")) == (tile % 4 == 0)
    np.testing.assert_allclose(lowered.compile()(a, b), a.astype(np.float64) @ b,
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shapes", [((130, 72), (72, 200)),      # tiles cut at every edge
                                    ((64, 2048), (2048, 64)),    # one tile: K split in 8
                                    ((70, 1000), (1000, 65)),    # K split, slices not whole
                                    ((2, 64, 777), (2, 777, 80)),  # batched and split
                                    ((257, 33), (33, 129))])     # K < one stage
@pytest.mark.parametrize("misaligned", [False, True])
def test_register_tiled_matmuls(shapes, misaligned, rng):
    """float32 matmuls with M and N of 64 or more run as the register-tiled
    kernel (128 x 128 per block, 8 x 8 per thread), K split into slices
    where C has too few tiles and the slices summed by a second kernel:
    emulated block by block, at sizes no tile divides, with A and B
    misaligned (the element-by-element staging) or not."""
    a, b = (random_placed(rng, shape, np.float32, misaligned) for shape in shapes)
    f = dlc.jit(lambda x, y: x @ y, target="cuda", emulate=True)
    lowered = f.lower(a, b)
    gpu = lowered.as_text("gpu")
    assert "memref<8x132xf32, #gpu.address_space<workgroup>>" in gpu
    assert gpu.count("gpu.launch_func") >= 2  # the tiles, then the sum of the slices
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(lowered.compile()(a, b), expected, rtol=1e-4, atol=1e-4)


def test_register_tiled_layer_with_a_dynamic_batch(rng):
    """The register-tiled kernel sizes its split at run time: one compiled
    layer serves batches of 1, 37 and 300 rows."""
    w = rng.standard_normal((600, 96)).astype(np.float32)
    f = dlc.jit(lambda x: dlc.relu(x @ w), target="cuda", emulate=True, dynamic_batch=True)
    for batch in (1, 37, 300):
        x = rng.standard_normal((batch, 600)).astype(np.float32)
        np.testing.assert_allclose(f(x), np.maximum(x.astype(np.float64) @ w, 0),
                                   rtol=1e-4, atol=1e-4)
    assert f.cache_size() == 1
    assert "8x132xf32" in f.lower(x).as_text("gpu")


@pytest.mark.skipif(CUDA_MISSING is None, reason="a CUDA device is present")
def test_gpu_benchmark_says_why_it_is_skipped(tmp_path, capsys):
    from dlc import bench
    section = bench.main(["--gpu-only", "--out", str(tmp_path)])
    assert section["skipped"].startswith("no CUDA device: ")
    assert "GPU section skipped: no CUDA device" in capsys.readouterr().out
    assert (tmp_path / "gpu-latest.json").exists()


def test_convolutions_reach_the_shared_memory_matmul(rng):
    """A dense convolution is lowered as im2col + GEMM (its dl.strategy), so
    on the GPU its GEMM is a shared-memory kernel too; the emulated result
    matches the CPU pipeline's."""
    x = rng.standard_normal((2, 16, 9, 7)).astype(np.float32)
    w = rng.standard_normal((24, 16, 3, 3)).astype(np.float32)
    conv = lambda a, b: dlc.conv2d(a, b, padding=1)  # noqa: E731
    gpu = dlc.jit(conv, target="cuda", emulate=True)
    assert "workgroup(" in gpu.lower(x, w).as_text("gpu")
    np.testing.assert_allclose(gpu(x, w), dlc.jit(conv)(x, w), rtol=1e-4, atol=1e-4)


def _half_matmul_reference(a, b):
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def _check_half_matmul(result, a, b, dtype):
    """The tensor-core result is the f32 sum rounded once to `dtype`: within
    one unit in the last place of `dtype` (plus the f32 sum's rounding)."""
    assert result.dtype == np.dtype(dtype)
    expected = _half_matmul_reference(a, b)
    scale = np.matmul(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
    eps = float(np.finfo(dtype).eps) if dtype is np.float16 else 2.0 ** -7
    error = np.abs(result.astype(np.float64) - expected)
    assert np.all(error <= eps * np.abs(expected) + 1e-5 * scale + 1e-30), error.max()


@pytest.mark.parametrize("dtype", [np.float16, dlc.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("shapes", [((37, 53), (53, 29)), ((64, 64), (64, 64)),
                                    ((1, 16), (16, 1)), ((130, 5), (5, 129)),
                                    ((3, 20, 33), (3, 33, 17)), ((70, 96), (96, 40)),
                                    ((2, 9, 48), (2, 48, 72))])
@pytest.mark.parametrize("misaligned", [False, True])
def test_tensor_core_matmuls(shapes, dtype, misaligned, rng):
    """float16/bfloat16 matmuls (f32 accumulation) run as tensor-core
    kernels (nvgpu.mma.sync m16n8k16, 4 warps per 64 x 64 tile): emulated
    warp by warp with the PTX fragment layout, at sizes no tile divides
    (K = 5 and 33 are not multiples of 16, M = 130 and N = 129 leave a
    partial block), batched too. Where K and N are multiples of 8 the tiles
    are staged by 16-byte vectors, unless A and B start off a 16-byte
    boundary (views one element into a buffer: decided at run time)."""
    a, b = (random_placed(rng, shape, dtype, misaligned) for shape in shapes)
    f = dlc.jit(lambda x, y: x @ y, target="cuda", emulate=True)
    lowered = f.lower(a, b)
    gpu = lowered.as_text("gpu")
    assert gpu.count("nvgpu.mma.sync") == 16
    assert "threads in (%c128, %c1, %c1)" in gpu
    # The vector staging is there unless K or N rules it out at compile time.
    k, n = shapes[1][-2:]
    assert ("vector<8x" in gpu) == (k % 8 == 0 and n % 8 == 0)
    _check_half_matmul(lowered.compile()(a, b), a, b, dtype)


@pytest.mark.parametrize("options", [dict(tensor_cores=False), dict(chip="sm_75")],
                         ids=["off", "sm_75"])
def test_tensor_cores_off_or_missing(options, rng):
    """tensor_cores=False, or a chip without mma.sync m16n8k16: the same
    matmul as plain kernels, same results."""
    a = rng.standard_normal((21, 40)).astype(np.float16)
    b = rng.standard_normal((40, 9)).astype(np.float16)
    f = dlc.jit(lambda x, y: x @ y, target="cuda", emulate=True, **options)
    lowered = f.lower(a, b)
    assert "nvgpu.mma.sync" not in lowered.as_text("gpu")
    _check_half_matmul(lowered.compile()(a, b), a, b, np.float16)


@pytest.mark.parametrize("dtype", [np.float16, dlc.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("shapes,misaligned", [(((130, 72), (72, 200)), False),
                                               (((64, 600), (600, 64)), True),
                                               (((2, 64, 40), (2, 40, 80)), False)])
def test_half_matmuls_without_tensor_cores_are_register_tiled(shapes, misaligned, dtype, rng):
    """Without tensor cores (off, or a chip before sm_80) large float16 and
    bfloat16 matmuls run as the register-tiled kernel, widened to float32
    while staged and rounded once into C (the one-element kernel they had
    ran at 1.6 TFLOP/s on an H100): emulated, K split or not, misaligned
    (element-by-element staging) or not."""
    a, b = (random_placed(rng, shape, dtype, misaligned) for shape in shapes)
    f = dlc.jit(lambda x, y: x @ y, target="cuda", emulate=True, tensor_cores=False)
    lowered = f.lower(a, b)
    gpu = lowered.as_text("gpu")
    assert "nvgpu.mma.sync" not in gpu
    assert "memref<8x132xf32, #gpu.address_space<workgroup>>" in gpu
    _check_half_matmul(lowered.compile()(a, b), a, b, dtype)


def test_float32_matmuls_stay_off_tensor_cores(rng):
    a = rng.standard_normal((64, 64)).astype(np.float32)
    gpu = dlc.jit(lambda x, y: x @ y, target="cuda").lower(a, a).as_text("gpu")
    assert "nvgpu.mma.sync" not in gpu and "gpu.barrier" in gpu


def test_tensor_core_layer_with_a_dynamic_batch(rng):
    """A float16 layer (matmul on tensor cores, bias and activation after
    it) with a dynamic batch: the grid follows the batch at run time."""
    def layer(x, w, bias):
        return dlc.relu(x @ w + bias)
    w = rng.standard_normal((48, 24)).astype(np.float16)
    bias = rng.standard_normal(24).astype(np.float16)
    f = dlc.jit(layer, target="cuda", emulate=True, dynamic_batch=(0,))
    for batch in (1, 7, 65):
        x = rng.standard_normal((batch, 48)).astype(np.float16)
        product = (x.astype(np.float32) @ w.astype(np.float32)).astype(np.float16)
        expected = np.maximum(product + bias, 0)
        np.testing.assert_allclose(f(x, w, bias).astype(np.float32),
                                   expected.astype(np.float32), rtol=2e-3, atol=2e-3)
    assert f.cache_size() == 1
    assert "nvgpu.mma.sync" in f.lower(x, w, bias).as_text("gpu")


@pytest.mark.parametrize("dtype,ptx_type", [(np.float16, "f16"), (dlc.bfloat16, "bf16")],
                         ids=["f16", "bf16"])
def test_tensor_core_ptx(dtype, ptx_type, rng, tmp_path):
    """The PTX of the tensor-core kernel holds mma.sync m16n8k16 of its type
    and, where ptxas is on PATH, assembles for sm_80 and sm_90."""
    a = rng.standard_normal((2, 70, 40)).astype(dtype)
    b = rng.standard_normal((2, 40, 33)).astype(dtype)
    for chip in ("sm_80", "sm_90"):
        ptx = dlc.jit(lambda x, y: x @ y, target="cuda", chip=chip).lower(a, b).as_text("ptx")
        instruction = f"mma.sync.aligned.m16n8k16.row.col.f32.{ptx_type}.{ptx_type}.f32"
        assert ptx.count(instruction) == 16
        _assemble(ptx, chip, tmp_path)


@pytest.mark.parametrize("dtype", [np.float16, dlc.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_half_convolutions_reach_the_tensor_cores(dtype, layout, rng):
    """On the GPU every dense convolution is im2col + GEMM, 16-bit ones too,
    so float16/bfloat16 convolutions run their GEMM on tensor cores; the
    emulated result is the float32 convolution of the same inputs, rounded
    (stride 2 and a bias: odd sizes everywhere)."""
    nchw = layout == "NCHW"
    x = rng.standard_normal((2, 12, 9, 7) if nchw else (2, 9, 7, 12)).astype(dtype)
    w = rng.standard_normal((20, 12, 3, 3) if nchw else (3, 3, 12, 20)).astype(dtype)
    bias = rng.standard_normal(20).astype(dtype)

    def conv(a, b, c):
        return dlc.conv2d(a, b, c, stride=2, padding=1, layout=layout)
    f = dlc.jit(conv, target="cuda", emulate=True)
    assert "nvgpu.mma.sync" in f.lower(x, w, bias).as_text("gpu")
    as32 = [np.asarray(v, np.float32) for v in (x, w, bias)]
    expected = np.asarray(dlc.jit(conv)(*as32), np.float64)
    result = f(x, w, bias)
    assert result.dtype == np.dtype(dtype)
    eps = float(np.finfo(np.float16).eps) if dtype is np.float16 else 2.0 ** -7
    np.testing.assert_allclose(result.astype(np.float64), expected,
                               rtol=2 * eps, atol=2 * eps * np.abs(expected).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("shapes", [((2, 3, 17, 40), (2, 3, 40, 9)),   # attention-like
                                    ((4, 17, 40), (40, 9)),             # batch x 2-D
                                    ((2, 2, 5, 33), (33, 20)),
                                    ((1, 3, 17, 40), (2, 3, 40, 9))])   # broadcast batch
def test_batched_matmuls_reach_the_matmul_kernels(shapes, dtype, rng):
    """Matmuls with several batch dimensions, or a batch against a 2-D B,
    run as the matmul kernels over views merging the batch
    (dl-collapse-batch-matmul): shared-memory tiles for float32, tensor
    cores for float16. A batch dimension that broadcasts stays a plain
    kernel. Same results every way."""
    a = rng.standard_normal(shapes[0]).astype(dtype)
    b = rng.standard_normal(shapes[1]).astype(dtype)
    f = dlc.jit(lambda x, y: x @ y, target="cuda", emulate=True)
    gpu = f.lower(a, b).as_text("gpu")
    broadcast = shapes[0][0] != shapes[1][0] and len(shapes[1]) == len(shapes[0])
    assert ("workgroup(" in gpu) == (not broadcast)
    assert ("nvgpu.mma.sync" in gpu) == (not broadcast and dtype == np.float16)
    result = f(a, b)
    if dtype == np.float16:
        _check_half_matmul(result, a, b, dtype)
    else:
        np.testing.assert_allclose(result, np.matmul(a.astype(np.float64), b), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["matmul_relu", "conv", "softmax_sum", "constant_weights",
                                  "dynamic_batch"])
def test_host_code_with_temporaries_translates(name):
    """Functions with temporaries and constant weights: their host side
    frees buffers (gpu.dealloc), which must lower to the runtime's
    mgpuMemFree; a synchronous dealloc stayed in the IR and the ExecutionEngine
    refused the module (checked failing before the fix in dl-gpu-device-memory)."""
    f32 = np.float32
    cases = {
        "matmul_relu": (lambda a, b: dlc.relu(a @ b) + 1.0,
                        (np.ones((64, 32), f32), np.ones((32, 16), f32)), {}),
        "conv": (lambda x, w: dlc.relu(dlc.conv2d(x, w, padding=1)),
                 (np.ones((1, 3, 8, 8), f32), np.ones((4, 3, 3, 3), f32)), {}),
        "softmax_sum": (lambda x: dlc.sum(dlc.softmax(x, axis=-1), axis=0),
                        (np.ones((16, 10), f32),), {}),
        "constant_weights": (lambda x: x @ np.arange(12, dtype=f32).reshape(4, 3),
                             (np.ones((5, 4), f32),), {}),
        "dynamic_batch": (lambda x: dlc.tanh(x) * 2.0 + dlc.mean(x), (np.ones((5, 4), f32),),
                          {"dynamic_batch": True}),
    }
    fn, args, kwargs = cases[name]
    lowered = dlc.jit(fn, target="cuda", **kwargs).lower(*args)
    host = lowered.as_text("binary")
    assert "gpu.dealloc" not in host and "unrealized_conversion_cast" not in host
    runtime.JITCode(lowered._module_at("binary"), opt_level=0)


def test_gpu_keeps_constant_weights_unpacked(rng):
    """dl-pack-weights lays weights out for the CPU micro-kernel; the GPU
    pipeline (and its shared graph stage) leaves a one-row product with a
    constant weight as it is."""
    w = rng.standard_normal((64, 100)).astype(np.float32)
    x = rng.standard_normal((1, 64)).astype(np.float32)
    f = dlc.jit(lambda a: a @ w, target="cuda", emulate=True)
    lowered = f.lower(x)
    assert "x64x" not in lowered.as_text("graph").replace("1x64xf32", "")
    np.testing.assert_allclose(lowered.compile()(x), x.astype(np.float64) @ w,
                               rtol=1e-4, atol=1e-4)
