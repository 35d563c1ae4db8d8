"""One zoo model through one frontend, compared with PyTorch eager.

Frontends:
  ``torch``             :func:`dlc.from_torch` (``torch.export``)
  ``onnx-dynamo``       ``torch.onnx.export(..., dynamo=True)``, then :func:`dlc.from_onnx`
  ``onnx-torchscript``  ``torch.onnx.export(..., dynamo=False)``, then :func:`dlc.from_onnx`

:func:`check` returns a :class:`Result`: ``ok`` (within tolerance),
``mismatch`` (a wrong answer: a bug), ``unsupported`` (dlc refused with
:class:`dlc.UnsupportedOpError`, listing the operators), ``error`` (any other
dlc failure, with its message), ``export-failed`` (torch's exporter itself
failed: not dlc's to fix, reported as such) or ``model-failed`` (the library
could not build or run the model in eager mode).
"""

import dataclasses
import io
import time
import traceback
import warnings

import numpy as np

__all__ = ["FRONTENDS", "RTOL", "Result", "check"]

FRONTENDS = ("torch", "onnx-dynamo", "onnx-torchscript")

#: accepted max |dlc - eager| / max |eager| (issue 30's bar)
RTOL = 1e-4


@dataclasses.dataclass
class Result:
    model: str
    frontend: str
    status: str
    detail: str = ""
    max_rel_error: float = None
    seconds: float = 0.0


def _short(error, limit=600):
    text = f"{type(error).__name__}: {error}".strip()
    return text if len(text) <= limit else text[:limit] + " ..."


def _onnx_export(module, args, dynamo):
    import onnx
    import torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dynamo:
            program = torch.onnx.export(module, args, dynamo=True, verbose=False)
            return program.model_proto
        buffer = io.BytesIO()
        torch.onnx.export(module, args, buffer, dynamo=False, opset_version=17,
                          input_names=[f"args_{i}" for i in range(len(args))])
        return onnx.load_from_string(buffer.getvalue())


def _outputs(value):
    if isinstance(value, (tuple, list)):
        return [np.asarray(v) for v in value]
    return [np.asarray(value)]


def check(model, frontend):
    """Runs `model` (a :class:`~dlc.zoo.catalog.ZooModel`) through
    `frontend` and compares it with eager."""
    import torch

    import dlc
    start = time.perf_counter()

    def result(status, detail="", error=None):
        return Result(model.key, frontend, status, detail, error,
                      round(time.perf_counter() - start, 2))

    try:
        module, args = model.build()
        with torch.no_grad():
            want = _outputs(module(*args).numpy())
    except Exception as error:  # noqa: BLE001 - the library's own failure
        return result("model-failed", _short(error))
    try:
        if frontend == "torch":
            with torch.no_grad():
                compiled = dlc.from_torch(module, *args)
        else:
            try:
                proto = _onnx_export(module, args, dynamo=frontend == "onnx-dynamo")
            except Exception as error:  # noqa: BLE001 - torch's exporter
                return result("export-failed", _short(error))
            compiled = dlc.from_onnx(proto)
            # an exporter may drop unused inputs; they are named args_<i> then
            present = {i.name for i in proto.graph.input}
            if len(present) < len(args):
                args = [a for i, a in enumerate(args) if f"args_{i}" in present]
        got = _outputs(compiled(*[a.numpy() for a in args]))
    except dlc.UnsupportedOpError as error:
        return result("unsupported", str(error))
    except Exception as error:  # noqa: BLE001 - reported, with the frame
        frame = traceback.extract_tb(error.__traceback__)[-1]
        return result("error", f"{_short(error)} [{frame.filename.split('/')[-1]}:"
                               f"{frame.lineno}]")
    if len(got) != len(want):
        return result("mismatch", f"{len(got)} outputs, eager has {len(want)}")
    worst = 0.0
    for g, w in zip(got, want):
        if g.shape != w.shape:
            return result("mismatch", f"shape {g.shape}, eager {w.shape}")
        if w.dtype.kind == "f":
            scale = max(float(np.max(np.abs(w))), 1e-30) if w.size else 1.0
            diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
            if not np.all(np.isfinite(g) == np.isfinite(w)):
                return result("mismatch", "non-finite values differ", float("inf"))
            rel = float(np.max(np.where(np.isfinite(w), diff, 0.0)) / scale) if w.size else 0.0
            worst = max(worst, rel)
        elif not np.array_equal(g, w):
            return result("mismatch", "integer outputs differ", float("inf"))
    if worst > RTOL:
        return result("mismatch", f"max relative error {worst:.2e} > {RTOL:g}", worst)
    return result("ok", "", worst)
