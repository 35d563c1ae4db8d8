"""ONNX importer: an ONNX model (a file, bytes or a ``ModelProto``) into `dl`.

The graph is interpreted node by node inside a :func:`dlc.jit` trace: each
value is either a traced tensor or a numpy array known at import time
(initializers, ``Constant`` nodes, and everything computed from them and
from static shapes, e.g. ``Shape -> Gather -> Concat -> Reshape``). A node
whose inputs are all known is evaluated at import with the ``onnx``
package's reference implementation of that node (so shape computations fold
whatever their operators); any other node goes through the converter of its
operator in :mod:`dlc.frontends.onnx_ops`, which calls dlc's ops.

Graph inputs that the model uses as shapes, axes, pads, scales or counts
(``Reshape``'s shape, ``Slice``'s starts, ...) are compile-time inputs: the
compiled function is specialized on their values.
"""

import os

import numpy as np

from .. import dtypes
from ..errors import DLCError, ModelImportError
from ..tracing import Tensor, located
from . import onnx_ops
from .onnx_symbolic import SYMBOLIC, SymInts, materialize
from .common import ImportedFunction, count_uses, raise_unsupported

__all__ = ["from_onnx", "load_model", "MIN_OPSET"]

#: the oldest default-domain opset imported (the converters follow the
#: operator versions from here to the newest the installed onnx knows).
MIN_OPSET = 7

#: operators never evaluated at import time (their result changes per call)
_RANDOM = frozenset(["RandomNormal", "RandomUniform", "RandomNormalLike",
                     "RandomUniformLike", "Bernoulli", "Multinomial"])


def load_model(model):
    """A ModelProto from a path, bytes or a ModelProto (external data loaded)."""
    import onnx
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray)):
        return onnx.load_from_string(bytes(model))
    if isinstance(model, (str, os.PathLike)):
        if not os.path.exists(model):
            raise FileNotFoundError(f"dlc.from_onnx: no such file: {model}")
        return onnx.load(os.fspath(model))
    raise TypeError(f"dlc.from_onnx expects a path, bytes or an onnx.ModelProto, but got "
                    f"{type(model).__name__}")


def _np_dtype(elem_type, where):
    from onnx import helper
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, TypeError, ValueError):
        dtype = None
    if dtype is None or not dtypes.is_supported(dtype):
        import onnx
        name = onnx.TensorProto.DataType.Name(elem_type) if elem_type else "undefined"
        raise ModelImportError(f"{where} has ONNX type {name}, which dlc does not support; "
                               f"supported: {dtypes.supported_names()}")
    return dtype


def _value_spec(value_info, where, dynamic):
    """(dtype, shape with None for symbolic dims) of a graph input."""
    t = value_info.type
    if not t.HasField("tensor_type"):
        raise ModelImportError(f"{where} is not a tensor (sequences, maps and optionals "
                               f"are not supported)")
    dtype = _np_dtype(t.tensor_type.elem_type, where)
    if not t.tensor_type.HasField("shape"):
        return dtype, None
    shape = []
    for dim in t.tensor_type.shape.dim:
        shape.append(dim.dim_value if dim.HasField("dim_value") else None)
    return dtype, tuple(shape)


def _symbolic_dims(inputs, static_inputs):
    """{input position: {axis: name}} of the inputs' symbolic dimensions: the
    dim_param, or "<input>.<axis>" for a dimension with neither a value nor
    a name."""
    dynamic = {}
    for position, value in enumerate(inputs):
        shape = value.type.tensor_type.shape if value.type.HasField("tensor_type") else None
        if value.name in static_inputs or shape is None:
            continue
        axes = {axis: dim.dim_param or f"{value.name}.{axis}"
                for axis, dim in enumerate(shape.dim) if not dim.HasField("dim_value")}
        if axes:
            dynamic[position] = axes
    return dynamic


def _key(node):
    """The operator table's key of a NodeProto: the op type, qualified by a
    domain other than the default one."""
    if node.domain in ("", "ai.onnx"):
        return node.op_type
    return f"{node.domain}.{node.op_type}"


class Node:
    """One ONNX node being converted: its inputs (traced tensors, numpy
    arrays known at import, or None where absent) and attributes."""

    def __init__(self, proto, values, opset, importer):
        from onnx import helper
        self.proto = proto
        self.op = proto.op_type
        self.values = values
        self.opset = opset
        self.importer = importer
        self.attrs = {a.name: helper.get_attribute_value(a) for a in proto.attribute}
        self.num_outputs = len(proto.output)

    def __str__(self):
        name = f" {self.proto.name!r}" if self.proto.name else ""
        return f"node{name} ({self.op})"

    def attr(self, name, default=None):
        value = self.attrs.get(name, default)
        if isinstance(value, bytes):
            value = value.decode()
        return value

    def input(self, i):
        return self.values[i] if i < len(self.values) else None

    def has(self, i):
        return self.input(i) is not None

    def output_used(self, i):
        return i < self.num_outputs and self.proto.output[i] != "" and \
            self.proto.output[i] in self.importer.used

    def static(self, i, what):
        """Input `i` as a numpy array known at import time (None if absent)."""
        value = self.input(i)
        if isinstance(value, Tensor):
            self.fail(f"its {what} (input {i}) must be known when the model is "
                      f"imported (a constant, an initializer or computed from shapes)")
        return value

    def static_ints(self, i, what):
        value = self.static(i, what)
        return None if value is None else [int(v) for v in np.asarray(value).reshape(-1)]

    def fail(self, message):
        raise ModelImportError(f"{self}: {message}")


def _fold_gather_elements(node, data, indices):
    """GatherElements in numpy (onnx's reference broadcasts the indices against
    the data and fails where they are smaller: BERT's token type ids)."""
    axis = node.attr("axis", 0)
    axis = axis + data.ndim if axis < 0 else axis
    key = tuple(slice(None) if d == axis else slice(0, n)
                for d, n in enumerate(indices.shape))
    indices = np.where(indices < 0, indices + data.shape[axis], indices)
    return [np.take_along_axis(data[key], indices.astype(np.int64), axis)]


def _fold_dequantize(node, x, scale, zero=None):
    """DequantizeLinear of a constant (a quantized weight or bias), computed as
    onnx's reference does (float32, then the scale's dtype); the reference has
    no implementation before opset 19, which quantizers write (opset 13-17)."""
    if node.attr("block_size", 0) or x.dtype.kind not in "iu":
        node.fail("only per-tensor and per-axis integer dequantization folds at import")
    axis = node.attr("axis", 1) % max(x.ndim, 1)

    def along(param):
        param = np.asarray(param)
        if param.ndim == 1 and x.ndim > 1:
            return param.reshape([-1 if d == axis else 1 for d in range(x.ndim)])
        return param
    value = x.astype(np.float32)
    if zero is not None:
        value = value - along(zero).astype(np.float32)
    out = node.attr("output_dtype")
    dtype = scale.dtype if not out else _np_dtype_of(out)
    result = (value * along(scale)).astype(dtype)
    # the int8 weight and its scales, for the QDQ fusion of Conv/MatMul/Gemm
    onnx_ops.remember_dequantized(node, result, x, np.asarray(scale), zero,
                                  axis if np.ndim(scale) == 1 else None)
    return [result]


def _np_dtype_of(elem_type):
    from onnx import helper
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))


#: operators folded at import time by dlc's own numpy code, where onnx's
#: reference implementation is wrong or missing
_NUMPY_FOLDS = {"GatherElements": _fold_gather_elements,
                "DequantizeLinear": _fold_dequantize}


class OnnxImporter:
    def __init__(self, model):
        import onnx
        self.model = model
        self.opset = None
        for entry in model.opset_import:
            if entry.domain in ("", "ai.onnx"):
                self.opset = entry.version
        if self.opset is None:
            self.opset = onnx.defs.onnx_opset_version()
        newest = onnx.defs.onnx_opset_version()
        if self.opset < 1 or self.opset > newest:
            raise ModelImportError(f"dlc.from_onnx: the model's opset {self.opset} is outside "
                                   f"the supported {MIN_OPSET}..{newest}")
        self.graph = model.graph
        self.functions = {(f.domain, f.name): f for f in model.functions}
        self.initializers = {t.name: t for t in self.graph.initializer}
        self.inputs = [i for i in self.graph.input if i.name not in self.initializers]
        self.used = self._used_names(self.graph)
        self.static_inputs = self._shape_inputs()
        #: whether Shape of a dynamic dimension gives its run-time size
        #: (from_onnx(dynamic_dims=True)); else it needs the size
        self.symbolic = False
        #: value name -> shape (ints, None where symbolic or unknown) from the
        #: graph's value_info (see use_shape_inference)
        self.known_shapes = {}

    def use_shape_inference(self):
        """Reads the static sizes ONNX's shape inference gives every value
        (the graph's value_info, completed by onnx.shape_inference), for the
        shape computations done on run-time sizes."""
        import onnx
        try:
            inferred = onnx.shape_inference.infer_shapes(self.model).graph
        except Exception:  # noqa: BLE001 - a model onnx cannot infer: its own info
            inferred = self.graph
        for info in list(inferred.value_info) + list(inferred.output):
            t = info.type
            if t.HasField("tensor_type") and t.tensor_type.HasField("shape"):
                self.known_shapes[info.name] = [
                    d.dim_value if d.HasField("dim_value") else None
                    for d in t.tensor_type.shape.dim]

    # -- what the model needs ---------------------------------------------------

    @staticmethod
    def _used_names(graph):
        used = {o.name for o in graph.output}
        stack = [graph]
        while stack:
            g = stack.pop()
            for node in g.node:
                used.update(n for n in node.input if n)
                for attr in node.attribute:
                    stack.extend(list(attr.graphs) + ([attr.g] if attr.HasField("g") else []))
            used.update(o.name for o in g.output)
        return used

    def _shape_inputs(self):
        """Graph inputs whose values must be known to build the graph."""
        needed = set()
        for node in self.graph.node:
            for index in onnx_ops.STATIC_INPUTS.get(node.op_type, ()):
                if index < len(node.input) and node.input[index]:
                    needed.add(node.input[index])
        for node in reversed(self.graph.node):
            if node.op_type in ("Shape", "Size"):
                continue
            if any(o in needed for o in node.output):
                needed.update(n for n in node.input if n)
                # Values a subgraph (If, Loop, Scan bodies) reads from outside.
                for attr in node.attribute:
                    for sub in list(attr.graphs) + ([attr.g] if attr.HasField("g") else []):
                        needed.update(self._used_names(sub))
        return {i.name for i in self.inputs if i.name in needed}

    def _version_known(self, node):
        """Whether the node's operator, at the model's opset, is a version the
        converters follow (the same definition as at opset MIN_OPSET or later)."""
        if self.opset >= MIN_OPSET or node.domain not in ("", "ai.onnx"):
            return True
        import onnx
        try:
            old = onnx.defs.get_schema(node.op_type, self.opset).since_version
            at_min = onnx.defs.get_schema(node.op_type, MIN_OPSET).since_version
        except onnx.defs.SchemaError:
            return False
        return old == at_min

    def check_supported(self):
        """Raises UnsupportedOpError listing every operator that has no
        converter and that cannot be evaluated at import time."""
        known = set(self.initializers) | set(self.static_inputs)
        pairs = []
        for index, node in enumerate(self.graph.node):
            static = node.op_type in ("Shape", "Size") or (
                node.op_type not in _RANDOM and not any(a.HasField("g") or a.graphs
                                                        for a in node.attribute)
                and all(n in known or n == "" for n in node.input))
            supported = (_key(node) in onnx_ops.CONVERTERS and self._version_known(node)) \
                or self._function_version(node) is not None
            if (node.domain, node.op_type) in self.functions:
                supported = False
            if static and node.domain in ("", "ai.onnx"):
                known.update(node.output)
            elif not supported:
                op = _key(node)
                if op in onnx_ops.CONVERTERS:
                    op += f" (its version of opset {self.opset}, before opset {MIN_OPSET})"
                pairs.append((op, f"node {index} {node.name!r}" if node.name
                              else f"node {index}"))
        raise_unsupported(
            "dlc.from_onnx", count_uses(pairs),
            "Supported operators: see docs/frontends.md (dlc.frontends.onnx_ops.CONVERTERS).")

    # -- interpretation ----------------------------------------------------------

    def initializer_values(self):
        from onnx import numpy_helper
        values = {}
        for name, tensor in self.initializers.items():
            array = numpy_helper.to_array(tensor)
            if not dtypes.is_supported(array.dtype):
                raise ModelImportError(f"initializer {name!r} has dtype {array.dtype}, "
                                       f"which dlc does not support")
            values[name] = array
        return values

    def run_graph(self, graph, env, source):
        """Interprets `graph`'s nodes into `env` (name -> value); returns
        the values of its outputs."""
        for index, proto in enumerate(graph.node):
            values = [env.get(n) if n else None for n in proto.input]
            for name, value in zip(proto.input, values):
                if name and value is None and name not in env:
                    raise ModelImportError(f"node {index} ({proto.op_type}) reads {name!r}, "
                                           f"which no earlier node, input or initializer "
                                           f"defines")
            node = Node(proto, values, self.opset, self)
            node.env, node.source = env, source
            with located((source, index + 1, 0)):
                outputs = self._convert(node, env)
            if not isinstance(outputs, (list, tuple)):
                outputs = [outputs]
            for name, value in zip(proto.output, outputs):
                if name:
                    env[name] = value
        return [env[o.name] for o in graph.output]

    def _convert(self, node, env):
        if self.symbolic and node.proto.domain in ("", "ai.onnx") and (
                node.op == "Shape" or any(isinstance(v, SymInts) for v in node.values)):
            # shape arithmetic on dynamic dimensions (onnx_symbolic)
            compute = SYMBOLIC.get(node.op)
            result = compute(node) if compute is not None else None
            if result is not None:
                return result
            node.values = [materialize(v) for v in node.values]
        present = [v for v in node.values if v is not None]
        foldable = node.op not in _RANDOM and not any(
            a.HasField("g") or a.graphs for a in node.proto.attribute)
        if foldable and all(isinstance(v, np.ndarray) for v in present) and \
                node.op not in ("Shape", "Size"):
            if node.op in _NUMPY_FOLDS and node.proto.domain in ("", "ai.onnx"):
                return _NUMPY_FOLDS[node.op](node, *node.values)
            return self._fold(node)
        converter = onnx_ops.CONVERTERS.get(_key(node.proto))
        if converter is None or not self._version_known(node.proto):
            return self._expand(node)
        try:
            return converter(node)
        except ModelImportError:
            raise
        except DLCError as error:
            raise type(error)(f"{node}: {error}") from None
        except (ValueError, TypeError, IndexError, NotImplementedError) as error:
            raise ModelImportError(f"{node}: {error}") from None

    def _function_version(self, proto):
        """The opset version of the ONNX function (body of primitive operators)
        that defines this node's operator, or None."""
        import onnx
        if proto.op_type in _RANDOM:
            return None
        try:
            schema = onnx.defs.get_schema(proto.op_type, self.opset, proto.domain)
        except onnx.defs.SchemaError:
            return None
        versions = [v for v in list(schema.function_opset_versions) +
                    list(schema.context_dependent_function_opset_versions) if v <= self.opset]
        return max(versions) if versions else None

    def _expand(self, node):
        """Converts a node through its operator's ONNX function: the body of
        primitive operators the specification defines it as (for this
        node's attributes and input types, when the body depends on them)."""
        import onnx
        from onnx import helper
        version = self._function_version(node.proto)
        schema = onnx.defs.get_schema(node.op, self.opset, node.proto.domain)
        if version in schema.function_opset_versions:
            data = schema.get_function_with_opset_version(version)
        else:
            types = []
            for value in node.values:
                if value is None:
                    types.append(onnx.TypeProto().SerializeToString())
                    continue
                elem = helper.np_dtype_to_tensor_dtype(np.dtype(value.dtype))
                shape = [d if d is not None else "batch" for d in value.shape]
                types.append(helper.make_tensor_type_proto(elem, shape).SerializeToString())
            try:
                data = schema.get_context_dependent_function_with_opset_version(
                    version, node.proto.SerializeToString(), types)
            except (TypeError, RuntimeError, onnx.defs.SchemaError) as error:
                node.fail(f"expanding the operator into its ONNX function failed: {error}")
        function = onnx.FunctionProto()
        function.ParseFromString(data)
        defaults = {a.name: a for a in function.attribute_proto}
        given = {a.name: a for a in node.proto.attribute}
        nodes = []
        for body in function.node:
            copy = onnx.NodeProto()
            copy.CopyFrom(body)
            del copy.attribute[:]
            for attr in body.attribute:
                if attr.ref_attr_name:
                    source = given.get(attr.ref_attr_name) or defaults.get(attr.ref_attr_name)
                    if source is None:
                        continue
                    resolved = onnx.AttributeProto()
                    resolved.CopyFrom(source)
                    resolved.name = attr.name
                    copy.attribute.append(resolved)
                else:
                    copy.attribute.append(attr)
            nodes.append(copy)
        graph = helper.make_graph(nodes, f"{node.op}_body", [],
                                  [helper.make_value_info(o, onnx.TypeProto())
                                   for o in function.output])
        env = {formal: value for formal, value in zip(function.input, node.values)
               if value is not None}
        outputs = self.run_graph(graph, env, node.source)
        by_formal = dict(zip(function.output, outputs))
        return [by_formal.get(formal) for formal in function.output][:node.num_outputs]

    def _fold(self, node):
        """Evaluates a node of known inputs with onnx's reference implementation."""
        import onnx
        from onnx import helper
        from onnx.reference import ReferenceEvaluator
        inputs = [helper.make_tensor_value_info(n, onnx.TensorProto.UNDEFINED, None)
                  for n, v in zip(node.proto.input, node.values) if n and v is not None]
        outputs = [helper.make_value_info(n, onnx.TypeProto()) for n in node.proto.output if n]
        graph = helper.make_graph([node.proto], "fold", inputs, outputs)
        opsets = [helper.make_opsetid(e.domain, e.version) for e in self.model.opset_import]
        model = helper.make_model(graph, opset_imports=opsets or
                                  [helper.make_opsetid("", self.opset)])
        feeds = {n: v for n, v in zip(node.proto.input, node.values) if n and v is not None}
        try:
            results = ReferenceEvaluator(model).run(None, feeds)
        except Exception as error:  # noqa: BLE001 - the reference's own message
            raise ModelImportError(f"{node}: evaluating it at import time failed: "
                                   f"{error}") from None
        folded = []
        for value in results:
            array = np.asarray(value)
            if array.dtype == np.float64 and isinstance(value, float):
                array = array.astype(np.float32)
            folded.append(array)
        names = [n for n in node.proto.output if n]
        by_name = dict(zip(names, folded))
        return [by_name.get(n) for n in node.proto.output]


def from_onnx(model, *, dynamic_batch=False, dynamic_dims=False, **jit_kwargs):
    """Compiles an ONNX model with dlc.

    Args:
      model: a path to an ``.onnx`` file, its bytes, or an ``onnx.ModelProto``
        (default-domain opsets 7 to the newest the installed ``onnx`` knows).
      dynamic_batch: ``True`` compiles one version for every batch size of
        the inputs whose first dimension is symbolic in the model (shape
        computations must then not depend on it); by default each batch size
        compiles its own version.
      dynamic_dims: ``True`` makes every symbolic dimension of the inputs
        (``dim_param``, e.g. "batch" and "sequence") dynamic: one compiled
        version serves every size, the model's shape computations (Shape,
        Gather, Concat, Reshape, Expand, Range...) done at run time on them.
        Inputs sharing a ``dim_param`` must agree on its size at a call, which
        checks it. Not with `dynamic_batch`.
      **jit_kwargs: as for :func:`dlc.jit` (``target``, ``options``,
        ``disable``, CPU/GPU option shortcuts).

    Returns an :class:`~dlc.frontends.common.ImportedFunction`: call it with
    the model's inputs (numpy arrays or torch tensors, positionally in the
    graph's input order or by name); it returns a numpy array, or a tuple of
    them for several outputs. Raises :class:`dlc.UnsupportedOpError` listing
    every unsupported operator at once.
    """
    if dynamic_batch and dynamic_dims:
        raise ValueError("dlc.from_onnx: give dynamic_batch or dynamic_dims, not both "
                         "(dynamic_dims makes a symbolic batch dynamic too)")
    proto = load_model(model)
    importer = OnnxImporter(proto)
    importer.check_supported()
    importer.symbolic = bool(dynamic_dims)
    if dynamic_dims:
        importer.use_shape_inference()
    specs = [_value_spec(i, f"input {i.name!r}", dynamic_batch) for i in importer.inputs]
    if dynamic_dims:
        dynamic = _symbolic_dims(importer.inputs, importer.static_inputs)
        if dynamic:
            jit_kwargs = dict(jit_kwargs, dynamic=dynamic)
    initializers = importer.initializer_values()
    source = os.path.basename(os.fspath(model)) if isinstance(model, (str, os.PathLike)) \
        else (proto.graph.name or "model") + ".onnx"
    output_names = [o.name for o in proto.graph.output]

    def build(arrays):
        env = dict(initializers)
        for spec, array, value in zip(specs, arrays, importer.inputs):
            env[value.name] = array
        outputs = importer.run_graph(importer.graph, env, source)
        for name, value in zip(output_names, outputs):
            if value is None:
                raise ModelImportError(f"graph output {name!r} is not computed")
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    return ImportedFunction(proto.graph.name or "onnx_model",
                            [i.name for i in importer.inputs], specs,
                            importer.static_inputs, build, output_names,
                            dict(jit_kwargs, dynamic_batch=dynamic_batch))
