"""dlc's disk cache of compiled code (dlc.cache): a second process compiles
nothing; corrupt entries, concurrent writers, a full cache and no cache at
all are handled. Each test has a cache folder of its own, and stores every
compile (DLC_CACHE_MIN_SECONDS=0)."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dlc
from dlc import cache

# A program run in a fresh process: compiles f (and, with an argument,
# another signature), prints how the code was obtained and the result.
PROGRAM = textwrap.dedent("""
    import sys, numpy as np, dlc
    def f(x, w):
        return dlc.relu(x @ w + 1.0)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    x = np.arange(n * n, dtype=np.float32).reshape(n, n) / 10
    w = np.eye(n, dtype=np.float32)[::-1].copy()
    compiled = dlc.jit(f).lower(x, w).compile()
    y = compiled(x, w)
    print(type(compiled._function.code).__name__, float(y.sum()))
""")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("DLC_CACHE_DIR", str(folder))
    monkeypatch.setenv("DLC_CACHE_MIN_SECONDS", "0")
    return folder


def run(*args, env=None):
    process = subprocess.run([sys.executable, "-c", PROGRAM, *args], capture_output=True,
                             text=True, env={**os.environ, **(env or {})}, timeout=300)
    assert process.returncode == 0, process.stderr
    kind, total = process.stdout.split()
    return kind, float(total)


def entry_folders(folder):
    return sorted(p for p in folder.glob("*/*") if p.is_dir() and not p.name.startswith("."))


def test_second_process_loads_the_cached_code(cache_dir):
    first, total = run()
    assert first == "JITCode"
    entries = entry_folders(cache_dir)
    assert len(entries) == 1
    assert (entries[0] / "code.so").is_file()
    record = json.loads((entries[0] / "entry.json").read_text())
    assert record["dlc"] == dlc.__version__
    second, again = run()
    assert second == "LibraryCode" and again == total
    # The expected value, from numpy.
    x = np.arange(64, dtype=np.float32).reshape(8, 8) / 10
    assert total == pytest.approx(float(np.maximum(x @ np.eye(8)[::-1] + 1, 0).sum()))


def test_another_signature_is_another_entry(cache_dir):
    run("8")
    run("16")
    assert len(entry_folders(cache_dir)) == 2


def test_in_process_compile_uses_the_cache(cache_dir):
    def g(x):
        return dlc.exp(x) * 2.0
    x = np.linspace(-1, 1, 37, dtype=np.float32)
    first = dlc.jit(g).lower(x).compile()
    second = dlc.jit(g).lower(x).compile()
    assert type(first._function.code).__name__ == "JITCode"
    assert type(second._function.code).__name__ == "LibraryCode"
    np.testing.assert_allclose(second(x), np.exp(x) * 2, rtol=2e-6)
    np.testing.assert_array_equal(first(x), second(x))


def test_options_and_target_are_part_of_the_key(cache_dir):
    def g(x):
        return x * 3.0 + 1.0
    x = np.ones(64, np.float32)
    dlc.jit(g).lower(x).compile()
    dlc.jit(g, vector_width=0).lower(x).compile()
    dlc.jit(g, llvm_opt_level=1).lower(x).compile()
    assert len(entry_folders(cache_dir)) == 3
    other = dlc.Target.host().cpu
    # The same function for the same target, named explicitly: the same IR.
    compiled = dlc.jit(g, target=dlc.Target(other)).lower(x).compile()
    assert len(entry_folders(cache_dir)) in (3, 4)
    np.testing.assert_array_equal(compiled(x), x * 3 + 1)


def test_corrupt_entry_is_replaced(cache_dir):
    kind, total = run()
    (entry,) = entry_folders(cache_dir)
    library = entry / "code.so"
    data = bytearray(library.read_bytes())
    data[len(data) // 2] ^= 0xFF
    library.write_bytes(bytes(data))
    kind, again = run()
    assert kind == "JITCode" and again == total  # compiled again, not loaded
    assert run()[0] == "LibraryCode"  # and stored again


def test_truncated_metadata_is_a_miss(cache_dir):
    run()
    (entry,) = entry_folders(cache_dir)
    (entry / "entry.json").write_text("{")
    assert run()[0] == "JITCode"
    assert run()[0] == "LibraryCode"


def test_concurrent_writers(cache_dir):
    env = {**os.environ}
    processes = [subprocess.Popen([sys.executable, "-c", PROGRAM], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(3)]
    results = [p.communicate(timeout=300) for p in processes]
    assert all(p.returncode == 0 for p in processes), [err for _, err in results]
    assert len({out.split()[1] for out, _ in results}) == 1
    assert len(entry_folders(cache_dir)) == 1
    # No private folder of a writer is left behind.
    assert not [p for p in cache_dir.glob("*/.*")]
    assert run()[0] == "LibraryCode"


def test_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("DLC_CACHE_DIR", "off")
    monkeypatch.setenv("DLC_CACHE_MIN_SECONDS", "0")
    assert cache.directory() is None
    assert run(env={"DLC_CACHE_DIR": "off"})[0] == "JITCode"
    assert run(env={"DLC_CACHE_DIR": "off"})[0] == "JITCode"


def test_fast_compiles_are_not_stored(cache_dir):
    run(env={"DLC_CACHE_MIN_SECONDS": "1000"})
    assert entry_folders(cache_dir) == []


def test_size_limit_evicts_the_least_recently_used(cache_dir, monkeypatch):
    monkeypatch.setenv("DLC_CACHE_MAX_MB", "0.000001")  # one entry at most
    run("8", env={"DLC_CACHE_MAX_MB": "0.000001"})
    run("16", env={"DLC_CACHE_MAX_MB": "0.000001"})
    assert len(entry_folders(cache_dir)) == 1
    assert run("16")[0] == "LibraryCode"


def test_clear(cache_dir):
    run("8")
    run("16")
    assert len(cache.entries()) == 2
    assert cache.clear() == 2
    assert entry_folders(cache_dir) == []


def test_default_location(monkeypatch, tmp_path):
    monkeypatch.delenv("DLC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.directory() == os.path.join(str(tmp_path), "dlc")


@pytest.mark.parametrize("name, value", [("DLC_CACHE_MAX_MB", "lots"),
                                         ("DLC_CACHE_MIN_SECONDS", "soon")])
def test_bad_settings_are_named(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=name):
        cache.max_bytes() if name == "DLC_CACHE_MAX_MB" else cache.min_seconds()


def test_llvm_opt_level_is_checked():
    with pytest.raises(ValueError, match="llvm_opt_level must be an int in 0..3"):
        dlc.jit(lambda x: x + 1, llvm_opt_level=4)


# -- privacy: entries hold models' weights ------------------------------------

UMASK_PROGRAM = textwrap.dedent("""
    import os
    os.umask(0)  # the most permissive: nothing dlc makes may follow it
""") + PROGRAM


def test_fresh_cache_is_private_whatever_the_umask(tmp_path, monkeypatch):
    """Under umask 0, a cache made from nothing (its parent too) has 0700
    folders and 0600 files."""
    folder = tmp_path / "home" / "cache" / "dlc"
    env = {"DLC_CACHE_DIR": str(folder), "DLC_CACHE_MIN_SECONDS": "0"}
    process = subprocess.run([sys.executable, "-c", UMASK_PROGRAM], capture_output=True,
                             text=True, env={**os.environ, **env}, timeout=300)
    assert process.returncode == 0, process.stderr
    assert entry_folders(folder)
    made = [folder.parent, folder] + [p for p in folder.rglob("*")]
    for path in made:
        mode = path.stat().st_mode & 0o777
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))


def _warned_run(cache_dir):
    """Runs PROGRAM with warnings shown; (how the code was obtained, stderr)."""
    process = subprocess.run([sys.executable, "-W", "always", "-c", PROGRAM],
                             capture_output=True, text=True, timeout=300,
                             env={**os.environ, "DLC_CACHE_DIR": str(cache_dir),
                                  "DLC_CACHE_MIN_SECONDS": "0"})
    assert process.returncode == 0, process.stderr
    return process.stdout.split()[0], process.stderr


@pytest.mark.parametrize("mode,reason", [
    (0o777, "other users can write into it (mode 0777)"),
    (0o730, "other users can write into it (mode 0730)"),
])
def test_cache_others_can_write_is_not_used(cache_dir, mode, reason):
    """A cache folder others can write into is neither read (a library in it
    could be theirs) nor written, with a warning saying why and how to fix
    it."""
    assert run()[0] == "JITCode"
    assert run()[0] == "LibraryCode"
    cache_dir.chmod(mode)
    kind, errors = _warned_run(cache_dir)
    assert kind == "JITCode"  # the entry was not loaded
    assert "CacheWarning" in errors and reason in errors and f"chmod 700 {cache_dir}" in errors
    assert len(entry_folders(cache_dir)) == 1


def test_cache_others_can_read_is_not_written(cache_dir):
    """A cache folder others can read (as dlc made them before: 0755) is
    still read, but nothing new goes into it."""
    assert run()[0] == "JITCode"
    cache_dir.chmod(0o755)
    process = subprocess.run([sys.executable, "-W", "always", "-c", PROGRAM, "5"],
                             capture_output=True, text=True, timeout=300,
                             env={**os.environ, "DLC_CACHE_DIR": str(cache_dir),
                                  "DLC_CACHE_MIN_SECONDS": "0"})
    assert process.returncode == 0, process.stderr
    assert "is not written to: other users can read it (mode 0755)" in process.stderr
    assert len(entry_folders(cache_dir)) == 1  # the new signature was not stored
    kind, _ = _warned_run(cache_dir)
    assert kind == "LibraryCode"  # the old entry, its own, is still read


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_cache_of_another_user_is_not_used(cache_dir):
    """A cache folder owned by another user is never read from (its
    libraries could be theirs) nor written to."""
    assert run()[0] == "JITCode"
    for path in [cache_dir, *cache_dir.rglob("*")]:
        os.chown(path, 65534, 65534)
    kind, errors = _warned_run(cache_dir)
    assert kind == "JITCode"
    assert "it belongs to another user (uid 65534)" in errors
    assert "point DLC_CACHE_DIR at a folder of your own" in errors


def test_export_builds_in_private_folders(tmp_path, monkeypatch):
    """dlc.export's temporary build folder is 0700 whatever the umask."""
    import tempfile
    made = []
    original = tempfile.mkdtemp

    def recording(*args, **kwargs):
        path = original(*args, **kwargs)
        made.append((path, os.stat(path).st_mode & 0o777))
        return path
    monkeypatch.setattr(tempfile, "mkdtemp", recording)
    previous = os.umask(0)
    try:
        dlc.export(lambda x: x * 2.0, np.ones(3, np.float32), path=str(tmp_path / "f.so"))
    finally:
        os.umask(previous)
    exports = [mode for path, mode in made if "dlc-export-" in path]
    assert exports == [0o700]


# A function with a weight over runtime.EXTERNAL_CONSTANT_BYTES (64 KiB): its
# code reads the weight through a pointer, and the cache keeps it in a file.
WEIGHTS_PROGRAM = textwrap.dedent("""
    import numpy as np, dlc
    w = np.random.default_rng(0).standard_normal((600, 700)).astype(np.float32)
    # 300 rows: more than dl-pack-weights packs for, the weight stays as it is
    x = np.random.default_rng(1).standard_normal((300, 600)).astype(np.float32)
    compiled = dlc.jit(lambda a: dlc.relu(a) @ w).lower(x).compile()
    error = np.abs(compiled(x) - np.maximum(x, 0).astype(np.float64) @ w).max()
    print(type(compiled._function.code).__name__, error)
""")


def run_weights():
    process = subprocess.run([sys.executable, "-c", WEIGHTS_PROGRAM], capture_output=True,
                             text=True, timeout=300)
    assert process.returncode == 0, process.stderr
    kind, error = process.stdout.split()
    return kind, float(error)


def test_weights_are_stored_beside_the_library_and_mapped_back(cache_dir):
    assert run_weights()[0] == "JITCode"
    (entry,) = entry_folders(cache_dir)
    record = json.loads((entry / "entry.json").read_text())
    assert list(record["weights"]) == ["__dlc_weight_0"]
    weight = entry / "__dlc_weight_0.npy"
    assert np.load(weight).shape == (600, 700) and weight.stat().st_mode & 0o777 == 0o600
    kind, error = run_weights()
    assert kind == "LibraryCode" and error < 1e-3
    # A weight file that does not match its digest: the entry is compiled again.
    data = bytearray(weight.read_bytes())
    data[-1] ^= 0xFF
    weight.write_bytes(bytes(data))
    kind, error = run_weights()
    assert kind == "JITCode" and error < 1e-3


def test_a_weight_file_is_hashed_again_only_when_its_stat_changed(cache_dir, monkeypatch):
    # A lookup trusts a weight file whose size, mtime and ctime are those
    # recorded when it was written (hashing GPT-2's 500 MB at every load was
    # a quarter of its compile from the cache); any write changes the ctime,
    # even one whose mtime is set back.
    assert run_weights()[0] == "JITCode"
    (entry,) = entry_folders(cache_dir)
    weight = entry / "__dlc_weight_0.npy"
    record = json.loads((entry / "entry.json").read_text())
    assert record["stats"]["__dlc_weight_0"] == cache._stat_of(str(weight))
    hashed = []
    digest_of = cache._digest_of
    monkeypatch.setattr(cache, "_digest_of", lambda path: hashed.append(path) or digest_of(path))
    key = entry.name
    library, weights = cache.lookup(key)
    assert [os.path.basename(p) for p in hashed] == ["code.so"]
    assert weights["__dlc_weight_0"].shape == (600, 700)
    del weights
    # The same bytes rewritten: hashed, and still a hit.
    before = weight.stat()
    weight.write_bytes(weight.read_bytes())
    hashed.clear()
    assert cache.lookup(key) is not None
    assert sorted(os.path.basename(p) for p in hashed) == ["__dlc_weight_0.npy", "code.so"]
    # ... and the record now has its new stat: the next lookup trusts it again.
    assert json.loads((entry / "entry.json").read_text())["stats"]["__dlc_weight_0"] \
        == cache._stat_of(str(weight))
    assert sorted(p.name for p in entry.iterdir()) == ["__dlc_weight_0.npy", "code.so",
                                                       "entry.json"]
    hashed.clear()
    assert cache.lookup(key) is not None and len(hashed) == 1
    # Other bytes with the old mtime put back: the ctime tells, a miss.
    data = bytearray(weight.read_bytes())
    data[-1] ^= 0xFF
    weight.write_bytes(bytes(data))
    os.utime(weight, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert cache.lookup(key) is None
    assert not entry.exists()


def test_compile_phases_are_timed_and_a_cache_hit_says_so(cache_dir):
    # Compiled.phase_seconds splits a compile (zoo speed table, issue 32):
    # cold, trace + graph passes + codegen passes + LLVM; from the disk
    # cache, trace + the load, no lowering at all.
    def f(x, w):
        return dlc.relu(x @ w + 1.0)
    x = np.ones((4, 8), np.float32)
    w = np.ones((8, 3), np.float32)
    cold = dlc.jit(f).lower(x, w).compile()
    assert list(cold.phase_seconds) == ["trace", "graph", "codegen", "llvm"]
    assert all(s > 0 for s in cold.phase_seconds.values())
    hit = dlc.jit(f).lower(x, w).compile()
    assert list(hit.phase_seconds) == ["trace", "cache"]
    np.testing.assert_array_equal(hit(x, w), cold(x, w))


def test_the_key_covers_every_constant_element():
    # The key hashes the module's text with large constants elided and each
    # constant's bytes (not the module's bytecode): one element changed, in
    # a float, bfloat16 or boolean constant, is another key; equal constants
    # in another array are the same key.
    import ml_dtypes

    from dlc import cache
    rng = np.random.default_rng(5)

    def key_of(constant, fn, dtype=np.float32):
        f = dlc.jit(lambda a: fn(a, constant))
        lowered = f.lower(np.ones((8, 64), dtype))
        return cache.key(lowered._traced, "pipeline", lowered.symbol, [])
    w = rng.standard_normal((64, 64)).astype(np.float32)
    changed = w.copy()
    changed[40, 7] += 1.0
    matmul = lambda a, c: a @ c  # noqa: E731
    assert key_of(w, matmul) == key_of(w.copy(), matmul)
    assert key_of(w, matmul) != key_of(changed, matmul)
    bf16 = ml_dtypes.bfloat16
    assert key_of(w.astype(bf16), matmul, bf16) != key_of(changed.astype(bf16), matmul, bf16)
    mask = rng.random((8, 64)) > 0.5
    flipped = mask.copy()
    flipped[3, 9] = not flipped[3, 9]
    where = lambda a, m: dlc.where(m, a, 0.0)  # noqa: E731
    assert key_of(mask, where) != key_of(flipped, where)


def test_large_constants_are_traced_as_blobs_and_keyed_by_their_bytes():
    # Constants of tracing.RESOURCE_BYTES (64 KiB) or more are traced as
    # dense_resource blobs referencing the array (no copy: a compile from
    # the cache needs only the key); the stages see dense attributes. The
    # key hashes the blob's bytes, not its name (a count in the process).
    from dlc import tracing
    rng = np.random.default_rng(7)
    w = rng.standard_normal((200, 100)).astype(np.float32)  # 80 KB
    small = rng.standard_normal((100, 10)).astype(np.float32)  # 4 KB
    x = rng.standard_normal((4, 200)).astype(np.float32)

    def lowered_with(weight):
        return dlc.jit(lambda a: (a @ weight) @ small).lower(x)

    lowered = lowered_with(w)
    traced = str(lowered._traced)
    assert traced.count("dense_resource<__dlc_constant") == 1 and "dense<" in traced
    assert "dense_resource" not in lowered.as_text("dl")
    np.testing.assert_allclose(lowered.compile()(x), (x @ w) @ small, rtol=1e-4, atol=1e-4)

    def key_of(lowered_):
        return cache.key(lowered_._traced, "pipeline", lowered_.symbol, [])
    copy = w.copy()
    changed = w.copy()
    changed[150, 3] += 1.0
    assert key_of(lowered_with(copy)) == key_of(lowered)  # another blob, same bytes
    assert key_of(lowered_with(changed)) != key_of(lowered)
    # The same array traced again: its blob is reused, not made again.
    again = str(lowered_with(w)._traced)
    name = traced.split("dense_resource<")[1].split(">")[0]
    assert f"dense_resource<{name}>" in again
    # A constant used twice (GPT-2's embedding and its tied output layer) is
    # hashed once: the second use is a reference to the first.
    hashed = []

    class Counting:
        def __init__(self):
            self.inner = cache.blake3.blake3()

        def update(self, data):
            hashed.append(memoryview(data).nbytes)
            self.inner.update(data)

        def hexdigest(self):
            return self.inner.hexdigest()
    twice = dlc.jit(lambda a: a @ w + (a * 2.0) @ w).lower(x)
    original = cache._hasher
    cache._hasher = Counting
    try:
        key_twice = key_of(twice)
    finally:
        cache._hasher = original
    assert w.nbytes <= sum(hashed) < 2 * w.nbytes
    assert key_twice == key_of(dlc.jit(lambda a: a @ w + (a * 2.0) @ w).lower(x))
    # A module from elsewhere with a blob dlc did not make: keyed through its
    # bytecode, the blob's bytes included.
    text = ('module { func.func @f() -> tensor<2xf32> { %c = dl.constant dense_resource<b> : '
            'tensor<2xf32>\n return %c : tensor<2xf32> } }\n{-# dialect_resources: { builtin: '
            '{ b: "0x040000000000803F00000040" } } #-}')
    other = text.replace("0x040000000000803F00000040", "0x040000000000803F00004040")
    with tracing.context():
        from dlc.mlir import ir
        keys = [cache.key(ir.Module.parse(t), "pipeline", "f", []) for t in (text, other)]
    assert keys[0] != keys[1]


def test_a_child_forked_after_its_parent_hashed_weights_compiles():
    # The child hashes again for the key (BLAKE3's thread pool is the
    # parent's), and traces the same array into a blob of its own context.
    import signal
    if not hasattr(os, "fork"):
        pytest.skip("needs fork")
    w = np.random.default_rng(8).standard_normal((200, 100)).astype(np.float32)
    x = np.ones((3, 200), np.float32)
    f = dlc.jit(lambda a: a @ w)
    np.testing.assert_allclose(f(x), x @ w, rtol=1e-4, atol=1e-4)
    pid = os.fork()
    if pid == 0:
        signal.alarm(120)
        try:
            g = dlc.jit(lambda a: (a @ w) * 2.0)
            ok = bool(np.allclose(g(x), (x @ w) * 2, rtol=1e-4, atol=1e-4))
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
