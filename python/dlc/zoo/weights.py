"""Weights in the state of a trained network, for models built from a
configuration with random weights.

A freshly initialized `transformers` or `timm` model is not a trained one
in the ways a compiler sees: every linear layer's bias is zero, every layer
norm and batch norm is the identity (weight 1, bias 0, running mean 0,
running variance 1), and timm's residual blocks zero the last batch norm's
weight (``zero_init_last``), so the residual branch contributes nothing.
Graph passes fold ``x + 0`` and ``x * 1`` away, so such a model is not the
graph a user's checkpoint gives (a benchmark of it misses every bias add and
norm), and a numerics test of it cannot see a mistake in a bias, a norm's
affine parameters or a whole residual branch.

:func:`trained_like` gives every floating parameter that is constant (all
its elements equal) random values around that constant, and batch norms
random running statistics. Other parameters (already random) and other
buffers (masks, position tables, rotary frequencies) are left alone.
"""

__all__ = ["trained_like"]


def trained_like(module, seed=0):
    """`module` with its constant parameters made random, in place: a
    constant 0 becomes N(0, 0.1^2) (biases, zero-initialized norm weights),
    a constant c becomes c * U(0.5, 1.5) (norm weights, layer scales: sign
    and order of magnitude kept); batch norms' running means N(0, 0.1^2)
    and running variances U(0.5, 1.5). Deterministic in `seed`. Returns
    `module`."""
    import torch

    generator = torch.Generator().manual_seed(seed)

    def constant_value(tensor):
        if tensor.numel() < 2 or not tensor.is_floating_point():
            return None
        flat = tensor.detach().reshape(-1)
        first = flat[0]
        return float(first) if bool(torch.all(flat == first)) else None

    def around(tensor, value):
        noise = torch.rand(tensor.shape, generator=generator, dtype=torch.float64)
        if value == 0:
            fresh = torch.randn(tensor.shape, generator=generator, dtype=torch.float64) * 0.1
        else:
            fresh = value * (0.5 + noise)
        tensor.copy_(fresh.to(tensor.dtype))

    with torch.no_grad():
        for _, parameter in sorted(module.named_parameters(), key=lambda item: item[0]):
            value = constant_value(parameter)
            if value is not None:
                around(parameter, value)
        for name, child in sorted(module.named_modules(), key=lambda item: item[0]):
            if isinstance(child, torch.nn.modules.batchnorm._NormBase) and \
                    child.track_running_stats and child.running_mean is not None:
                around(child.running_mean, 0.0)
                around(child.running_var, 1.0)
    return module
