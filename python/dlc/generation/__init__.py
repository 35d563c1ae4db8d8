"""Text generation with a key/value cache: a causal language model of
`transformers` compiled by dlc as two functions, the prefill (the prompt, all
its tokens at once) and the decode step (one token), around a static cache.

The cache is `transformers`' own ``StaticCache`` (a fixed ``max_length`` of
key/value slots per layer, written at the token's position and masked past
it), made functional: each compiled function takes the cache tensors as
arguments and returns them updated, so both have static shapes whatever the
position (one compile of the decode step serves every token), and the model
code that runs is the library's (its attention masks, rotary embeddings,
grouped-query attention), imported by :func:`dlc.from_torch`.

    lm = dlc.generation.CausalLM(model, max_length=128)
    tokens = lm.generate(input_ids, max_new_tokens=64)          # greedy
    tokens = lm.generate(input_ids, max_new_tokens=64, do_sample=True,
                         temperature=0.8, top_k=50, seed=0)     # sampling

Greedy tokens equal ``model.generate(input_ids, do_sample=False)``'s (up to
float rounding where two logits tie). ``dlc.generation.generate(model, ...)``
does both steps at once.
"""

import time

import numpy as np

from ..errors import DLCError

__all__ = ["CausalLM", "generate"]


def _cache_keyword(model, cache):
    """The forward's cache argument: ``cache`` (transformers 5.2x, where
    ``past_key_values`` is a deprecated alias) or ``past_key_values``."""
    import inspect
    parameters = inspect.signature(model.forward).parameters
    return {"cache" if "cache" in parameters else "past_key_values": cache}


def _step_module(model, max_length):
    """The torch module dlc compiles: one forward of `model` over `input_ids`
    at positions start, start+1, ... with the cache given as tensors and
    returned updated, and the logits of the last position only."""
    import torch
    from transformers.cache_utils import StaticCache, StaticLayer

    class StaticStep(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, start, *cache):
            static = StaticCache(config=self.model.config, max_cache_len=max_length)
            # sliding-window layers keep a rolling buffer with data-dependent
            # control; a full-length layer holds the same keys (the model's
            # mask still applies its window), as transformers' export recipe does
            static.layers = [StaticLayer(max_length) for _ in static.layers]
            for index, layer in enumerate(static.layers):
                keys, values = cache[2 * index].clone(), cache[2 * index + 1].clone()
                layer.keys, layer.values = keys, values
                layer.device = keys.device
                layer.batch_size, layer.num_heads = keys.shape[:2]
                layer.k_head_dim, layer.v_head_dim = keys.shape[-1], values.shape[-1]
                layer.cumulative_length = start.clone()
                layer.is_initialized = True
            positions = torch.arange(input_ids.shape[1]) + start
            out = self.model(input_ids=input_ids, **_cache_keyword(self.model, static),
                             cache_position=positions, use_cache=True, logits_to_keep=1)
            return (out.logits[:, -1, :],) + tuple(
                t for layer in static.layers for t in (layer.keys, layer.values))

    return StaticStep().eval()


class CausalLM:
    """A causal LM of `transformers` (``...ForCausalLM``), compiled by dlc for
    generation with a static key/value cache of `max_length` positions (the
    prompt and the generated tokens together).

    The prefill compiles once per prompt length and batch size, the decode
    step once per batch size. ``params`` and other keywords go to
    :func:`dlc.from_torch` (``params="arguments"`` reads the weights at each
    call instead of compiling them in). After :meth:`generate`,
    ``last_timing`` holds the seconds of the prefill and of each decode step.
    """

    def __init__(self, model, max_length, **import_kwargs):
        import torch
        if not isinstance(model, torch.nn.Module) or not hasattr(model, "config"):
            raise TypeError(f"dlc.generation.CausalLM expects a transformers model, but "
                            f"got {type(model).__name__}")
        if model.training:
            raise DLCError(f"{type(model).__name__} is in training mode; call .eval() "
                           f"on it first")
        self.model = model
        self.max_length = int(max_length)
        if self.max_length < 2:
            raise ValueError(f"max_length must be at least 2, but got {max_length}")
        self.import_kwargs = import_kwargs
        self.step_module = _step_module(model, self.max_length)
        self._prefill = {}          # (batch, prompt length) -> compiled
        self._decode = {}           # batch -> compiled
        self._cache_shapes = {}     # batch -> [(shape, dtype)] per cache tensor
        self.last_timing = None

    # -- the cache ------------------------------------------------------

    def _shapes(self, batch):
        """Each layer's key and value cache shapes, from one eager forward of
        a token through a fresh StaticCache (whatever the architecture's
        heads, head sizes and layer kinds)."""
        if batch not in self._cache_shapes:
            import torch
            from transformers.cache_utils import StaticCache
            cache = StaticCache(config=self.model.config, max_cache_len=self.max_length)
            with torch.no_grad():
                self.model(input_ids=torch.zeros((batch, 1), dtype=torch.long),
                           **_cache_keyword(self.model, cache), use_cache=True)
            self._cache_shapes[batch] = [
                (tuple(t.shape[:2]) + (self.max_length,) + tuple(t.shape[3:]), t.dtype)
                for layer in cache.layers for t in (layer.keys, layer.values)]
        return self._cache_shapes[batch]

    def empty_cache(self, batch):
        """Zeroed cache tensors for `batch` sequences (numpy, in the order the
        compiled functions take them: layer 0 keys, layer 0 values, ...)."""
        import torch
        return [torch.zeros(shape, dtype=dtype).numpy() for shape, dtype in self._shapes(batch)]

    # -- the compiled functions -----------------------------------------

    def _compiled(self, table, key):
        if key not in table:
            import torch
            from .. import from_torch
            cache = [torch.zeros(shape, dtype=dtype) for shape, dtype in self._shapes(key[0])]
            example = torch.zeros((key[0], key[1]), dtype=torch.long)
            # the cache arguments are donated: each updated cache tensor is
            # written into the memory of the one passed in (no new buffers)
            kwargs = dict(self.import_kwargs)
            kwargs.setdefault("donate_argnums", tuple(range(2, 2 + len(cache))))
            with torch.no_grad():
                table[key] = from_torch(self.step_module, example, torch.tensor(0), *cache,
                                        **kwargs)
        return table[key]

    def prefill(self, input_ids, cache, start=0):
        """Runs the prompt `input_ids` (batch, n) at positions start..start+n-1:
        (logits of the last position, updated cache)."""
        ids = np.ascontiguousarray(np.asarray(input_ids, np.int64))
        batch, n = ids.shape
        fn = self._compiled(self._prefill, (batch, n))
        out = fn(ids, np.asarray(start, np.int64), *cache)
        return out[0], list(out[1:])

    def decode(self, token, cache, position):
        """One token per sequence (batch,) at `position`: (logits, updated cache)."""
        ids = np.asarray(token, np.int64).reshape(-1, 1)
        fn = self._compiled(self._decode, (ids.shape[0], 1))
        out = fn(ids, np.asarray(position, np.int64), *cache)
        return out[0], list(out[1:])

    # -- the loop ---------------------------------------------------------

    def generate(self, input_ids, max_new_tokens, do_sample=False, temperature=1.0,
                 top_k=None, top_p=None, seed=None, eos_token_id=None):
        """The prompt followed by up to `max_new_tokens` generated tokens, as
        an int64 array (batch, prompt + new). Greedy by default; with
        ``do_sample=True``, tokens are drawn from the softmax of the logits
        divided by `temperature`, restricted to the `top_k` most likely and
        to the smallest set whose probability reaches `top_p` (numpy's
        generator, seeded by `seed`). A sequence that produced `eos_token_id`
        is padded with it afterwards."""
        if hasattr(input_ids, "detach"):
            input_ids = input_ids.detach().cpu().numpy()
        ids = np.asarray(input_ids)
        if ids.ndim == 1:
            ids = ids[None]
        if ids.ndim != 2 or ids.dtype.kind not in "iu" or ids.shape[1] == 0:
            raise ValueError(f"input_ids must be a (batch, length) array of token ids, "
                             f"but got shape {ids.shape} and dtype {ids.dtype}")
        batch, prompt = ids.shape
        max_new_tokens = int(max_new_tokens)
        if prompt + max_new_tokens > self.max_length:
            raise ValueError(f"a prompt of {prompt} tokens and {max_new_tokens} new ones "
                             f"need {prompt + max_new_tokens} cache positions, but this "
                             f"CausalLM has max_length={self.max_length}")
        if do_sample and temperature <= 0:
            raise ValueError(f"temperature must be positive, but got {temperature}")
        rng = np.random.default_rng(seed)
        tokens = [ids.astype(np.int64)]
        finished = np.zeros(batch, bool)
        timing = {"prefill": 0.0, "decode": []}
        cache = self.empty_cache(batch)
        start = time.perf_counter()
        logits, cache = self.prefill(ids, cache)
        timing["prefill"] = time.perf_counter() - start
        for step in range(max_new_tokens):
            token = self._choose(logits, do_sample, temperature, top_k, top_p, rng)
            if eos_token_id is not None:
                token = np.where(finished, eos_token_id, token)
                finished |= token == eos_token_id
            tokens.append(token[:, None])
            if step + 1 == max_new_tokens or finished.all():
                break
            start = time.perf_counter()
            logits, cache = self.decode(token, cache, prompt + step)
            timing["decode"].append(time.perf_counter() - start)
        self.last_timing = timing
        return np.concatenate(tokens, axis=1)

    @staticmethod
    def _choose(logits, do_sample, temperature, top_k, top_p, rng):
        logits = np.asarray(logits, np.float64)
        if not do_sample:
            return np.argmax(logits, axis=-1).astype(np.int64)
        logits = logits / temperature
        if top_k is not None and top_k < logits.shape[-1]:
            kth = np.sort(logits, axis=-1)[:, -int(top_k)][:, None]
            logits = np.where(logits < kth, -np.inf, logits)
        probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
        probs /= probs.sum(axis=-1, keepdims=True)
        if top_p is not None and top_p < 1.0:
            order = np.argsort(-probs, axis=-1)
            sorted_probs = np.take_along_axis(probs, order, -1)
            keep_sorted = np.cumsum(sorted_probs, axis=-1) - sorted_probs < top_p
            keep = np.zeros_like(keep_sorted)
            np.put_along_axis(keep, order, keep_sorted, -1)
            probs = np.where(keep, probs, 0.0)
            probs /= probs.sum(axis=-1, keepdims=True)
        return np.array([rng.choice(len(p), p=p) for p in probs], np.int64)


def generate(model, input_ids, max_new_tokens, max_length=None, **kwargs):
    """Compiles `model` (a transformers causal LM) for generation and
    generates: ``CausalLM(model, max_length).generate(input_ids,
    max_new_tokens, **kwargs)``; `max_length` defaults to the prompt plus the
    new tokens."""
    ids = np.asarray(input_ids.detach().cpu().numpy() if hasattr(input_ids, "detach")
                     else input_ids)
    length = max_length or ids.shape[-1] + int(max_new_tokens)
    sampling = {k: kwargs.pop(k) for k in ("do_sample", "temperature", "top_k", "top_p",
                                           "seed", "eos_token_id") if k in kwargs}
    return CausalLM(model, length, **kwargs).generate(ids, max_new_tokens, **sampling)
