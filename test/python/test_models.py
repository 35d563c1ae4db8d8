"""The real networks of dlc.models, end to end, against PyTorch.

Each network is the one `python -m dlc.bench --models` times (the published
definitions, random weights, randomized batch-norm statistics), here at a
small batch and resolution to keep the suite fast; the reference is the
independent PyTorch definition in dlc.torch_models with the same weights.

Tolerance: the largest absolute difference within 2e-5 of the largest
output magnitude (float32 through 20-50 layers; summation orders differ
between dlc's register tiles and PyTorch's kernels)."""

import numpy as np
import pytest

import dlc
from dlc import models

torch = pytest.importorskip("torch")
from dlc import torch_models  # noqa: E402  (needs torch)

RTOL_OF_MAX = 2e-5


def _check(model, x):
    reference = torch_models.reference(model)
    with torch.no_grad():
        expected = reference(torch.from_numpy(x)).numpy()
    got = dlc.jit(model, constants=True)(x)
    assert got.shape == expected.shape and got.dtype == np.float32
    error = np.abs(got - expected).max() / np.abs(expected).max()
    assert error <= RTOL_OF_MAX, f"relative error {error:.2e}"


def test_resnet18_matches_pytorch():
    x = np.random.default_rng(1).standard_normal((2, 3, 64, 64), dtype=np.float32)
    _check(models.resnet18(num_classes=10, rng=0), x)


def test_mobilenet_v2_matches_pytorch():
    x = np.random.default_rng(2).standard_normal((1, 3, 64, 64), dtype=np.float32)
    _check(models.mobilenet_v2(num_classes=10, rng=0), x)


def test_bert_base_layer_matches_pytorch():
    # BERT-base's dimensions (hidden 768, 12 heads, MLP 3072), short sequences.
    x = np.random.default_rng(3).standard_normal((2, 16, 768), dtype=np.float32)
    _check(models.BertLayer(rng=0), x)


def test_batch_norm_statistics_are_not_trivial():
    model = models.resnet18(num_classes=10, rng=0)
    state = model.state_dict()
    assert np.ptp(state["bn1.running_mean"]) > 0
    assert not np.allclose(state["bn1.running_var"], 1)


def test_reference_refuses_other_models():
    with pytest.raises(TypeError, match="no PyTorch reference"):
        torch_models.reference(dlc.nn.Linear(2, 2))


def test_models_bench_runs_and_checks_each_runtime():
    # The machinery of `python -m dlc.bench --models` (worker processes,
    # output checks, the row of the table), with the peers a test has.
    import argparse
    from dlc import bench_models
    options = argparse.Namespace(threads=1, model_rounds=1, model_block_seconds=0.001,
                                 interleaved=True)
    row = bench_models.run_model("bert_layer", 1, options, runtimes=("dlc", "torch"))
    assert "failed" not in row, row.get("failed")
    assert set(row["ms"]) == {"dlc", "torch"}
    assert row["max_rel_error"]["dlc"] <= RTOL_OF_MAX
    assert row["ratio"]["torch"] > 0 and row["cached_seconds"] >= 0
    assert row["prepare_seconds"]["dlc"] > 0
