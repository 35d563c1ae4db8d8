"""dlc.Target: the target description every code-generation decision is made
from, resolved from the host or a named CPU; compiling for it; refusing to
run what this machine cannot."""

import numpy as np
import pytest

import dlc

F32 = np.float32


def test_host_describes_this_machine():
    host = dlc.Target.host()
    assert host.arch in ("x86_64", "aarch64")
    assert host.vector_bits in (128, 256, 512)
    assert host.vector_registers in (16, 32)
    assert host.l1d > 0 and host.l2 > host.l1d and host.cache_line in (64, 128)
    assert host.threads >= 1
    assert dlc.Target.host() is host  # resolved once
    assert str(host).startswith("#dl.target<triple = ")
    if host.arch == "x86_64":
        assert host.vector_bits == (512 if host.has_feature("avx512f") else
                                    256 if host.has_feature("avx") else 128)


@pytest.mark.parametrize("cpu,bits,registers,l2,tile", [
    ("znver3", 256, 16, 512 * 1024, (4, 3)),
    ("haswell", 256, 16, 256 * 1024, (4, 3)),
    ("znver4", 512, 32, 1024 * 1024, (6, 4)),
    ("skylake-avx512", 512, 32, 1024 * 1024, (6, 4)),
    ("neoverse-v1", 128, 32, 1024 * 1024, (6, 4)),
])
def test_named_cpus_come_from_the_table(cpu, bits, registers, l2, tile):
    target = dlc.Target(cpu)
    assert (target.cpu, target.vector_bits, target.vector_registers, target.l2) == \
        (cpu, bits, registers, l2)
    assert target.register_tile == tile
    assert target.threads == 1  # another machine: its thread count is unknown
    assert target.lanes(np.float32) == bits // 32
    assert target.lanes(np.float64) == bits // 64
    assert cpu in dlc.Target.known_cpus()


def test_fields_given_win_and_features_change_the_isa():
    target = dlc.Target("znver4", l2=2 << 20, threads=8, features="-avx512f")
    assert (target.l2, target.threads, target.features) == (2 << 20, 8, "-avx512f")
    # Without AVX-512: AVX2's register file, and a tile that fits it.
    assert (target.vector_bits, target.vector_registers) == (256, 16)
    assert target.register_tile == (4, 3)
    assert not target.has_feature("avx512f") and target.has_feature("avx2")


def test_targets_compare_by_their_description():
    assert dlc.Target("znver3") == dlc.Target("znver3")
    assert len({dlc.Target("znver3"), dlc.Target("znver3"), dlc.Target("znver4")}) == 2
    assert dlc.Target("znver3") != dlc.Target("znver3", threads=2)
    assert "znver3" in repr(dlc.Target("znver3"))


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(cpu="pentium9000"), ValueError, "unknown CPU 'pentium9000'"),
    (dict(cpu="znver4", features="avx2"), ValueError, "+name or -name"),
    (dict(cpu="znver4", l2=-1), ValueError, "l2 must be a positive integer"),
    (dict(cpu="znver4", l2=True), ValueError, "l2 must be a positive integer"),
    (dict(cpu="znver4", registers=8), TypeError, "unknown field(s) registers"),
    (dict(cpu="znver4", triple="riscv64"), ValueError, "not one dlc generates CPU code for"),
])
def test_bad_descriptions_are_refused(kwargs, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("+", r"\+")):
        dlc.Target(**kwargs)


def mlp(x, w, b):
    return dlc.relu(x @ w + b)


def mlp_args():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((37, 64)).astype(F32),
            rng.standard_normal((64, 48)).astype(F32),
            rng.standard_normal(48).astype(F32))


@pytest.mark.parametrize("cpu", ["znver3", "haswell", "x86-64"])
def test_code_for_another_x86_cpu_runs_here_and_says_so(cpu):
    """Compiled for a named CPU (its tile, its vector width, LLVM told its
    CPU and features), the code runs here where this CPU has its features,
    with the same results."""
    host = dlc.Target.host()
    target = dlc.Target(cpu)
    if host.arch != "x86_64" or target.why_not_runnable() is not None:
        pytest.skip(f"this machine cannot run {cpu} code")
    f = dlc.jit(mlp, target=target)
    args = mlp_args()
    expected = np.maximum(args[0].astype(np.float64) @ args[1] + args[2], 0)
    np.testing.assert_allclose(f(*args), expected, rtol=1e-4, atol=1e-4)
    lowered = f.lower(*args)
    assert lowered.target == target
    for stage in dlc.STAGES:  # every stage carries the target
        assert f'cpu = "{cpu}"' in lowered.as_text(stage), stage
    llvm = lowered.as_text("llvm")
    assert f'target_cpu = "{cpu}"' in llvm and "target_features" in llvm
    lanes = target.lanes(F32)
    assert f"vector<{lanes}xf32>" in lowered.as_text("vector")
    if lanes < 16:
        assert "vector<16xf32>" not in lowered.as_text("vector")


def test_code_this_machine_cannot_run_is_refused_with_a_reason():
    f = dlc.jit(mlp, target=dlc.Target("neoverse-v1"))
    args = mlp_args()
    # Compiled and shown all the same (NEON: 4 lanes)...
    assert "vector<4xf32>" in f.lower(*args).as_text("vector")
    assert 'target_cpu = "neoverse-v1"' in f.lower(*args).as_text("llvm")
    # ... but not run.
    if dlc.Target.host().arch != "aarch64":
        with pytest.raises(dlc.CompileError, match="cannot run on this machine: it is "
                                                   "compiled for aarch64"):
            f(*args)


def test_missing_isa_features_are_named():
    host = dlc.Target.host()
    wide = dlc.Target("sapphirerapids")
    reason = wide.why_not_runnable(host)
    if host.has_feature("amx-tile"):
        pytest.skip("this machine has Sapphire Rapids' features")
    assert reason is not None and "amx-tile" in reason and host.cpu in reason


def test_target_keyword_is_checked():
    with pytest.raises(ValueError, match="unknown target 'znver3'; targets are: 'cpu', "
                                         "'cuda', or a dlc.Target"):
        dlc.jit(mlp, target="znver3")
