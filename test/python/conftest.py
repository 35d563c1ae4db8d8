"""Shared helpers of dlc's pytest suites: random inputs and tolerances."""

import os
import sys
import tempfile

import ml_dtypes
import numpy as np
import pytest

# The suite's compiles use a disk cache of their own (dlc.cache), not the
# user's ~/.cache/dlc: removed when the session ends.
_CACHE = tempfile.TemporaryDirectory(prefix="dlc-test-cache-")
os.environ["DLC_CACHE_DIR"] = _CACHE.name

#: (rtol, atol) per dtype for results compared with a numpy reference computed
#: in float64 from the same inputs. float32 kernels reassociate sums
#: (vectorized reductions), so they differ from numpy in the last bits.
TOLERANCES = {
    np.dtype("float16"): (2e-2, 2e-2),
    np.dtype(ml_dtypes.bfloat16): (3e-2, 3e-2),
    np.dtype("float32"): (2e-5, 1e-6),
    np.dtype("float64"): (1e-12, 1e-13),
}


def assert_matches(actual, expected, dtype=None, extra_atol=0.0):
    """`actual` equals `expected` within the tolerance of `dtype` (plus
    `extra_atol` for float dtypes)."""
    dtype = np.dtype(dtype or actual.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == dtype, (actual.dtype, dtype)
    if dtype in TOLERANCES:
        rtol, atol = TOLERANCES[dtype]
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol, atol=atol + extra_atol)
    else:
        np.testing.assert_array_equal(actual, expected.astype(dtype))


def random_array(rng, shape, dtype, low=-3, high=3):
    dtype = np.dtype(dtype)
    if dtype.kind == "f" or dtype == ml_dtypes.bfloat16:
        return rng.uniform(low, high, size=shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    return rng.integers(low, high + 1, size=shape).astype(dtype)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(scope="session")
def fake_cuda(tmp_path_factory):
    """A stand-in libcuda.so.1 (fake_cuda.c: device memory the host cannot
    touch, kernels not run, every call logged), built once; its path. Point
    $DLC_LIBCUDA at it in a subprocess."""
    import shutil
    import subprocess
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler for the stand-in CUDA driver")
    path = str(tmp_path_factory.mktemp("fake_cuda") / "libfakecuda.so")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", path,
                    os.path.join(os.path.dirname(__file__), "fake_cuda.c")], check=True)
    return path


def run_on_fake_cuda(fake, script, log, fail=False, timeout=300):
    """Runs the Python `script` in a subprocess on the stand-in driver `fake`
    (the fake_cuda fixture), logging its driver calls to `log`; with `fail`,
    every kernel launch fails. Asserts it exits cleanly; returns its stdout
    and the log's lines."""
    import subprocess
    env = dict(os.environ, DLC_LIBCUDA=fake, FAKE_CUDA_LOG=str(log))
    if fail:
        env["FAKE_CUDA_FAIL_LAUNCH"] = "1"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=timeout)
    assert run.returncode == 0, run.stderr
    return run.stdout, log.read_text().splitlines()


def pytest_terminal_summary(terminalreporter):
    """The ONNX node-test count (test_onnx_node.py), and cases that pass
    without being in onnx_node_expected.txt."""
    module = sys.modules.get("test_onnx_node")
    if module is None or not module.RESULTS:
        return
    results = module.RESULTS
    passing = sorted(n for n, s in results.items() if s == "pass")
    terminalreporter.write_line(
        f"ONNX backend node cases: {len(passing)} of {len(results)} run pass "
        f"({100.0 * len(passing) / len(results):.1f}%)")
    new = [n for n in passing if n not in module.EXPECTED]
    if new:
        terminalreporter.write_line(
            f"  {len(new)} pass without being expected (add them with "
            f"tools/onnx/node_report.py): {', '.join(new[:10])}")
