"""Importers: models people already have, compiled by dlc.

- :func:`from_onnx` - an ONNX model (file, bytes or ModelProto);
- :func:`from_torch` - a PyTorch ``nn.Module`` through ``torch.export``.

Each translates its model into `dl` through dlc's own ops (one converter per
operator, in a table per frontend: :data:`onnx_ops.CONVERTERS`,
:data:`torch_ops.CONVERTERS`) and returns a compiled callable. ``onnx`` and
``torch`` are imported only when their frontend is used.
"""

from .common import ImportedFunction


def from_onnx(model, **kwargs):
    from .onnx_importer import from_onnx as convert
    return convert(model, **kwargs)


def from_torch(module, *example_args, **kwargs):
    from .torch_importer import from_torch as convert
    return convert(module, *example_args, **kwargs)


from_onnx.__doc__ = "See :func:`dlc.frontends.onnx_importer.from_onnx`."
from_torch.__doc__ = "See :func:`dlc.frontends.torch_importer.from_torch`."

__all__ = ["from_onnx", "from_torch", "ImportedFunction"]
