"""dlc.generation: transformers causal LMs generating with a compiled prefill
and decode step around a functional static KV cache, against
model.generate (greedy tokens identical) and eager logits."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import dlc  # noqa: E402
from dlc.generation import CausalLM, generate  # noqa: E402

# initializer_range 0.3: logits far apart, so greedy choices do not hinge on
# the last bit of a float (random small models are otherwise near ties)
CONFIGS = {
    "gpt2": lambda: transformers.GPT2Config(vocab_size=99, n_embd=32, n_layer=2, n_head=4,
                                            n_positions=64, initializer_range=0.3),
    "llama": lambda: transformers.LlamaConfig(
        vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=37, max_position_embeddings=64,
        initializer_range=0.3),
    "qwen2": lambda: transformers.Qwen2Config(
        vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=37, max_position_embeddings=64,
        initializer_range=0.3),
}


def _model(name):
    from dlc.zoo.weights import trained_like
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(CONFIGS[name]())
    return trained_like(model).eval()     # biases and norms not the identity


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_greedy_tokens_equal_transformers_generate(name, monkeypatch):
    monkeypatch.setenv("DLC_CACHE_DIR", "off")
    model = _model(name)
    prompt = torch.randint(3, 99, (2, 5), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = model.generate(prompt, do_sample=False, max_new_tokens=12, min_new_tokens=12,
                              pad_token_id=0).numpy()
    lm = CausalLM(model, max_length=20)
    got = lm.generate(prompt, max_new_tokens=12)
    np.testing.assert_array_equal(got, want)
    # one compiled decode step served every position
    assert len(lm._decode) == 1 and len(lm._prefill) == 1
    assert lm.last_timing["prefill"] > 0 and len(lm.last_timing["decode"]) == 11


def test_prefill_and_decode_logits_match_eager():
    model = _model("llama")
    lm = CausalLM(model, max_length=12)
    ids = np.array([[5, 17, 42, 8]], np.int64)
    cache = lm.empty_cache(1)
    logits, cache = lm.prefill(ids[:, :3], cache)
    with torch.no_grad():
        want = model(torch.from_numpy(ids)).logits.numpy()
    np.testing.assert_allclose(logits, want[:, 2], rtol=1e-4, atol=1e-5)
    logits, cache = lm.decode(ids[:, 3], cache, 3)
    np.testing.assert_allclose(logits, want[:, 3], rtol=1e-4, atol=1e-5)
    # the cache holds the four positions written, the rest untouched (zeros)
    assert np.any(cache[0][:, :, :4] != 0) and np.all(cache[0][:, :, 4:] == 0)


def test_sampling_is_seeded_and_respects_top_k():
    model = _model("gpt2")
    lm = CausalLM(model, max_length=16)
    prompt = np.array([[7, 9, 11]], np.int64)
    a = lm.generate(prompt, 8, do_sample=True, temperature=0.7, top_k=5, seed=3)
    b = lm.generate(prompt, 8, do_sample=True, temperature=0.7, top_k=5, seed=3)
    np.testing.assert_array_equal(a, b)
    greedy = lm.generate(prompt, 8)
    # top_k=1 sampling is greedy
    np.testing.assert_array_equal(lm.generate(prompt, 8, do_sample=True, top_k=1, seed=0),
                                  greedy)
    eos = int(greedy[0, 3])          # the first generated token: stops at once
    stopped = lm.generate(prompt, 8, eos_token_id=eos)
    np.testing.assert_array_equal(stopped, greedy[:, :4])


def test_generation_errors_are_clear():
    model = _model("gpt2")
    with pytest.raises(ValueError, match="cache positions"):
        CausalLM(model, max_length=8).generate(np.zeros((1, 5), np.int64), 4)
    with pytest.raises(ValueError, match="token ids"):
        CausalLM(model, max_length=8).generate(np.zeros((1, 5), np.float32), 2)
    with pytest.raises(TypeError, match="transformers model"):
        CausalLM(torch.nn.Linear(2, 2), max_length=8)
    model.train()
    with pytest.raises(dlc.DLCError, match="training mode"):
        CausalLM(model, max_length=8)


def test_generate_shortcut():
    model = _model("qwen2")
    prompt = np.array([[4, 5, 6]], np.int64)
    with torch.no_grad():
        want = model.generate(torch.from_numpy(prompt), do_sample=False, max_new_tokens=4,
                              min_new_tokens=4, pad_token_id=0).numpy()
    np.testing.assert_array_equal(generate(model, prompt, max_new_tokens=4), want)
