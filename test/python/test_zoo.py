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
