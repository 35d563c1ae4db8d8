"""One canonical graph whatever the frontend (issue 32): the same network
imported by ``dlc.from_torch`` (torch.export) and by ``dlc.from_onnx`` (of
``torch.onnx.export``'s file) reaches the same ``dl`` graph: the op
histograms of the two graph stages are equal, constants aside.

The two paths start far apart: torch.export decomposes hard-swish, SiLU and
the attention's safe softmax, writes nn.Linear as a 2-D product between
reshapes and torch.roll as a gather of computed indices; the TorchScript
ONNX exporter writes GELU with Erf, the ONNX importer used to spell
LayerNormalization out, and batch norms come folded into the convolutions.
What brings them together: the torch importer keeps those ops whole
(``torch_importer.KEPT_OPS``), ``dl-raise-ops`` puts written-out layer
norms, GELUs, SiLUs and hard-swishes back into one op each, and the dl
canonicalizations fold reshapes around products, constant gathers, and
bitwise ops on bools.

Models: the zoo's small configurations (dlc.zoo.catalog) of the families
of bench/zoo_speed.py's table, random weights, nothing downloaded.
"""

import collections
import re
import warnings

import pytest

pytest.importorskip("transformers")
pytest.importorskip("timm")
pytest.importorskip("onnx")

import dlc  # noqa: E402
from dlc.zoo import catalog  # noqa: E402
from dlc.zoo.check import _onnx_export  # noqa: E402

#: the zoo speed table's families, as zoo models of small configurations
MODELS = ["timm/resnet50", "timm/efficientnet_b0", "timm/mobilenetv3_small_050",
          "timm/convnext_atto", "timm/regnety_002", "timm/vit_small_patch16_224",
          "timm/deit_tiny_patch16_224", "timm/swin_tiny_patch4_window7_224",
          "transformers/BertModel", "transformers/DistilBertModel",
          "transformers/GPT2LMHeadModel", "transformers/WhisperModel"]

#: (model, op) -> why the two graphs may differ in that op's count
KNOWN = {}


def histogram(text):
    """{dl op: count} of a module's text, constants left out."""
    counts = collections.Counter()
    for line in text.splitlines():
        match = re.match(r"\s*(?:%[^=]+= )?(dl\.[a-z_0-9]+)", line)
        if match and match.group(1) != "dl.constant":
            counts[match.group(1)] += 1
    return counts


def _both_graphs(key):
    import torch
    module, args = catalog.find(key).build()
    arrays = [a.numpy() for a in args]
    with torch.no_grad():
        from_torch = dlc.from_torch(module, *args).lower(*arrays).as_text("graph")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            proto = _onnx_export(module, args, dynamo=False)
        except Exception:  # noqa: BLE001 - TorchScript exporter limits (GPT-2's aten::diff)
            proto = _onnx_export(module, args, dynamo=True)
    names = {i.name for i in proto.graph.input}
    if len(names) < len(arrays):  # the exporter drops inputs the model does not read
        arrays = [a for i, a in enumerate(arrays) if f"args_{i}" in names]
    from_onnx = dlc.from_onnx(proto).lower(*arrays).as_text("graph")
    return histogram(from_torch), histogram(from_onnx)


@pytest.mark.parametrize("key", MODELS)
def test_both_frontends_reach_one_graph(key):
    torch_ops, onnx_ops = _both_graphs(key)
    assert sum(torch_ops.values()) > 10
    differences = {op: (torch_ops[op], onnx_ops[op]) for op in set(torch_ops) | set(onnx_ops)
                   if torch_ops[op] != onnx_ops[op] and (key, op) not in KNOWN}
    assert not differences, f"{key}: dl op counts (from_torch, from_onnx) differ: {differences}"
