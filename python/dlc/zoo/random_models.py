"""Random but valid PyTorch modules: the programs of the importer fuzzer
(``tools/fuzz/model_fuzz.py``).

A program is a list of steps over a list of values (the inputs first); each
step applies one ``torch`` function, ``Tensor`` method or ``torch.nn`` layer
to earlier values and appends its result. Steps are drawn at random and
kept only when PyTorch itself accepts them on the example inputs (so every
program is valid eager PyTorch), from a catalogue that covers what
``transformers`` and ``timm`` models use: elementwise math with
broadcasting, reductions, softmax, views and shape changes, slicing,
indexing with index tensors and boolean masks, in-place updates of clones
(``index_put``, slice assignment, ``add_``), matmuls, convolutions, pooling,
normalizations, attention, padding and interpolation. The module returns
the values no step reads (up to four, the last first), so no step is dead.

A program is reproducible from ``(seed, index)``; ``build(seed, index,
steps=k)`` keeps its first ``k`` steps (what the shrinker searches) and
``describe`` prints it as Python.

Ops whose result jumps (comparisons, rounding, argmax, sort) only get
"exact" operands: inputs and values made from them by ops that compute
without rounding (views, indexing, negation, max, ...), so that a last-bit
difference of a compiler's ``exp`` cannot flip them.
"""

import dataclasses
import random

__all__ = ["Program", "build", "describe", "program"]

MAX_STEPS = 10


@dataclasses.dataclass
class Step:
    text: str            # the step as Python, e.g. "v3 = torch.relu(v1)"
    fn: object           # fn(values, layers) -> tensor
    exact: bool = False  # computed without rounding from exact operands


@dataclasses.dataclass
class Program:
    seed: int
    index: int
    inputs: list         # example input tensors
    steps: list
    layers: object       # torch.nn.ModuleList of the steps' layers
    outputs: tuple       # value indices returned


def _shape(rng):
    rank = rng.choice([1, 2, 2, 3, 3, 3, 4, 4, 4])
    return tuple(rng.choice([1, 2, 3, 4, 5, 6, 8]) for _ in range(rank))


def _broadcast_partner(rng, shape):
    """A shape that broadcasts against `shape`: some dims set to 1, maybe
    leading dims dropped."""
    partner = [1 if rng.random() < 0.3 else d for d in shape]
    drop = rng.randrange(len(shape) + 1) if rng.random() < 0.3 else 0
    return tuple(partner[drop:])


def _candidates():
    """(name, weight, maker): maker(rng, ctx) -> (text, fn, exact) or None.
    ctx.pick(...) chooses an earlier value; ctx.layer(module) registers a
    layer and returns its index."""
    import torch
    import torch.nn.functional as F

    makers = []

    def op(name, weight=1):
        def register(fn):
            makers.append((name, weight, fn))
            return fn
        return register

    unary = {
        "relu": (torch.relu, True), "gelu": (F.gelu, False), "sigmoid": (torch.sigmoid, False),
        "tanh": (torch.tanh, False), "silu": (F.silu, False), "abs": (torch.abs, True),
        "neg": (torch.neg, True), "sin": (torch.sin, False), "cos": (torch.cos, False),
        "softplus": (F.softplus, False), "elu": (F.elu, False),
        "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), False),
        "hardswish": (F.hardswish, False), "hardsigmoid": (F.hardsigmoid, False),
        "erf": (torch.erf, False), "square": (lambda x: x * x, False),
        "exp_tanh": (lambda x: torch.exp(torch.tanh(x)), False),
        "log1p_abs": (lambda x: torch.log1p(torch.abs(x)), False),
        "sqrt_abs": (lambda x: torch.sqrt(torch.abs(x) + 0.5), False),
        "rsqrt": (lambda x: torch.rsqrt(x * x + 1), False),
        "reciprocal": (lambda x: torch.reciprocal(x * x + 1), False),
        "clamp": (lambda x: torch.clamp(x, -0.5, 0.7), True),
        "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), False),
        "mish": (F.mish, False), "atan": (torch.atan, False),
    }

    @op("unary", 6)
    def _unary(rng, ctx):
        name = rng.choice(sorted(unary))
        fn, exact = unary[name]
        i = ctx.pick()
        return f"{{}} = {name}(v{i})", lambda v, L: fn(v[i]), exact and ctx.exact(i)

    binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
              "maximum": torch.maximum, "minimum": torch.minimum,
              "div": lambda a, b: a / (b * b + 1), "where": lambda a, b: torch.where(a > b, a, b)}

    @op("binary", 6)
    def _binary(rng, ctx):
        name = rng.choice(sorted(binary))
        fn = binary[name]
        i = ctx.pick()
        shape = ctx.shape(i)
        same = [j for j in ctx.indices() if ctx.shape(j) == shape and j != i]
        exact = name in ("maximum", "minimum") and ctx.exact(i)
        if same and rng.random() < 0.5:
            j = rng.choice(same)
            if name == "where" and not (ctx.exact(i) and ctx.exact(j)):
                return None
            return (f"{{}} = {name}(v{i}, v{j})", lambda v, L: fn(v[i], v[j]),
                    exact and ctx.exact(j))
        if rng.random() < 0.3:
            c = round(rng.uniform(-2, 2), 2)
            if name == "where":
                return None
            return f"{{}} = {name}(v{i}, {c})", lambda v, L: fn(v[i], torch.tensor(c)), exact
        partner = _broadcast_partner(rng, shape)
        const = torch.randn(partner, generator=ctx.generator)
        k = ctx.constant(const)
        if name == "where" and not ctx.exact(i):
            return None
        order = rng.random() < 0.5
        text = f"{{}} = {name}(c{k}, v{i})" if order else f"{{}} = {name}(v{i}, c{k})"
        return (text, (lambda v, L: fn(L.constants[k], v[i])) if order else
                (lambda v, L: fn(v[i], L.constants[k])), exact)

    @op("compare", 2)
    def _compare(rng, ctx):
        i = ctx.pick(exact=True)
        if i is None:
            return None
        c = round(rng.uniform(-1, 1), 2)
        kind = rng.choice(["gt", "le", "masked_fill", "logical"])
        if kind == "gt":
            return f"{{}} = (v{i} > {c}).to(v{i}.dtype)", \
                lambda v, L: (v[i] > c).to(v[i].dtype), True
        if kind == "le":
            return f"{{}} = v{i} * (v{i} <= {c})", lambda v, L: v[i] * (v[i] <= c), True
        if kind == "masked_fill":
            return f"{{}} = v{i}.masked_fill(v{i} < {c}, -1e4)", \
                lambda v, L: v[i].masked_fill(v[i] < c, -1e4), True
        return (f"{{}} = torch.where((v{i} > 0) & (v{i} < {abs(c)} + 0.5), v{i}, 0.0)",
                lambda v, L: torch.where((v[i] > 0) & (v[i] < abs(c) + 0.5), v[i], 0.0),
                True)

    @op("reduce", 4)
    def _reduce(rng, ctx):
        i = ctx.pick()
        rank = len(ctx.shape(i))
        dim = rng.randrange(-rank, rank)
        keep = rng.random() < 0.5
        name = rng.choice(["sum", "mean", "amax", "amin", "var", "logsumexp", "norm", "prod"])
        if name == "prod" and ctx.shape(i)[dim] > 4:
            return None
        exact = name in ("amax", "amin") and ctx.exact(i)
        calls = {
            "sum": lambda x: x.sum(dim, keepdim=keep), "mean": lambda x: x.mean(dim, keepdim=keep),
            "amax": lambda x: x.amax(dim, keepdim=keep), "amin": lambda x: x.amin(dim, keepdim=keep),
            "var": lambda x: x.var(dim, keepdim=keep, unbiased=False),
            "logsumexp": lambda x: torch.logsumexp(x, dim, keepdim=keep),
            "norm": lambda x: torch.linalg.vector_norm(x, dim=dim, keepdim=keep),
            "prod": lambda x: x.prod(dim, keepdim=keep)}
        fn = calls[name]
        return f"{{}} = v{i}.{name}({dim}, keepdim={keep})", lambda v, L: fn(v[i]), exact

    @op("argmax", 1)
    def _argmax(rng, ctx):
        i = ctx.pick(exact=True)
        if i is None:
            return None
        dim = rng.randrange(len(ctx.shape(i)))
        name = rng.choice(["argmax", "argmin"])
        return (f"{{}} = v{i}.{name}({dim}).to(v{i}.dtype)",
                lambda v, L: getattr(v[i], name)(dim).to(v[i].dtype), True)

    @op("softmax", 3)
    def _softmax(rng, ctx):
        i = ctx.pick()
        dim = rng.randrange(len(ctx.shape(i)))
        name = rng.choice(["softmax", "log_softmax", "cumsum"])
        fn = {"softmax": F.softmax, "log_softmax": F.log_softmax,
              "cumsum": lambda x, d: torch.cumsum(x, d)}[name]
        return f"{{}} = {name}(v{i}, {dim})", lambda v, L: fn(v[i], dim), False

    @op("view", 5)
    def _view(rng, ctx):
        i = ctx.pick()
        shape = ctx.shape(i)
        rank = len(shape)
        kind = rng.choice(["transpose", "permute", "flatten", "split_dim", "unsqueeze",
                           "squeeze", "reshape_all", "view_contig"])
        if kind == "transpose" and rank >= 2:
            a, b = rng.sample(range(rank), 2)
            return f"{{}} = v{i}.transpose({a}, {b})", lambda v, L: v[i].transpose(a, b), None
        if kind == "permute" and rank >= 2:
            order = list(range(rank))
            rng.shuffle(order)
            return f"{{}} = v{i}.permute({order})", lambda v, L: v[i].permute(order), None
        if kind == "flatten" and rank >= 2:
            a = rng.randrange(rank - 1)
            return (f"{{}} = v{i}.flatten({a}, {a + 1})",
                    lambda v, L: v[i].flatten(a, a + 1), None)
        if kind == "split_dim":
            dims = [d for d in range(rank) if shape[d] % 2 == 0]
            if not dims:
                return None
            d = rng.choice(dims)
            new = shape[:d] + (2, shape[d] // 2) + shape[d + 1:]
            return f"{{}} = v{i}.reshape({new})", lambda v, L: v[i].reshape(new), None
        if kind == "unsqueeze" and rank < 4:
            d = rng.randrange(rank + 1)
            return f"{{}} = v{i}.unsqueeze({d})", lambda v, L: v[i].unsqueeze(d), None
        if kind == "squeeze" and 1 in shape and rank > 1:
            d = shape.index(1)
            return f"{{}} = v{i}.squeeze({d})", lambda v, L: v[i].squeeze(d), None
        if kind == "reshape_all":
            return f"{{}} = v{i}.reshape(-1)", lambda v, L: v[i].reshape(-1), None
        if kind == "view_contig" and rank >= 2:
            # a view of a transposed (non-contiguous) tensor: torch needs
            # contiguous() first, as models write it
            return (f"{{}} = v{i}.transpose(0, 1).contiguous().view(-1)",
                    lambda v, L: v[i].transpose(0, 1).contiguous().view(-1), None)
        return None

    @op("slice", 4)
    def _slice(rng, ctx):
        i, shape, d, n = ctx.pick_dim()
        kind = rng.choice(["range", "step", "select", "flip", "narrow", "negative", "roll"])
        prefix = "".join(":, " for _ in range(d))
        if kind == "range" and n > 1:
            a = rng.randrange(n)
            b = rng.randrange(a + 1, n + 1)
            key = (slice(None),) * d + (slice(a, b),)
            return f"{{}} = v{i}[{prefix}{a}:{b}]", lambda v, L: v[i][key], None
        if kind == "step" and n > 2:
            key = (slice(None),) * d + (slice(None, None, 2),)
            return f"{{}} = v{i}[{prefix}::2]", lambda v, L: v[i][key], None
        if kind == "select" and len(shape) > 1:
            a = rng.randrange(-n, n)
            key = (slice(None),) * d + (a,)
            return f"{{}} = v{i}[{prefix}{a}]", lambda v, L: v[i][key], None
        if kind == "flip":
            return f"{{}} = v{i}.flip({d})", lambda v, L: v[i].flip(d), None
        if kind == "narrow" and n > 1:
            a = rng.randrange(n - 1)
            return (f"{{}} = v{i}.narrow({d}, {a}, {n - a - 1})",
                    lambda v, L: v[i].narrow(d, a, n - a - 1), None)
        if kind == "negative" and n > 1:
            key = (slice(None),) * d + (slice(-n + 1, None),)
            return f"{{}} = v{i}[{prefix}{-n + 1}:]", lambda v, L: v[i][key], None
        if kind == "roll":
            s = rng.randrange(1, n + 1)
            return f"{{}} = v{i}.roll({s}, {d})", lambda v, L: v[i].roll(s, d), None
        return None

    @op("combine", 3)
    def _combine(rng, ctx):
        i, shape, d, _ = ctx.pick_dim()
        kind = rng.choice(["cat", "stack", "expand", "repeat", "chunk"])
        same = [j for j in ctx.indices() if ctx.shape(j) == shape]
        if kind == "cat":
            j = rng.choice(same)
            return (f"{{}} = torch.cat([v{i}, v{j}], {d})",
                    lambda v, L: torch.cat([v[i], v[j]], d), ctx.exact(j))
        if kind == "stack" and len(shape) < 4:
            j = rng.choice(same)
            return (f"{{}} = torch.stack([v{i}, v{j}], {d})",
                    lambda v, L: torch.stack([v[i], v[j]], d), ctx.exact(j))
        if kind == "expand" and 1 in shape:
            new = tuple(3 if s == 1 else s for s in shape)
            return f"{{}} = v{i}.expand({new})", lambda v, L: v[i].expand(new), None
        if kind == "repeat" and len(shape) <= 3:
            reps = tuple(rng.choice([1, 2]) for _ in shape)
            return f"{{}} = v{i}.repeat({reps})", lambda v, L: v[i].repeat(reps), None
        if kind == "chunk" and shape[d] >= 2:
            return (f"{{}} = v{i}.chunk(2, {d})[1]",
                    lambda v, L: v[i].chunk(2, d)[1], None)
        return None

    @op("index", 4)
    def _index(rng, ctx):
        i, shape, d, n = ctx.pick_dim()
        kind = rng.choice(["index_select", "gather", "advanced", "advanced2", "take_last",
                           "bool_mask"])
        idx = [rng.randrange(-n if kind == "advanced" else 0, n)
               for _ in range(rng.randint(1, 4))]
        if kind == "index_select":
            return (f"{{}} = v{i}.index_select({d}, tensor({idx}))",
                    lambda v, L: v[i].index_select(d, torch.tensor(idx)), None)
        if kind == "gather":
            index_shape = list(shape)
            index_shape[d] = rng.randint(1, 3)
            index = torch.randint(0, n, index_shape, generator=ctx.generator)
            k = ctx.constant(index)
            return (f"{{}} = v{i}.gather({d}, c{k})",
                    lambda v, L: v[i].gather(d, L.constants[k]), None)
        if kind == "advanced":
            key_text = ":, " * d
            key = (slice(None),) * d + (torch.tensor(idx),)
            return f"{{}} = v{i}[{key_text}tensor({idx})]", lambda v, L: v[i][key], None
        if kind == "advanced2" and len(shape) >= 2:
            rows = [rng.randrange(shape[0]) for _ in range(3)]
            cols = [rng.randrange(shape[1]) for _ in range(3)]
            return (f"{{}} = v{i}[tensor({rows}), tensor({cols})]",
                    lambda v, L: v[i][torch.tensor(rows), torch.tensor(cols)], None)
        if kind == "take_last" and len(shape) >= 2:
            return f"{{}} = v{i}[..., -1]", lambda v, L: v[i][..., -1], None
        if kind == "bool_mask" and len(shape) >= 2:
            # a boolean mask of constant values: the result's shape is known
            mask = torch.rand(shape[0], generator=ctx.generator) < 0.6
            mask[0] = True
            k = ctx.constant(mask)
            return f"{{}} = v{i}[c{k}]", lambda v, L: v[i][L.constants[k]], None
        return None

    @op("inplace", 3)
    def _inplace(rng, ctx):
        i, shape, d, n = ctx.pick_dim()
        kind = rng.choice(["index_put", "slice_set", "add_", "masked_fill_", "index_add",
                           "scatter"])
        key = (slice(None),) * d
        prefix = ":, " * d
        if kind == "index_put":
            idx = sorted({rng.randrange(n) for _ in range(2)})
            full = key + (torch.tensor(idx),)

            def fn(v, L):
                y = v[i].clone()
                y[full] = 0.5
                return y
            return f"{{}} = v{i}.clone(); {{}}[{prefix}tensor({idx})] = 0.5", fn, None
        if kind == "slice_set":
            a = rng.randrange(n)
            full = key + (slice(a, None),)

            def fn(v, L):
                y = v[i].clone()
                y[full] = v[i][full] * 2
                return y
            return (f"{{}} = v{i}.clone(); {{}}[{prefix}{a}:] = v{i}[{prefix}{a}:] * 2",
                    fn, ctx.exact(i))
        if kind == "add_":
            def fn(v, L):
                y = v[i].clone()
                y.add_(1.5)
                y.mul_(0.5)
                return y
            return f"{{}} = v{i}.clone(); {{}}.add_(1.5); {{}}.mul_(0.5)", fn, False
        if kind == "masked_fill_" and ctx.exact(i):
            def fn(v, L):
                y = v[i].clone()
                y.masked_fill_(y > 0.3, 0.0)
                return y
            return f"{{}} = v{i}.clone(); {{}}.masked_fill_({{}} > 0.3, 0.0)", fn, True
        if kind == "index_add":
            idx = [rng.randrange(n) for _ in range(2)]
            src_shape = list(shape)
            src_shape[d] = 2
            k = ctx.constant(torch.randn(src_shape, generator=ctx.generator))
            return (f"{{}} = v{i}.index_add({d}, tensor({idx}), c{k})",
                    lambda v, L: v[i].index_add(d, torch.tensor(idx), L.constants[k]), False)
        if kind == "scatter":
            # a permutation along d: two writes to one place have no defined
            # order (torch's and ONNX's documents say so)
            index = torch.argsort(torch.rand(shape, generator=ctx.generator), dim=d)
            k = ctx.constant(index)
            return (f"{{}} = zeros_like(v{i}).scatter({d}, c{k}, v{i})",
                    lambda v, L: torch.zeros_like(v[i]).scatter(d, L.constants[k], v[i]),
                    None)
        return None

    @op("linear", 4)
    def _linear(rng, ctx):
        i = ctx.pick()
        features = ctx.shape(i)[-1]
        kind = rng.choice(["linear", "layer_norm", "matmul", "bmm_self", "einsum"])
        if kind == "linear":
            out = rng.choice([1, 3, 4, 8])
            k = ctx.layer(torch.nn.Linear(features, out, bias=rng.random() < 0.7))
            return f"{{}} = Linear({features}, {out})(v{i})", lambda v, L: L[k](v[i]), False
        if kind == "layer_norm":
            k = ctx.layer(torch.nn.LayerNorm(features))
            with torch.no_grad():
                L = ctx.layers[k]
                L.weight.uniform_(0.5, 1.5, generator=ctx.generator)
                L.bias.uniform_(-0.5, 0.5, generator=ctx.generator)
            return f"{{}} = LayerNorm({features})(v{i})", lambda v, L: L[k](v[i]), False
        if kind == "matmul" and len(ctx.shape(i)) >= 2:
            return (f"{{}} = v{i} @ v{i}.transpose(-1, -2)",
                    lambda v, L: v[i] @ v[i].transpose(-1, -2), False)
        if kind == "bmm_self" and len(ctx.shape(i)) == 3:
            return (f"{{}} = torch.bmm(v{i}.transpose(1, 2), v{i})",
                    lambda v, L: torch.bmm(v[i].transpose(1, 2), v[i]), False)
        if kind == "einsum" and len(ctx.shape(i)) == 4:
            return (f"{{}} = einsum('bhqd,bhkd->bhqk', v{i}, v{i})",
                    lambda v, L: torch.einsum("bhqd,bhkd->bhqk", v[i], v[i]), False)
        return None

    @op("attention", 1)
    def _attention(rng, ctx):
        i = ctx.pick(rank=4)
        if i is None:
            return None
        causal = rng.random() < 0.5
        return (f"{{}} = scaled_dot_product_attention(v{i}, v{i}, v{i}, is_causal={causal})",
                lambda v, L: F.scaled_dot_product_attention(v[i], v[i], v[i],
                                                            is_causal=causal), False)

    @op("conv", 4)
    def _conv(rng, ctx):
        i = ctx.pick(rank=(3, 4))
        if i is None:
            return None
        shape = ctx.shape(i)
        channels = shape[1]
        kind = rng.choice(["conv", "conv", "pool", "norm", "interpolate", "pad"])
        spatial = shape[2:]
        if kind == "conv":
            groups = channels if rng.random() < 0.3 else 1
            out = channels * rng.choice([1, 2]) if groups > 1 else rng.choice([1, 2, 4])
            kernel = rng.choice([1, 2, 3])
            stride = rng.choice([1, 1, 2])
            padding = rng.choice([0, 1])
            dilation = rng.choice([1, 1, 2])
            cls = torch.nn.Conv1d if len(shape) == 3 else torch.nn.Conv2d
            layer = cls(channels, out, kernel, stride=stride, padding=padding,
                        dilation=dilation, groups=groups, bias=rng.random() < 0.7)
            k = ctx.layer(layer)
            return (f"{{}} = {cls.__name__}({channels}, {out}, {kernel}, stride={stride}, "
                    f"padding={padding}, dilation={dilation}, groups={groups})(v{i})",
                    lambda v, L: L[k](v[i]), False)
        if kind == "pool" and len(shape) == 4:
            kernel = rng.choice([2, 3])
            if min(spatial) < kernel:
                return None
            name = rng.choice(["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"])
            if name == "adaptive_avg_pool2d":
                return (f"{{}} = adaptive_avg_pool2d(v{i}, 1)",
                        lambda v, L: F.adaptive_avg_pool2d(v[i], 1), False)
            fn = getattr(F, name)
            return (f"{{}} = {name}(v{i}, {kernel}, stride=2)",
                    lambda v, L: fn(v[i], kernel, stride=2), name == "max_pool2d" and
                    ctx.exact(i))
        if kind == "norm" and len(shape) == 4:
            if rng.random() < 0.5:
                bn = torch.nn.BatchNorm2d(channels).eval()
                with torch.no_grad():
                    bn.running_mean.uniform_(-0.5, 0.5, generator=ctx.generator)
                    bn.running_var.uniform_(0.5, 2.0, generator=ctx.generator)
                    bn.weight.uniform_(0.5, 1.5, generator=ctx.generator)
                k = ctx.layer(bn)
                return f"{{}} = BatchNorm2d({channels})(v{i})", lambda v, L: L[k](v[i]), False
            groups = 1 if channels % 2 else 2
            k = ctx.layer(torch.nn.GroupNorm(groups, channels))
            return (f"{{}} = GroupNorm({groups}, {channels})(v{i})",
                    lambda v, L: L[k](v[i]), False)
        if kind == "interpolate" and len(shape) == 4:
            mode = rng.choice(["nearest", "bilinear"])
            return (f"{{}} = interpolate(v{i}, scale_factor=2, mode={mode!r})",
                    lambda v, L: F.interpolate(v[i], scale_factor=2, mode=mode), mode ==
                    "nearest" and ctx.exact(i))
        if kind == "pad":
            mode = rng.choice(["constant", "reflect", "replicate"])
            if mode == "reflect" and min(spatial) < 2:
                return None
            pads = [1, 0] * (len(shape) - 2)
            return (f"{{}} = pad(v{i}, {pads}, mode={mode!r})",
                    lambda v, L: F.pad(v[i], pads, mode=mode), ctx.exact(i))
        return None

    @op("transformer", 3)
    def _transformer(rng, ctx):
        """The patterns transformers' models are made of."""
        i = ctx.pick()
        shape = ctx.shape(i)
        last = shape[-1]
        kind = rng.choice(["rms_norm", "rotate_half", "glu", "causal_mask", "padding_mask",
                           "normalize", "finfo_fill", "embedding"])
        if kind == "rms_norm":
            return (f"{{}} = v{i} * rsqrt(v{i}.pow(2).mean(-1, keepdim=True) + 1e-6)",
                    lambda v, L: v[i] * torch.rsqrt(v[i].pow(2).mean(-1, keepdim=True) + 1e-6),
                    False)
        if kind == "rotate_half" and last % 2 == 0:
            half = last // 2
            return (f"{{}} = cat([-v{i}[..., {half}:], v{i}[..., :{half}]], -1)",
                    lambda v, L: torch.cat([-v[i][..., half:], v[i][..., :half]], -1),
                    ctx.exact(i))
        if kind == "glu" and last % 2 == 0:
            return (f"{{}} = silu(v{i}.chunk(2, -1)[0]) * v{i}.chunk(2, -1)[1]",
                    lambda v, L: F.silu(v[i].chunk(2, -1)[0]) * v[i].chunk(2, -1)[1], False)
        if kind == "causal_mask" and len(shape) >= 2 and shape[-1] == shape[-2]:
            n = last
            return (f"{{}} = softmax(v{i}.masked_fill(triu(ones({n}, {n}), 1).bool(), "
                    f"-inf), -1)",
                    lambda v, L: F.softmax(v[i].masked_fill(
                        torch.triu(torch.ones(n, n), 1).bool(), float("-inf")), -1), False)
        if kind == "padding_mask" and len(shape) >= 2:
            keep = torch.ones(last)
            keep[rng.randrange(1, last + 1):] = 0
            k = ctx.constant(keep)
            return (f"{{}} = softmax(v{i} + (1 - c{k}) * finfo.min, -1)",
                    lambda v, L: F.softmax(v[i] + (1.0 - L.constants[k]) *
                                           torch.finfo(v[i].dtype).min, -1), False)
        if kind == "normalize":
            return (f"{{}} = normalize(v{i}, dim=-1)",
                    lambda v, L: F.normalize(v[i], dim=-1), False)
        if kind == "finfo_fill" and ctx.exact(i):
            return (f"{{}} = v{i}.masked_fill(v{i} > 0.5, finfo.min).amax(-1)",
                    lambda v, L: v[i].masked_fill(v[i] > 0.5, torch.finfo(v[i].dtype).min)
                    .amax(-1), True)
        if kind == "embedding":
            rows = rng.choice([4, 9])
            k = ctx.layer(torch.nn.Embedding(rows, last))
            ids = [rng.randrange(rows) for _ in range(rng.randint(1, 5))]
            return (f"{{}} = v{i} [..., :1] + Embedding({rows}, {last})(tensor({ids}))",
                    lambda v, L: v[i][..., :1] + L[k](torch.tensor(ids)), False)
        return None

    @op("sort", 1)
    def _sort(rng, ctx):
        # on inputs only: values with ties have no one sorted order
        i = rng.randrange(len(ctx.program_inputs))
        shape = ctx.shape(i)
        d = rng.randrange(len(shape))
        if rng.random() < 0.5:
            k = rng.randint(1, shape[d])
            return (f"{{}} = v{i}.topk({k}, {d}).values", lambda v, L: v[i].topk(k, d).values,
                    True)
        return f"{{}} = v{i}.sort({d}).values", lambda v, L: v[i].sort(d).values, True

    @op("dtype", 1)
    def _dtype(rng, ctx):
        i = ctx.pick()
        kind = rng.choice(["double", "int", "bool", "uint8"])
        if kind == "double":
            return (f"{{}} = v{i}.double().to(v{i}.dtype)",
                    lambda v, L: v[i].double().to(v[i].dtype), ctx.exact(i))
        if kind == "int" and ctx.exact(i):
            return (f"{{}} = (v{i} * 4).long().to(v{i}.dtype)",
                    lambda v, L: (v[i] * 4).long().to(v[i].dtype), False)
        if kind == "bool" and ctx.exact(i):
            return (f"{{}} = (v{i}.bool() & (v{i} > 0)).to(v{i}.dtype)",
                    lambda v, L: (v[i].bool() & (v[i] > 0)).to(v[i].dtype), True)
        if kind == "uint8" and ctx.exact(i):
            # unsigned bytes: saturating conversion, floor division, max and
            # a comparison past 127 (where a signed reading would differ)
            def u8(x, sign):
                return (x * sign * 37).round().clamp(0, 255).to(torch.uint8)

            def fn(v, L):
                a, b = u8(v[i], 1), u8(v[i], -1)
                return (torch.maximum(a // 3, b) + (a > 130)).to(v[i].dtype)
            a = f"(v{i} * 37).round().clamp(0, 255).to(torch.uint8)"
            b = f"(v{i} * -37).round().clamp(0, 255).to(torch.uint8)"
            return (f"{{}} = (torch.maximum({a} // 3, {b}) + ({a} > 130)).to(v{i}.dtype)",
                    fn, False)
        return None

    return makers


class _Layers:
    """The layers and constant tensors of a program (an nn.Module, so that
    torch.export sees parameters and buffers)."""

    def __init__(self):
        import torch
        self.modules = torch.nn.ModuleList()
        self.constants = []

    def __getitem__(self, k):
        return self.modules[k]


class _Context:
    def __init__(self, rng, values, exact, program_inputs, generator):
        self.rng, self.values, self._exact = rng, values, exact
        self.program_inputs = program_inputs
        self.generator = generator
        self.layers = _Layers()

    def indices(self):
        return range(len(self.values))

    def shape(self, i):
        return tuple(self.values[i].shape)

    def exact(self, i):
        return self._exact[i]

    def pick(self, exact=False, rank=None):
        """An earlier value (recent ones more likely), or None."""
        choices = [j for j in self.indices()
                   if (not exact or self._exact[j]) and
                   (rank is None or len(self.shape(j)) in
                    (rank if isinstance(rank, tuple) else (rank,)))]
        if not choices:
            return None
        weights = [1 + 2 * (j >= len(self.values) - 2) for j in choices]
        return self.rng.choices(choices, weights)[0]

    def pick_dim(self):
        """(value, its shape, one of its dimensions, that dimension's size)."""
        i = self.pick()
        shape = self.shape(i)
        d = self.rng.randrange(len(shape))
        return i, shape, d, shape[d]

    def layer(self, module):
        self.layers.modules.append(module)
        return len(self.layers.modules) - 1

    def constant(self, tensor):
        self.layers.constants.append(tensor)
        return len(self.layers.constants) - 1


def program(seed, index):
    """The program of `(seed, index)`: random inputs and up to MAX_STEPS
    steps, each kept only when eager PyTorch accepts it and its result is
    small and finite."""
    import torch
    rng = random.Random(f"model-fuzz:{seed}:{index}")
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 31))
    torch.manual_seed(rng.randrange(2 ** 31))
    shape = _shape(rng)
    inputs = [torch.randn(shape, generator=generator)]
    if rng.random() < 0.5:
        other = shape if rng.random() < 0.6 else _shape(rng)
        inputs.append(torch.randn(other, generator=generator))
    values = list(inputs)
    exact = [True] * len(inputs)
    ctx = _Context(rng, values, exact, inputs, generator)
    makers = _candidates()
    weights = [w for _, w, _ in makers]
    steps = []
    target = rng.randint(2, MAX_STEPS)
    attempts = 0
    while len(steps) < target and attempts < 20 * MAX_STEPS:
        attempts += 1
        _, _, maker = rng.choices(makers, weights)[0]
        layers_before = len(ctx.layers.modules)
        constants_before = len(ctx.layers.constants)
        made = maker(rng, ctx)
        if made is None:
            continue
        text, fn, step_exact = made
        try:
            with torch.no_grad():
                value = fn(values, ctx.layers)
        except Exception:  # noqa: BLE001 - torch refused this step: draw another
            value = None
        if (not isinstance(value, torch.Tensor) or value.dim() == 0 or value.numel() == 0
                or value.numel() > 4096 or not value.dtype.is_floating_point
                or not torch.isfinite(value).all() or value.abs().max() > 1e4):
            del ctx.layers.modules[layers_before:]
            del ctx.layers.constants[constants_before:]
            continue
        if step_exact is None:  # a view or an indexing: exact if its operand is
            step_exact = all(exact[int(t)] for t in _operands(text))
        name = f"v{len(values)}"
        steps.append(Step(text.format(*([name] * text.count("{}"))), fn, bool(step_exact)))
        values.append(value)
        exact.append(bool(step_exact))
    return Program(seed, index, inputs, steps, ctx.layers,
                   _leaves(len(inputs), steps))


def _leaves(count, steps):
    """The values no later step reads (so that no step is dead code), the
    last value first; at most four."""
    used = {int(t) for step in steps for t in _operands(step.text)}
    leaves = [count + k for k in range(len(steps)) if count + k not in used]
    leaves = leaves[::-1][:4] or [count - 1]
    return tuple(leaves)


def _operands(text):
    import re
    return re.findall(r"\bv(\d+)\b", text.split("=", 1)[1])


def build(seed, index, steps=None):
    """(module, example_args) of the program, keeping its first `steps`
    steps (all by default) and returning the values no kept step reads."""
    import torch
    prog = program(seed, index)
    kept = prog.steps if steps is None else prog.steps[:steps]
    outputs = _leaves(len(prog.inputs), kept)

    class RandomProgram(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = prog.layers.modules
            for k, c in enumerate(prog.layers.constants):
                self.register_buffer(f"c{k}", c.clone())
            self.constants = prog.layers.constants

        def forward(self, *inputs):
            values = list(inputs)
            library = _Bound(self)
            for step in kept:
                values.append(step.fn(values, library))
            result = tuple(values[o] for o in outputs)
            return result[0] if len(result) == 1 else result

    return RandomProgram().eval(), tuple(prog.inputs)


class _Bound:
    """What a step's fn sees as its layers: the module's layers, and its
    constants as the module's buffers (so torch.export records them)."""

    def __init__(self, module):
        self.module = module
        self.constants = [getattr(module, f"c{k}") for k in range(len(module.constants))]

    def __getitem__(self, k):
        return self.module.layers[k]


def describe(seed, index, steps=None):
    """The program as Python-like text: inputs, steps, outputs."""
    prog = program(seed, index)
    kept = prog.steps if steps is None else prog.steps[:steps]
    lines = [f"# random program {seed}/{index}" +
             ("" if steps is None else f", first {steps} steps")]
    for k, x in enumerate(prog.inputs):
        lines.append(f"v{k} = randn{tuple(x.shape)}")
    for k, c in enumerate(prog.layers.constants):
        lines.append(f"c{k}: {c.dtype} {tuple(c.shape)} constant")
    lines += [s.text for s in kept]
    outputs = _leaves(len(prog.inputs), kept)
    lines.append("return " + ", ".join(f"v{o}" for o in outputs))
    return "\n".join(lines)
