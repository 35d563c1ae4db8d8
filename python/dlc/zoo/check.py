"""One zoo model through one frontend, compared with PyTorch eager.

Frontends:
  ``torch``             :func:`dlc.from_torch` (``torch.export``)
  ``onnx-dynamo``       ``torch.onnx.export(..., dynamo=True)``, then :func:`dlc.from_onnx`
  ``onnx-torchscript``  ``torch.onnx.export(..., dynamo=False)``, then :func:`dlc.from_onnx`
  ``torch-dynamic``     :func:`dlc.from_torch` with ``dynamic_batch=True``, run at the
                        example's batch size and at one more
  ``torch-dynamic-seq`` :func:`dlc.from_torch` with the batch and the sequence of every
                        text input dynamic (``dynamic_shapes``): one compiled function
                        run at the example's shape, a longer and a shorter sequence
                        and another batch (text models only: their inputs are token
                        ids and masks of one [batch, seq] shape)
  ``onnx-dynamic-seq``  the same through ``torch.onnx.export(..., dynamo=True,
                        dynamic_shapes=...)`` and :func:`dlc.from_onnx` with
                        ``dynamic_dims=True``
  ``torch-dynamic-image`` :func:`dlc.from_torch` with the batch, the height and the
                        width of an image model dynamic (height and width as
                        multiples of 32, which torch.export asks of networks that
                        downsample five times): one compiled function run at four
                        image sizes (image models only: one float [N, C, H, W] input)
  ``onnx-dynamic-image`` the same through the dynamo ONNX exporter and
                        :func:`dlc.from_onnx` with ``dynamic_dims=True``

:func:`check` returns a :class:`Result`: ``ok`` (within tolerance),
``mismatch`` (a wrong answer: a bug), ``unsupported`` (dlc refused with
:class:`dlc.UnsupportedOpError`, listing the operators, or with
:class:`dlc.DataDependentShapeError`: a shape that depends on the data),
``error`` (any other dlc failure, with its message), ``export-failed``
(torch's exporter itself failed), ``export-wrong`` (the exported ONNX model
computes something else than eager, as onnx's reference evaluator shows,
and dlc computes it as the reference does) or ``model-failed`` (the library
could not build or run the model in eager mode). The last three are not
dlc's to fix, and are reported as such.
"""

import dataclasses
import io
import time
import traceback
import warnings

import numpy as np

__all__ = ["DEFAULT_FRONTENDS", "FRONTENDS", "RTOL", "Result", "check"]

FRONTENDS = ("torch", "onnx-dynamo", "onnx-torchscript", "torch-dynamic",
             "torch-dynamic-seq", "onnx-dynamic-seq", "torch-dynamic-image",
             "onnx-dynamic-image")
#: what the zoo runs unless told (torch-dynamic: the importer fuzzer's)
DEFAULT_FRONTENDS = FRONTENDS[:3]

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
        return [_array(v) for v in value]
    return [_array(value)]


def _array(value):
    return value.detach().numpy() if hasattr(value, "detach") else np.asarray(value)


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
            want = _outputs(module(*args))
    except Exception as error:  # noqa: BLE001 - the library's own failure
        return result("model-failed", _short(error))
    if frontend in ("torch-dynamic-seq", "onnx-dynamic-seq"):
        return _check_dynamic_seq(model, module, args, want, result,
                                  onnx=frontend == "onnx-dynamic-seq")
    if frontend in ("torch-dynamic-image", "onnx-dynamic-image"):
        return _check_dynamic_image(model, module, args, want, result,
                                    onnx=frontend == "onnx-dynamic-image")
    proto = None
    try:
        if frontend in ("torch", "torch-dynamic"):
            with torch.no_grad():
                compiled = dlc.from_torch(module, *args,
                                          dynamic_batch=frontend == "torch-dynamic")
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
        if frontend == "torch-dynamic":
            # the same compiled function at another batch size: one row more
            args2 = [torch.cat([a, a[:1]]) if a.dim() else a for a in args]
            try:
                with torch.no_grad():
                    want2 = _outputs(module(*args2))
            except Exception as error:  # noqa: BLE001 - the model's own limit
                return result("model-failed", f"eager fails at batch "
                                              f"{args2[0].shape[0] if args2 else '?'}: "
                                              f"{_short(error)}")
            got2 = _outputs(compiled(*[a.numpy() for a in args2]))
    except (dlc.UnsupportedOpError, dlc.DataDependentShapeError) as error:
        return result("unsupported", str(error))
    except Exception as error:  # noqa: BLE001 - reported, with the frame
        if isinstance(error, dlc.ModelImportError) and \
                "torch.export could not capture" in str(error):
            return result("export-failed", _short(error))  # torch.export's own failure
        frame = traceback.extract_tb(error.__traceback__)[-1]
        return result("error", f"{_short(error)} [{frame.filename.split('/')[-1]}:"
                               f"{frame.lineno}]")
    status, detail, worst = _verdict(model, module, args, got, want)
    if status == "ok" and frontend == "torch-dynamic":
        status, detail, worst2 = _verdict(model, module, args2, got2, want2)
        worst = max(worst, worst2 if worst2 is not None else float("inf"))
        if status != "ok":
            return result("mismatch", f"at batch {args2[0].shape[0]}: {detail}", worst)
    if status == "ok":
        return result("ok", detail, worst)
    if proto is not None and _exporter_wrong(proto, args, got, want):
        return result("export-wrong", f"{detail}; onnx's reference evaluator computes "
                                      f"the exported model as dlc does: torch's exporter "
                                      f"changed the computation", worst)
    return result("mismatch", detail, worst)


def is_text(args):
    """Whether a model's example inputs are text: integer [batch, seq]
    tensors of one shape (ids, masks, token types)."""
    import torch
    return bool(args) and all(a.dim() == 2 and not torch.is_floating_point(a) and
                              a.shape == args[0].shape for a in args)


def is_image(args):
    """Whether a model's example input is one float image [N, C, H, W]."""
    import torch
    return len(args) == 1 and args[0].dim() == 4 and torch.is_floating_point(args[0])


def _check_dynamic_image(model, module, args, want, result, onnx=False):
    import torch
    if not is_image(args):
        return result("model-failed", "the dynamic-image frontends take image models "
                                      "only (one float [N, C, H, W] input)")
    # The example at batch 2 and 64x64 (the catalog's are as small as each
    # model takes; torch.export specializes sizes of 1, and 2 x 32 keeps the
    # last feature map larger than 1x1).
    n, c, h, w = 2, args[0].shape[1], 64, 64
    torch.manual_seed(0)
    args = [torch.randn(n, c, h, w)]
    try:
        with torch.no_grad():
            want = _outputs(module(*args))
    except Exception as error:  # noqa: BLE001 - the model takes one size only
        return result("model-failed", f"eager does not run at 64x64: {_short(error)}")
    dims = {0: torch.export.Dim("batch", min=1, max=16),
            2: 32 * torch.export.Dim("h32", min=2, max=12),
            3: 32 * torch.export.Dim("w32", min=2, max=12)}
    torch.manual_seed(1)
    cases = [((n, h, w), args, want)] + [
        (shape, [torch.randn(shape[0], c, *shape[1:])], None)
        for shape in [(n, h + 32, w + 64), (1, 64, 96), (n + 1, 96, 64)]]
    return _judge_dynamic(model, module, result, (dims,), onnx, cases,
                          "[batch, height, width]", "image")


def _judge_dynamic(model, module, result, shapes, onnx, cases, axes, what):
    """Imports the module once with torch.export's `shapes` (through the
    dynamo ONNX exporter where `onnx`) at the first case's inputs, calls the
    function at each case (shape, inputs, eager's outputs or None to run
    eager), and judges: "ok" when one compilation served every shape within
    tolerance."""
    import torch

    import dlc
    example = cases[0][1]
    if onnx:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                proto = torch.onnx.export(module, tuple(example), dynamo=True, verbose=False,
                                          dynamic_shapes=shapes).model_proto
        except Exception as error:  # noqa: BLE001 - torch's exporter
            return result("export-failed", _short(error))
    try:
        if onnx:
            compiled = dlc.from_onnx(proto, dynamic_dims=True)
        else:
            with torch.no_grad():
                compiled = dlc.from_torch(module, *example, dynamic_shapes=shapes)
        runs = []
        for shape, inputs, expected in cases:
            if expected is None:
                with torch.no_grad():
                    expected = _outputs(module(*inputs))
            runs.append((shape, inputs, _outputs(compiled(*[a.numpy() for a in inputs])),
                         expected))
    except (dlc.UnsupportedOpError, dlc.DataDependentShapeError) as error:
        return result("unsupported", str(error))
    except Exception as error:  # noqa: BLE001 - reported, with the frame
        if isinstance(error, dlc.ModelImportError) and \
                "torch.export could not capture" in str(error):
            return result("export-failed", _short(error))
        frame = traceback.extract_tb(error.__traceback__)[-1]
        return result("error", f"{_short(error)} [{frame.filename.split('/')[-1]}:"
                               f"{frame.lineno}]")
    if compiled._jit.cache_size() != 1:
        return result("error", f"{compiled._jit.cache_size()} compilations for "
                               f"{len(runs)} shapes: the {what} did not stay dynamic")
    worst = 0.0
    for shape, inputs, got, expected in runs:
        status, detail, error = _verdict(model, module, inputs, got, expected)
        if status != "ok":
            return result("mismatch", f"at {axes} = {list(shape)}: {detail}", error)
        worst = max(worst, error if error is not None else 0.0)
    return result("ok", f"one compilation, {axes} = "
                        f"{', '.join(str(list(r[0])) for r in runs)}", worst)


def _resized(args, batch, seq):
    """Text inputs of another shape: ids cycled from the example's, masks
    (0/1 inputs) keep their padding pattern on the right of row 0."""
    import torch
    out = []
    for a in args:
        rows = a.repeat((batch + a.shape[0] - 1) // a.shape[0],
                        (seq + a.shape[1] - 1) // a.shape[1])[:batch, :seq].clone()
        if bool(((a == 0) | (a == 1)).all()) and bool((a == 1).any()):
            rows = torch.ones_like(rows)
            if seq > 2:
                rows[0, seq - 2:] = 0
        out.append(rows.contiguous())
    return out


def _check_dynamic_seq(model, module, args, want, result, onnx=False):
    import torch
    if not is_text(args):
        return result("model-failed", "the dynamic-seq frontends take text models only "
                                      "(integer [batch, seq] inputs)")
    batch = torch.export.Dim("batch", min=1, max=64)
    seq = torch.export.Dim("seq", min=2, max=48)
    shapes = tuple({0: batch, 1: seq} for _ in args)
    b, s = args[0].shape
    cases = [((b, s), list(args), want)] + [
        (shape, _resized(args, *shape), None) for shape in [(b, s + 5), (1, 2), (b + 1, s - 3)]]
    return _judge_dynamic(model, module, result, {"args": shapes}, onnx, cases,
                          "[batch, seq]", "sequence")


def _verdict(model, module, args, got, want):
    """_compare, where a random program's mismatch within float32's own
    error (against float64) is "ok"."""
    status, detail, worst = _compare(got, want)
    if status != "ok" and getattr(model, "reference64", False) and worst is not None \
            and worst < float("inf") and _within_float32_error(module, args, got, want):
        return "ok", f"{detail}: within eager float32's own error against float64", worst
    return status, detail, worst


def _compare(got, want):
    """("ok" or "mismatch", detail, largest relative error) of outputs
    against reference outputs."""
    if len(got) != len(want):
        return "mismatch", f"{len(got)} outputs, eager has {len(want)}", None
    worst = 0.0
    for g, w in zip(got, want):
        if g.shape != w.shape:
            return "mismatch", f"shape {g.shape}, eager {w.shape}", None
        if w.dtype.kind == "f":
            scale = max(float(np.max(np.abs(w))), 1e-30) if w.size else 1.0
            diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
            if not np.all(np.isfinite(g) == np.isfinite(w)):
                return "mismatch", "non-finite values differ", float("inf")
            rel = float(np.max(np.where(np.isfinite(w), diff, 0.0)) / scale) if w.size else 0.0
            worst = max(worst, rel)
        elif not np.array_equal(g, w):
            return "mismatch", "integer outputs differ", float("inf")
    if worst > RTOL:
        return "mismatch", f"max relative error {worst:.2e} > {RTOL:g}", worst
    return "ok", "", worst


def _exporter_wrong(proto, args, got, want):
    """Whether the exported ONNX model itself computes something else than
    eager PyTorch while dlc computes it right: onnx's reference evaluator
    disagrees with eager and agrees with dlc."""
    try:
        from onnx.reference import ReferenceEvaluator
        evaluator = ReferenceEvaluator(proto)
        names = [i.name for i in proto.graph.input]
        reference = evaluator.run(None, {n: a.numpy() for n, a in zip(names, args)})
    except Exception:  # noqa: BLE001 - no reference: the mismatch stands
        return False
    reference = [np.asarray(r) for r in reference]
    return _compare(reference, want)[0] != "ok" and _compare(got, reference)[0] == "ok"


def _within_float32_error(module, args, got, want):
    """Whether dlc's outputs are as close to the module run in float64 as
    eager float32's are (within 4x, or RTOL of the output's scale): an
    ill-conditioned program (a cancellation, a value at a rounding step)
    then differs in float32 whoever computes it."""
    import copy

    import torch
    try:
        reference = copy.deepcopy(module).double()
        with torch.no_grad():
            exact = _outputs(reference(*[a.double() if a.is_floating_point() else a
                                         for a in args]))
    except Exception:  # noqa: BLE001 - no float64 run: the mismatch stands
        return False
    for g, w, r in zip(got, want, exact):
        if w.dtype.kind != "f":
            continue
        r = r.astype(np.float64)
        scale = max(float(np.max(np.abs(r))), 1e-30) if r.size else 1.0
        finite = np.isfinite(r)
        ours = float(np.max(np.abs(np.where(finite, g - r, 0.0)))) if r.size else 0.0
        eager = float(np.max(np.abs(np.where(finite, w - r, 0.0)))) if r.size else 0.0
        if ours > max(4 * eager, RTOL * scale):
            return False
    return True
