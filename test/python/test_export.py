"""dlc.export and dlcrt.load: compiled functions as self-contained shared
libraries, run from Python without dlc's compiler and from C."""

import json
import re
import os
import shutil
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import dlc
import dlcrt
from conftest import run_on_fake_cuda

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
rng = np.random.default_rng(0)
W1 = rng.standard_normal((20, 16)).astype(np.float32)
W2 = rng.standard_normal((16, 5)).astype(np.float32)


def mlp(x):
    return dlc.softmax(dlc.relu(x @ W1) @ W2, axis=-1)


def ldd_libraries(path):
    output = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in output.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def mlp_library(tmp_path_factory):
    folder = tmp_path_factory.mktemp("export")
    x = rng.standard_normal((4, 20)).astype(np.float32)
    path = dlc.export(mlp, x, path=str(folder / "mlp.so"), dynamic_batch=True)
    return path


def test_exported_function_matches_the_jit_for_every_batch(mlp_library):
    library = dlc.load(mlp_library)
    jitted = dlc.jit(mlp, dynamic_batch=True)  # the same code: the same bits
    for batch in (1, 4, 7, 64):
        x = rng.standard_normal((batch, 20)).astype(np.float32)
        np.testing.assert_array_equal(library(x), jitted(x))
        np.testing.assert_array_equal(library.mlp(x), jitted(x))
    assert library(np.zeros((0, 20), np.float32)).shape == (0, 5)
    record = library.metadata["functions"][0]
    assert record["inputs"] == [{"name": "x", "dtype": "float32", "shape": [None, 20],
                                 "dims": ["batch", None]}]
    assert library.metadata["format"] == dlcrt.FORMAT
    assert library.metadata["target"]["cpu"] == dlc.Target.host().cpu


def test_library_needs_nothing_of_llvm_or_dlc(mlp_library):
    names = " ".join(ldd_libraries(mlp_library))
    for unwanted in ("LLVM", "MLIR", "mlir", "dlc_runtime", "python"):
        assert unwanted not in names, names
    header = open(os.path.splitext(mlp_library)[0] + ".h").read()
    assert "int dlc_mlp(const dlc_tensor *inputs, dlc_tensor *outputs);" in header
    assert "x: float32[?, 20]" in header


def test_loaded_function_checks_arguments_like_the_jit(mlp_library):
    library = dlc.load(mlp_library)
    x = np.ones((3, 20), np.float32)
    with pytest.raises(dlc.DTypeError, match=r"argument 'x': expected float32\[\?, 20\], "
                                             r"but got float64\[3, 20\]"):
        library(x.astype(np.float64))
    with pytest.raises(dlc.ShapeError, match=r"but got float32\[3, 7\]"):
        library(x[:, :7])
    with pytest.raises(dlc.ShapeError):
        library(x[0])
    with pytest.raises(dlc.ArityError, match="takes 1 arguments"):
        library(x, x)
    # Strided inputs are made contiguous (as the jit does).
    wide = np.ones((3, 40), np.float32)
    np.testing.assert_array_equal(library(wide[:, ::2]), library(x))


def test_several_outputs_aliasing_and_dtypes(tmp_path):
    """Tuples of outputs, an output that is an input (copied: the caller
    owns its outputs), integer, bool, rank-0 and bfloat16 values."""
    def f(a, b, c):
        return a, a * 2.0, dlc.sum(a), (b + 1) * b, b > 2, dlc.astype(c, np.float32) * 3.0

    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = np.arange(6, dtype=np.int32).reshape(2, 3)
    c = np.arange(5).astype(dlc.bfloat16)
    path = dlc.export(f, a, b, c, path=str(tmp_path / "multi.so"))
    got = dlc.load(path)(a, b, c)
    want = dlc.jit(f)(a, b, c)
    assert isinstance(got, tuple) and len(got) == 6
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    assert got[0].ctypes.data != a.ctypes.data  # a copy, not the caller's buffer


def test_unsigned_and_quantized_values_through_an_exported_library(tmp_path):
    """uint8 in and out of a library (the C ABI's codes 9-12), a quantize /
    dequantize pair, a uint16 and a uint64 above the signed range."""
    scale = np.array([0.05, 0.1, 0.2], np.float32)

    def f(img, x, big):
        q = dlc.quantize_linear(x, scale, np.array([128, 0, 7], np.uint8), axis=1)
        return img.astype(np.float32) / 255.0, q, dlc.maximum(img, img[::-1]), \
            big + np.uint64(1), img.astype(np.uint16) * 300

    img = rng.integers(0, 256, (4, 3), dtype=np.uint8)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    big = np.array([2 ** 63 + 5, 7], np.uint64)
    path = dlc.export(f, img, x, big, path=str(tmp_path / "unsigned.so"))
    loaded = dlc.load(path)
    got, want = loaded(img, x, big), dlc.jit(f)(img, x, big)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    with pytest.raises(dlc.DTypeError, match="uint8"):
        loaded(img.astype(np.int8), x, big)


def test_prepared_calls(mlp_library):
    """Function.prepare checks and marshals the arguments once; the prepared
    call reads their buffers anew each time (an input changed in place
    changes the result) and returns what a plain call would."""
    library = dlc.load(mlp_library)
    x = rng.standard_normal((4, 20)).astype(np.float32)
    call = library.mlp.prepare(x)
    np.testing.assert_array_equal(call(), library(x))
    x *= 2.0
    np.testing.assert_array_equal(call(), library(x))
    with pytest.raises(dlc.ShapeError, match="expected float32"):
        library.mlp.prepare(np.ones((4, 21), np.float32))


def test_rank_zero_inputs(tmp_path):
    """A scalar (0-d) input stays rank 0 on its way to the library (numpy's
    ascontiguousarray would make it rank 1, which the entry point refuses)."""
    def f(scale, x):
        return x * scale
    scale, x = np.float32(2.5).reshape(()), np.arange(4, dtype=np.float32)
    path = dlc.export(f, scale, x, path=str(tmp_path / "scaled.so"))
    np.testing.assert_array_equal(dlc.load(path)(scale, x), x * 2.5)


def test_module_and_imported_model_export(tmp_path):
    torch = pytest.importorskip("torch")
    model = dlc.nn.Sequential(dlc.nn.Conv2d(3, 8, 3, padding=1), dlc.nn.BatchNorm2d(8),
                              dlc.nn.ReLU(), dlc.nn.GlobalAvgPool2d(), dlc.nn.Flatten(),
                              dlc.nn.Linear(8, 4))
    x = rng.standard_normal((2, 3, 10, 10)).astype(np.float32)
    path = dlc.export(model, x, path=str(tmp_path / "net.so"))
    np.testing.assert_allclose(dlc.load(path)(x), dlc.jit(model)(x), rtol=1e-5, atol=1e-6)

    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.Tanh(),
                                 torch.nn.Linear(12, 3)).eval()
    example = rng.standard_normal((5, 6)).astype(np.float32)
    imported = dlc.from_torch(module, example, dynamic_batch=True)
    path = dlc.export(imported, example, path=str(tmp_path / "torch_mlp.so"), name="head")
    library = dlc.load(path)
    for batch in (1, 9):
        xb = rng.standard_normal((batch, 6)).astype(np.float32)
        with torch.no_grad():
            want = module(torch.from_numpy(xb)).numpy()
        np.testing.assert_allclose(library.head(xb), want, rtol=1e-5, atol=1e-6)


def test_export_of_a_module_compiled_in_parallel_parts(tmp_path, monkeypatch):
    # What a real model's export takes: LLVM in parts, the objects linked
    # with the entry point (here forced on a small function).
    monkeypatch.setenv("DLC_PARALLEL_CODEGEN_MIN_OPS", "0")
    monkeypatch.setenv("DLC_COMPILE_THREADS", "2")
    x = rng.standard_normal((4, 20)).astype(np.float32)
    path = dlc.export(mlp, x, path=str(tmp_path / "parts.so"), dynamic_batch=True)
    library = dlc.load(path)
    monkeypatch.setenv("DLC_PARALLEL_CODEGEN_MIN_OPS", str(10 ** 9))
    jitted = dlc.jit(mlp, dynamic_batch=True)
    for batch in (1, 7):
        xb = rng.standard_normal((batch, 20)).astype(np.float32)
        np.testing.assert_allclose(library(xb), jitted(xb), rtol=1e-6, atol=1e-7)


def test_loading_without_the_compiler_in_a_fresh_process(mlp_library, tmp_path):
    """dlcrt with numpy only: the MLIR bindings and dlc cannot be imported in
    the child (an import hook refuses them), and the results are the jit's."""
    runtime = tmp_path / "site"
    shutil.copytree(os.path.dirname(dlcrt.__file__), runtime / "dlcrt")
    x = rng.standard_normal((6, 20)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "want.npy", dlc.jit(mlp, dynamic_batch=True)(x))
    script = textwrap.dedent(f"""
        import sys, time
        start = time.perf_counter()
        class Refuse:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("dlc", "mlir", "torch", "onnx"):
                    raise ImportError("not in a deployment: " + name)
        sys.meta_path.insert(0, Refuse())
        sys.path.insert(0, {str(runtime)!r})
        import numpy as np
        import dlcrt
        library = dlcrt.load({mlp_library!r})
        got = library(np.load({str(tmp_path / "x.npy")!r}))
        seconds = time.perf_counter() - start
        assert not [m for m in sys.modules if m.split(".")[0] in ("dlc", "mlir")]
        try:
            import dlc
        except ImportError:
            pass
        else:
            raise SystemExit("dlc was importable")
        np.testing.assert_array_equal(got, np.load({str(tmp_path / "want.npy")!r}))
        print("ok", seconds)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok")


def test_c_example_builds_and_runs(tmp_path):
    """examples/deploy: export with Python, then a C program linked against
    the library and its header runs the model and reports a bad input."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    example = os.path.join(ROOT, "examples", "deploy")
    subprocess.run([sys.executable, os.path.join(example, "export_mlp.py"), str(tmp_path)],
                   check=True, capture_output=True)
    program = str(tmp_path / "mlp")
    subprocess.run([cc, os.path.join(example, "main.c"), "-I", str(tmp_path),
                    str(tmp_path / "mlp.so"), f"-Wl,-rpath,{tmp_path}", "-lm", "-o", program],
                   check=True)
    run = subprocess.run([program, "3"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    got = np.array([[float(v) for v in line.split()] for line in run.stdout.splitlines()])
    sys.path.insert(0, example)
    try:
        import export_mlp
    finally:
        sys.path.remove(example)
    want = dlc.jit(export_mlp.mlp)(export_mlp.example_input(3))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert "expected float32[?, 16], but got float32[3, 15]" in run.stderr


def test_loaded_function_from_threads(mlp_library):
    library = dlc.load(mlp_library)
    inputs = [rng.standard_normal((5 + i, 20)).astype(np.float32) for i in range(4)]
    wants = [library(x) for x in inputs]
    errors = []

    def work(index):
        try:
            for _ in range(200):
                np.testing.assert_array_equal(library(inputs[index]), wants[index])
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors


def test_memory_failure_in_a_library_is_memory_error(tmp_path):
    """A temporary larger than the process may have: MemoryError from the
    library's entry point (return code 2 in C), and the library still works."""
    def outer_sum(x, y):  # a (batch, 2^17) temporary
        return dlc.sum(x * y, axis=1)

    x, y = np.ones((8, 1), np.float32), np.ones((1, 1 << 17), np.float32)
    path = dlc.export(outer_sum, x, y, path=str(tmp_path / "outer.so"),
                      dynamic_batch=("x",))
    script = textwrap.dedent(f"""
        import resource, numpy as np, dlcrt
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
        library = dlcrt.load({path!r})
        y = np.ones((1, 1 << 17), np.float32)
        try:
            library(np.ones((1 << 17, 1), np.float32), y)   # 64 GiB
        except MemoryError as error:
            print("MemoryError", error)
        print(library(np.ones((4, 1), np.float32), y).tolist())
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "MemoryError dlc_outer_sum: the compiled code could not allocate" in result.stdout
    assert "[131072.0, 131072.0, 131072.0, 131072.0]" in result.stdout


def test_damaged_foreign_and_other_format_libraries_are_refused(mlp_library, tmp_path):
    data = open(mlp_library, "rb").read()
    with pytest.raises(FileNotFoundError):
        dlcrt.load(str(tmp_path / "missing.so"))
    (tmp_path / "text.so").write_text("not a library")
    with pytest.raises(dlc.ArtifactError, match="not a shared library"):
        dlcrt.load(str(tmp_path / "text.so"))
    # An ELF library that is not dlc's.
    libm = next((p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib64/libm.so.6")
                 if os.path.exists(p)), None)
    if libm:
        with pytest.raises(dlc.ArtifactError, match="not a library written by dlc.export"):
            dlcrt.load(libm)
    # Truncated (the metadata survives: dlopen would map past the end of
    # the file and die of SIGBUS), or one byte of code changed.
    start = data.index(b'{"format": ')
    (tmp_path / "cut.so").write_bytes(data[:start + 2000])
    with pytest.raises(dlc.ArtifactError, match="damaged.*checksum"):
        dlcrt.load(str(tmp_path / "cut.so"))
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0x40
    (tmp_path / "flipped.so").write_bytes(bytes(flipped))
    with pytest.raises(dlc.ArtifactError, match="damaged.*checksum"):
        dlcrt.load(str(tmp_path / "flipped.so"))
    # Damaged metadata.
    (tmp_path / "bad.so").write_bytes(data[:start + 12] + b"\x01\x02" + data[start + 14:])
    with pytest.raises(dlc.ArtifactError, match="damaged"):
        dlcrt.load(str(tmp_path / "bad.so"))
    # Written by another format of dlc.
    other = data.replace(b'{"format": %d,' % dlcrt.FORMAT, b'{"format": 9,', 1)
    (tmp_path / "other.so").write_bytes(other)
    with pytest.raises(dlc.ArtifactError, match="has format 9.*reads format"):
        dlcrt.load(str(tmp_path / "other.so"))


def test_libraries_for_another_cpu_are_refused(tmp_path):
    target = {"triple": "aarch64-unknown-linux-gnu", "cpu": "neoverse-v1",
              "features": ["neon"]}
    assert "compiled for aarch64" in dlcrt.why_not_runnable(target, machine="x86_64")
    target = {"triple": "x86_64-unknown-linux-gnu", "cpu": "sapphirerapids",
              "features": ["avx2", "avx512f", "amx-tile"]}
    why = dlcrt.why_not_runnable(target, flags={"avx2", "avx512f"}, machine="x86_64")
    assert "amx_tile" in why and "sapphirerapids" in why
    assert dlcrt.why_not_runnable(target, flags={"avx2", "avx512f", "amx_tile"},
                                  machine="x86_64") is None
    # A real library for a CPU this machine is not: a warning at export,
    # refused at load.
    host = dlc.Target.host()
    other = dlc.Target("sapphirerapids")
    if other.why_not_runnable(host) is None:
        pytest.skip("this machine runs sapphirerapids code")
    x = np.ones((2, 20), np.float32)
    with pytest.warns(UserWarning, match="cannot run on this machine"):
        path = dlc.export(mlp, x, path=str(tmp_path / "spr.so"), target=other)
    with pytest.raises(dlc.ArtifactError, match="cannot run on this machine"):
        dlcrt.load(path)
    meta = json.loads(open(path, "rb").read().split(b'{"format": ', 1)[1]
                      .split(b"\0", 1)[0].decode().join(['{"format": ', '']))
    assert meta["target"]["cpu"] == "sapphirerapids"


def test_export_refusals(tmp_path):
    x = np.ones((2, 20), np.float32)
    with pytest.raises(ValueError, match="emulate=True"):
        dlc.export(mlp, x, path=str(tmp_path / "g.so"), target="cuda", emulate=True)
    with pytest.raises(ValueError, match="target must be"):
        dlc.export(mlp, x, path=str(tmp_path / "g.so"), target="tpu")
    with pytest.raises(ValueError, match="C identifier"):
        dlc.export(mlp, x, path=str(tmp_path / "n.so"), name="no-dash")
    with pytest.raises(ValueError, match="runtime"):
        dlc.export(mlp, x, path=str(tmp_path / "n.so"), name="metadata")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        dlc.export(mlp, x, path=str(tmp_path / "missing" / "m.so"))
    with pytest.raises(TypeError, match="not to export"):
        dlc.export(dlc.jit(mlp), x, path=str(tmp_path / "m.so"), dynamic_batch=True)
    with pytest.raises(ValueError, match="parameters are arguments"):
        dlc.export(dlc.jit(dlc.nn.Linear(20, 3)), x, path=str(tmp_path / "m.so"))


def test_aot_command_compiles_a_dl_file(tmp_path):
    """python -m dlc.aot: a dl module from a file (hand-written, or saved
    with as_text("dl")) to a library; bad files are errors naming the file."""
    source = tmp_path / "model.mlir"
    source.write_text(dlc.jit(mlp, dynamic_batch=True).lower(
        np.ones((2, 20), np.float32)).as_text("dl"))
    out = tmp_path / "model.so"
    run = subprocess.run([sys.executable, "-m", "dlc.aot", str(source), "-o", str(out),
                          "--name", "classify"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    x = rng.standard_normal((3, 20)).astype(np.float32)
    np.testing.assert_array_equal(dlcrt.load(str(out)).classify(x),
                                  dlc.jit(mlp, dynamic_batch=True)(x))

    from dlc import aot
    two = tmp_path / "two.mlir"
    two.write_text("""
      func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
        %b = dl.relu %a : tensor<2xf32> -> tensor<2xf32>
        return %b : tensor<2xf32>
      }
      func.func @g(%a: tensor<3xi32>, %b: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
        %c = dl.add %a, %b : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
        return %c, %a : tensor<3xi32>, tensor<3xi32>
      }""")
    assert aot.main([str(two), "-o", str(tmp_path / "x.so")]) == 1  # which one?
    assert aot.main([str(two), "-o", str(tmp_path / "g.so"), "--function", "g"]) == 0
    a, b = np.arange(3, dtype=np.int32), np.full(3, 5, np.int32)
    got = dlcrt.load(str(tmp_path / "g.so"))(a, b)
    np.testing.assert_array_equal(got[0], a + b)
    np.testing.assert_array_equal(got[1], a)
    with pytest.raises(ValueError, match="no public function 'h'; there are: f, g"):
        aot.lower_file(str(two), "h")
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%a: i32) -> i32 { return %a : i32 }")
    with pytest.raises(ValueError, match="argument 0 is i32"):
        aot.lower_file(str(bad))
    bad.write_text("this is not MLIR")
    run = subprocess.run([sys.executable, "-m", "dlc.aot", str(bad), "-o", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "not valid MLIR" in run.stderr


@pytest.fixture(scope="module")
def cuda_library(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cuda")
    x = rng.standard_normal((8, 20)).astype(np.float32)
    lowered = dlc.jit(mlp, target="cuda", dynamic_batch=True).lower(x)
    kernels = sorted(set(re.findall(r"gpu\.func @(\w+)", lowered.as_text("gpu"))))
    launches = lowered.as_text("binary").count("gpu.launch_func")
    path = dlc.export(mlp, x, path=str(folder / "mlp_cuda.so"), target="cuda",
                      dynamic_batch=True)
    return path, kernels, launches


def _ptxas_assembles(chip, tmp_path):
    """Whether CUDA's ptxas is here and assembles for `chip` (CUDA 13's
    refuses sm_70)."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return False
    ptx = tmp_path / "empty.ptx"
    ptx.write_text(f".version 8.0\n.target {chip}\n.address_size 64\n")
    return subprocess.run([ptxas, f"-arch={chip}", str(ptx), "-o", os.devnull],
                          capture_output=True).returncode == 0


def _metadata(path):
    return json.loads(open(path, "rb").read().split(b'{"format": ', 1)[1]
                      .split(b"\0", 1)[0].decode().join(['{"format": ', '']))


@pytest.mark.parametrize("chip", ["sm_90", "sm_70"])
def test_cuda_kernels_as_fatbin_or_ptx(chip, tmp_path):
    """dlc.export embeds a fatbin (cubin for the chip + PTX) where ptxas
    assembles for the chip, and otherwise PTX with a warning saying why;
    kernel_format= chooses; the JIT keeps PTX by default."""
    x = rng.standard_normal((2, 20)).astype(np.float32)
    path = str(tmp_path / "f.so")
    if _ptxas_assembles(chip, tmp_path):
        dlc.export(mlp, x, path=path, target="cuda", chip=chip)
        assert _metadata(path)["kernels"] == "fatbin"
    else:
        with pytest.warns(UserWarning, match=f"embedded as PTX only.*no cubin for {chip}"):
            dlc.export(mlp, x, path=path, target="cuda", chip=chip)
        assert _metadata(path)["kernels"] == "ptx"
    dlc.export(mlp, x, path=path, target="cuda", chip=chip, kernel_format="ptx")
    assert _metadata(path)["kernels"] == "ptx"
    lowered = dlc.jit(mlp, target="cuda", chip=chip).lower(x)
    assert "\\7FELF" not in lowered.as_text("binary")


def test_cuda_kernel_format_option(tmp_path):
    x = rng.standard_normal((2, 20)).astype(np.float32)
    with pytest.raises(ValueError, match="kernel_format must be one of None, 'ptx', "
                                         "'cubin', 'fatbin', but got 'sass'"):
        dlc.jit(mlp, target="cuda", kernel_format="sass")
    if not _ptxas_assembles("sm_80", tmp_path):
        pytest.skip("CUDA's ptxas is not here, or does not assemble for sm_80")
    lowered = dlc.jit(mlp, target="cuda", chip="sm_80", kernel_format="cubin").lower(x)
    binary = lowered.as_text("binary")
    assert binary.count('bin = "\\7FELF') == lowered.as_text("gpu").count("gpu.module @")
    # The PTX is still there to read.
    assert lowered.as_text("ptx").count(".target sm_80") >= 1


def test_cuda_library_without_a_gpu_says_so(cuda_library):
    """An exported CUDA library loads nothing of CUDA until it runs: on a
    machine without libcuda.so.1 (this one, or DLC_LIBCUDA pointing nowhere)
    the load is refused naming the driver; the library itself needs no CUDA
    library to be linked."""
    path, _, _ = cuda_library
    assert not [lib for lib in ldd_libraries(path) if "cuda" in lib]
    metadata = _metadata(path)
    assert metadata["kind"] == "cuda" and metadata["chip"] == "sm_90"
    script = textwrap.dedent(f"""
        import dlcrt
        try:
            dlcrt.load({path!r})
        except dlcrt.CUDAUnavailableError as error:
            print(error)
    """)
    env = dict(os.environ, DLC_LIBCUDA="/nonexistent/libcuda.so.1")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env, timeout=120)
    assert "runs its kernels on a CUDA GPU (sm_90 or newer)" in result.stdout, result.stderr
    assert "could not be loaded" in result.stdout


def test_cuda_library_calls_the_driver_in_order(cuda_library, fake_cuda, tmp_path):
    """With a stand-in driver (fake_cuda.c: device memory the host cannot
    touch, kernels not run), two calls: the fatbin is loaded, every kernel of
    the function is fetched by name and launched, the input is copied into
    device memory and each output out of it (no managed memory anywhere),
    temporaries come from the stream-ordered pool (kept mapped), the weights
    W1 and W2 are uploaded by the first call only and stay, everything else
    is freed; a failed launch is a RuntimeError naming the call, and still
    frees everything."""
    path, kernels, launches = cuda_library
    fake = fake_cuda
    script = textwrap.dedent(f"""
        import numpy as np, dlcrt
        library = dlcrt.load({path!r})
        try:
            for batch in (3, 2):
                out = library(np.ones((batch, 20), np.float32))
                print("shape", out.shape)
        except RuntimeError as error:
            print("error", error)
    """)

    def run(fail):
        return run_on_fake_cuda(fake, script, tmp_path / f"log{int(fail)}.txt", fail)

    out, log = run(False)
    assert "shape (3, 5)" in out and "shape (2, 5)" in out
    starts = lambda word: [line for line in log if line.startswith(word)]  # noqa: E731
    loads = starts("load")
    # A fatbin (cubin for sm_90 + PTX) per GPU module, loaded as it is; PTX
    # where ptxas is missing.
    kind = "load fatbin 0 0" if _metadata(path)["kernels"] == "fatbin" else "load-ptx version"
    assert loads and all(line.startswith(kind) for line in loads), loads
    fetched = sorted({line.split()[1] for line in starts("function ")})
    assert fetched == kernels
    assert len(starts("launch ")) == 2 * launches
    weights = [f"h2d {20 * 16 * 4} 0", f"h2d {16 * 5 * 4} 0"]
    assert sorted(starts("h2d")) == sorted(weights + [f"h2d {3 * 20 * 4} 0",
                                                      f"h2d {2 * 20 * 4} 0"])
    assert starts("d2h") == [f"d2h {3 * 5 * 4} 0", f"d2h {2 * 5 * 4} 0"]
    assert not starts("copy ")  # no copy of the weights in the calls
    assert len(starts("alloc")) == len(starts("free")) + 2  # the weights stay
    assert not [line for line in starts("alloc") if line.endswith(" 1")]  # managed
    # The pool keeps freed memory mapped (release threshold: no limit).
    assert starts("pool-attribute") == ["pool-attribute 4 -1"]  # UINT64_MAX, as %lld
    assert starts("async-alloc") and len(starts("async-alloc")) == len(starts("async-free"))

    out, log = run(True)
    assert "cuLaunchKernel failed with CUDA_ERROR_LAUNCH_FAILED" in out
    assert sum(line.startswith("launch ") for line in log) == 1
    assert sum(line.startswith("alloc") for line in log) == \
        sum(line.startswith("free") for line in log) + 2


def test_cuda_library_with_an_empty_batch(cuda_library, fake_cuda, tmp_path):
    """A batch of 0 rows: every grid is empty, and the driver refuses an
    empty grid (CUDA_ERROR_INVALID_VALUE; the stand-in too), so the shim
    launches nothing and the result is empty."""
    path, _, _ = cuda_library
    script = textwrap.dedent(f"""
        import numpy as np, dlcrt
        print("shape", dlcrt.load({path!r})(np.ones((0, 20), np.float32)).shape)
    """)
    out, log = run_on_fake_cuda(fake_cuda, script, tmp_path / "log.txt")
    assert "shape (0, 5)" in out, out
    assert not [line for line in log if line.startswith("launch ")]


def test_cuda_library_without_kernels(fake_cuda, tmp_path):
    """A function whose result is empty has no kernel and no GPU module to
    load: it still exports (found by the device check's bundle, where it
    was refused for want of a module loader) and runs."""
    x = np.ones((3, 7), np.float32)
    path = dlc.export(lambda a: a[:, 5:2], x, path=str(tmp_path / "empty.so"), target="cuda")
    script = textwrap.dedent(f"""
        import numpy as np, dlcrt
        print("shape", dlcrt.load({path!r})(np.ones((3, 7), np.float32)).shape)
    """)
    out, log = run_on_fake_cuda(fake_cuda, script, tmp_path / "log.txt")
    assert "shape (3, 0)" in out
    assert not [line for line in log if line.startswith(("load", "launch"))]


def test_cuda_library_without_a_memory_pool(cuda_library, fake_cuda, tmp_path):
    """A driver without the stream-ordered allocator (before CUDA 11.2, or
    one whose default pool is unavailable): cuMemAlloc and cuMemFree."""
    path, _, _ = cuda_library
    script = textwrap.dedent(f"""
        import os, numpy as np, dlcrt
        os.environ["FAKE_CUDA_NO_POOL"] = "1"
        print("shape", dlcrt.load({path!r})(np.ones((3, 20), np.float32)).shape)
    """)
    out, log = run_on_fake_cuda(fake_cuda, script, tmp_path / "log.txt")
    assert "shape (3, 5)" in out
    assert not [line for line in log if line.startswith(("async-", "pool-"))]
    assert sum(line.startswith("alloc") for line in log) == \
        sum(line.startswith("free") for line in log) + 2


_DEVICE_SCRIPT = """
import numpy as np, dlcrt
from dlc import runtime

class Tensor:
    # A tensor in (stand-in) device memory, as CuPy or torch.cuda hand one over.
    def __init__(self, array):
        self.holder = runtime.cuda_shim().to_device(array, "x")
        self.__cuda_array_interface__ = {
            "shape": array.shape, "typestr": array.dtype.str, "version": 3,
            "data": (self.holder.__array_interface__["data"][0], False), "strides": None}

library = dlcrt.load(PATH)
x = np.ones((3, 20), np.float32)
out = library(Tensor(x))
print("type", type(out).__name__, out.shape, out.dtype)
print("interface", out.__cuda_array_interface__["shape"], out.__cuda_array_interface__["typestr"])
host = out.numpy()
print("host", host.shape, host.dtype)
try:
    library(Tensor(x), 1)
except TypeError as error:
    print("arity", error)
try:
    library(Tensor(np.ones((3, 21), np.float32)))
except ValueError as error:
    print("shape", error)
try:
    library(Tensor(np.ones((3, 20), np.float64)))
except TypeError as error:
    print("dtype", error)
"""


def test_cuda_library_device_arrays(cuda_library, fake_cuda, tmp_path):
    """Inputs already in device memory (the CUDA array interface, as CuPy and
    torch.cuda tensors have it): the library's device entry point reads them
    where they are (no host-to-device copy of the input), leaves the result
    in device memory (a DeviceArray, no device-to-host copy until .numpy()),
    and checks dtypes and shapes like the host path."""
    path, _, launches = cuda_library
    out, log = run_on_fake_cuda(fake_cuda, _DEVICE_SCRIPT.replace("PATH", repr(path)),
                                tmp_path / "log.txt")
    assert "type DeviceArray (3, 5) float32" in out
    assert "interface (3, 5) <f4" in out
    assert "host (3, 5) float32" in out
    assert "takes 1 arguments (x), but got 2" in out
    assert "argument 'x': expected float32[?, 20], but got float32[3, 21]" in out
    assert "argument 'x': expected float32[?, 20], but got float64[3, 20]" in out
    starts = lambda word: [line for line in log if line.startswith(word)]  # noqa: E731
    # The script's four Tensor uploads (its own) and the weights once; the
    # only device-to-host copy is .numpy()'s.
    assert sorted(starts("h2d")) == sorted([f"h2d {20 * 16 * 4} 0", f"h2d {16 * 5 * 4} 0"]
                                           + [f"h2d {3 * 20 * 4} 0"] * 2
                                           + [f"h2d {3 * 21 * 4} 0", f"h2d {3 * 20 * 8} 0"])
    assert starts("d2h") == [f"d2h {3 * 5 * 4} 0"]
    assert len(starts("launch ")) == launches
    assert starts("sync")  # the caller's work waited for before the kernels
