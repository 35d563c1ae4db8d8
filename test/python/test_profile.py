"""dlc.profile: a compiled function's time per parallel region, named by the
source line of the loop (the runtime times each dlc_parallel_for by its
body; dl-lower-parallel-launch's table names the bodies)."""

import ctypes
import inspect

import numpy as np
import pytest

import dlc
from dlc import runtime


def _line_of(text, function):
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def two_layers(x, w1, w2):
    h = dlc.relu(x @ w1)  # first layer
    return dlc.tanh(h @ w2) * 2.0  # second layer


def test_profile_names_each_region_by_its_source_line():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 128), dtype=np.float32)
    w1 = rng.standard_normal((128, 192), dtype=np.float32)
    w2 = rng.standard_normal((192, 64), dtype=np.float32)
    f = dlc.jit(two_layers)
    profile = dlc.profile(f, x, w1, w2, calls=5)
    assert profile.calls == 5
    sources = {r.source for r in profile.regions}
    first = f"test_profile.py:{_line_of('first layer', two_layers)}"
    second = f"test_profile.py:{_line_of('second layer', two_layers)}"
    assert any(s.endswith(first) for s in sources), sources
    assert any(s.endswith(second) for s in sources), sources
    for region in profile.regions:
        assert region.name.startswith("dlc_two_layers_parallel_"), region
        assert region.launches == 1 and region.seconds > 0
    # The regions are timed inside the calls: they cannot add up to more.
    in_regions = sum(r.seconds for r in profile.regions)
    assert 0 < in_regions <= profile.seconds
    assert profile.serial_seconds == pytest.approx(profile.seconds - in_regions)
    assert [r.seconds for r in profile.regions] == sorted(
        (r.seconds for r in profile.regions), reverse=True)
    table = profile.table()
    assert "ms per call (5 calls)" in table and "outside parallel regions" in table
    assert first.split(":")[0] in table
    # Profiling changed nothing: the results are still right.
    expected = np.tanh(np.maximum(x @ w1, 0) @ w2) * 2
    np.testing.assert_allclose(f(x, w1, w2), expected, rtol=1e-4, atol=1e-4)


def test_profile_counts_the_launches_of_a_body_shared_by_identical_layers():
    # Equivalent loops of identical layers launch one outlined body: one row,
    # with as many launches per call as there are layers; by_source sums rows
    # of one line.
    def layers(x, ws):
        for w in ws:
            x = dlc.relu(x @ w)
        return x
    rng = np.random.default_rng(1)
    x = rng.standard_normal((256, 128), dtype=np.float32)
    ws = tuple(rng.standard_normal((128, 128), dtype=np.float32) / 8 for _ in range(4))
    f = dlc.jit(lambda x, a, b, c, d: layers(x, (a, b, c, d)))
    profile = dlc.profile(f, x, *ws, calls=3)
    assert sum(r.launches for r in profile.regions) >= 4
    assert max(r.launches for r in profile.regions) >= 4
    line = f"test_profile.py:{_line_of('x = dlc.relu(x @ w)', layers)}"
    by_source = dict((s, (n, t)) for s, n, t in profile.by_source())
    assert any(s.endswith(line) and n >= 4 for s, (n, _) in by_source.items()), by_source
    # A second profile starts from zero.
    again = dlc.profile(f, x, *ws, calls=3)
    assert sum(r.launches for r in again.regions) == sum(r.launches for r in profile.regions)


def test_profile_of_a_compiled_function_from_the_disk_cache(tmp_path, monkeypatch):
    # The table is part of the compiled code: a library from the disk cache
    # names its regions too.
    monkeypatch.setenv("DLC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DLC_CACHE_MIN_SECONDS", "0")
    x = np.ones((128, 96), np.float32)
    w = np.ones((96, 80), np.float32)
    dlc.jit(two_layers).lower(x, w, w.T.copy()).compile()
    hit = dlc.jit(two_layers).lower(x, w, w.T.copy()).compile()
    assert "cache" in hit.phase_seconds
    profile = dlc.profile(hit, x, w, w.T.copy(), calls=2)
    assert profile.regions
    assert all("test_profile.py:" in r.source for r in profile.regions), profile.regions


def test_profile_of_an_imported_torch_model():
    torch = pytest.importorskip("torch")

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(8, 16, 3, padding=1)
            self.fc = torch.nn.Linear(16, 10)

        def forward(self, x):
            y = torch.relu(self.conv(x))  # the convolution
            return self.fc(y.mean((2, 3)))

    torch.manual_seed(0)
    module = Block().eval()
    x = torch.randn(2, 8, 16, 16)
    f = dlc.from_torch(module, x)
    profile = dlc.profile(f, x.numpy(), calls=3)
    line = f"test_profile.py:{_line_of('the convolution', Block.forward)}"
    assert any(r.source.endswith(line) for r in profile.regions), profile.regions


def test_profile_names_the_op_of_each_region():
    # One source line can hold a model's every convolution (timm's
    # ConvNormAct): each region also says which dl op its loop computes, and
    # by_op sums the regions by op kind or by the whole name.
    torch = pytest.importorskip("torch")

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = torch.nn.ModuleList([
                torch.nn.Conv2d(16, 16, 3, padding=1, groups=16),
                torch.nn.Conv2d(16, 32, 1)])

        def forward(self, x):
            for conv in self.convs:
                x = torch.relu(conv(x))  # every convolution
            return x.mean((2, 3))

    torch.manual_seed(0)
    module = Block().eval()
    x = torch.randn(2, 16, 24, 24)
    f = dlc.from_torch(module, x)
    profile = dlc.profile(f, x.numpy(), calls=3)
    ops = {r.op for r in profile.regions}
    assert "dl.conv2d 3x3 g16 2x24x24x16 -> 2x24x24x16" in ops, ops
    assert any(op.startswith("dl.conv2d 1x1 ") and op.endswith("-> 2x24x24x32")
               for op in ops), ops
    line = f"test_profile.py:{_line_of('every convolution', Block.forward)}"
    convs = [r for r in profile.regions if r.kind == "dl.conv2d"]
    assert len(convs) == 2 and all(r.source.endswith(line) for r in convs), profile.regions
    kinds = {k: (n, t) for k, n, t in profile.by_op()}
    assert kinds["dl.conv2d"][0] == 2
    assert kinds["dl.conv2d"][1] == pytest.approx(sum(r.seconds for r in convs))
    assert sum(t for _, _, t in profile.by_op(detail=True)) == pytest.approx(
        sum(r.seconds for r in profile.regions))
    assert "dl.conv2d 3x3 g16" in profile.table()
    # The ReLUs are the convolutions' epilogues: no region of their own.
    assert "dl.relu" not in kinds, kinds


def test_profile_refuses_what_it_cannot_profile():
    f = dlc.jit(two_layers)
    x = np.ones((4, 4), np.float32)
    with pytest.raises(ValueError, match="calls must be a positive int"):
        dlc.profile(f, x, x, x, calls=0)
    with pytest.raises(TypeError, match="dlc.profile expects a dlc.jit function"):
        dlc.profile(lambda a: a, x)


def test_runtime_profiling_is_off_outside_a_profile():
    f = dlc.jit(two_layers)
    x = np.ones((64, 64), np.float32)
    dlc.profile(f, x, x, x, calls=1)
    library = runtime._load_parallel_runtime()
    bodies = (ctypes.c_void_p * 64)()
    counts = (ctypes.c_int64 * 64)()
    nanos = (ctypes.c_int64 * 64)()

    def launches():
        library.dlc_runtime_profile_read.restype = ctypes.c_int64
        n = library.dlc_runtime_profile_read(bodies, counts, nanos, ctypes.c_int64(64))
        return sum(counts[i] for i in range(min(n, 64)))
    before = launches()
    f(x, x, x)
    assert launches() == before
