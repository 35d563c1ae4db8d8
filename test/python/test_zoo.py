"""The zoo tier (issue 30): architectures of `transformers` and `timm`, built
from small configurations with random weights (dlc.zoo.catalog), through
dlc's importers, against PyTorch eager (max |dlc - eager| <= 1e-4 x max |eager|).

The tier (catalog.test_tier): every transformers architecture through
`from_torch`, one of each kind also through torch's `dynamo=True` ONNX
exporter, and the 50 timm architectures that compile fastest through
`from_torch`. Every other pair (the TorchScript-based exporter, the slower
timm models, timm through ONNX) runs in `make zoo`, which writes
docs/zoo.md: compiling all of them takes far longer than the tier's ten
minutes on two cores. The compile cache is off: a cached library cannot hide
a compile failure. A failure of torch's own exporter is skipped with its
message (not dlc's to fix); a refusal or a wrong answer fails, except the
pairs listed in KNOWN with the reason (strict: they fail loudly once fixed).
"""

import pytest

pytest.importorskip("transformers")
pytest.importorskip("timm")

from dlc.zoo import catalog  # noqa: E402
from dlc.zoo.check import check  # noqa: E402

#: (model, frontend) pairs that do not pass yet, and why
KNOWN = {}

MODELS = {m.key: m for m in catalog.all_models()}


def _pairs():
    for model, frontend in catalog.test_tier():
        marks = []
        if (model.key, frontend) in KNOWN:
            marks.append(pytest.mark.xfail(reason=KNOWN[model.key, frontend], strict=True))
        yield pytest.param(model.key, frontend, id=f"{model.key}-{frontend}", marks=marks)


@pytest.mark.parametrize("key, frontend", list(_pairs()))
def test_zoo_model_matches_eager(key, frontend, monkeypatch):
    monkeypatch.setenv("DLC_CACHE_DIR", "off")
    result = check(MODELS[key], frontend)
    if result.status in ("export-failed", "export-wrong", "model-failed"):
        pytest.skip(f"{result.status} (torch/the library, not dlc): {result.detail[:300]}")
    assert result.status == "ok", f"{result.status}: {result.detail}"


def test_zoo_covers_the_issue_families():
    """At least 30 transformers and 50 timm architectures, across the
    families issue 30 names."""
    names = {m.name for m in MODELS.values()}
    assert sum(m.library == "transformers" for m in MODELS.values()) >= 30
    assert sum(m.library == "timm" for m in MODELS.values()) >= 50
    tier = catalog.test_tier()
    assert sum(m.library == "timm" for m, _ in tier) >= 50
    assert {m.key for m, f in tier if m.library == "transformers" and f == "torch"} == \
        {k for k, m in MODELS.items() if m.library == "transformers"}
    for required in ("BertModel", "RobertaModel", "AlbertModel", "DistilBertModel",
                     "ElectraModel", "DebertaV2Model", "XLMRobertaModel", "GPT2LMHeadModel",
                     "GPTNeoForCausalLM", "GPTJForCausalLM", "OPTForCausalLM",
                     "BloomForCausalLM", "FalconForCausalLM", "LlamaForCausalLM",
                     "MistralForCausalLM", "MixtralForCausalLM", "Qwen2ForCausalLM",
                     "PhiForCausalLM", "GemmaForCausalLM", "T5Model", "BartModel",
                     "MarianMTModel", "WhisperModel", "ViTModel", "DeiTModel", "SwinModel",
                     "ConvNextModel", "BeitModel", "SegformerModel", "CLIPModel"):
        assert required in names, required


def test_zoo_markdown_lists_failures_with_reasons():
    from dlc.zoo.__main__ import markdown
    records = [dict(model="transformers/A", frontend="torch", status="ok", detail="",
                    max_rel_error=1e-7, seconds=1.0),
               dict(model="timm/b", frontend="torch", status="unsupported",
                    detail="aten.foo x1: here", max_rel_error=None, seconds=1.0)]
    meta = dict(date="2026-11-27", cpu="test CPU", versions={"torch": "x"},
                frontends=["torch"])
    page = markdown(records, meta)
    assert "**1 of 2**" in page and "test CPU" in page
    assert "`timm/b` / torch — unsupported: aten.foo x1: here" in page


def test_zoo_runner_records_crashes_and_timeouts_and_goes_on():
    """python -m dlc.zoo runs models in worker processes: a worker that dies
    or runs past the limit is a recorded result, and the next model gets a
    fresh worker."""
    from dlc.zoo.__main__ import Worker
    worker = Worker(["torch"])
    try:
        [crashed] = worker.run("timm/no_such_model", timeout=300)
        assert crashed["status"] == "crash" and "no_such_model" in crashed["detail"]
        [late] = worker.run("transformers/BertModel", timeout=0.5)
        assert late["status"] == "timeout"
        [fine] = worker.run("transformers/BertModel", timeout=600)
        assert fine["status"] == "ok", fine
    finally:
        worker.stop()


def test_zoo_models_have_the_weights_of_a_trained_network():
    """A fresh model's zero biases, identity norms and zero-initialized
    residual batch norms would be folded away by the graph passes and hide a
    mistake in them: the zoo's models (and the speed bench's) get random ones
    (dlc.zoo.weights.trained_like), the same for the same seed."""
    import torch

    from dlc.zoo.weights import trained_like

    def fresh():
        torch.manual_seed(0)
        block = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.LayerNorm(6),
                                    torch.nn.Conv2d(6, 5, 1), torch.nn.BatchNorm2d(5))
        torch.nn.init.zeros_(block[0].bias)          # as transformers initializes
        torch.nn.init.zeros_(block[2].bias)
        torch.nn.init.zeros_(block[3].weight)        # timm's zero_init_last
        block[3].num_batches_tracked.fill_(7)
        return block

    block = trained_like(fresh(), seed=3)
    linear, norm, conv, batch_norm = block
    for tensor in (linear.bias, norm.bias, conv.bias, batch_norm.weight, batch_norm.bias,
                   batch_norm.running_mean):
        assert tensor.abs().min() > 0 and tensor.std() > 0.01
    for tensor in (norm.weight, batch_norm.running_var):
        assert 0.5 <= tensor.min() and tensor.max() <= 1.5 and tensor.std() > 0.01
    assert int(batch_norm.num_batches_tracked) == 7      # integer buffers untouched
    untouched = fresh()
    assert torch.equal(linear.weight, untouched[0].weight)   # already random: kept
    assert torch.equal(conv.weight, untouched[2].weight)
    again = trained_like(fresh(), seed=3)
    assert all(torch.equal(a, b) for a, b in zip(block.state_dict().values(),
                                                 again.state_dict().values()))
    other = trained_like(fresh(), seed=4)
    assert not torch.equal(other[0].bias, linear.bias)

    model = catalog.find("transformers/BertModel").build()[0]
    biases = [p for name, p in model.named_parameters() if name.endswith("bias")]
    assert biases and all(bool(torch.any(p != 0)) for p in biases)
