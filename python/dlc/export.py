"""Ahead-of-time export: a compiled function as one self-contained shared
library, loadable without dlc's compiler (:func:`dlcrt.load`, or C).

``dlc.export(f, *example_args, path=...)`` compiles `f` for the example
arguments' signature (as ``dlc.jit`` would, dynamic batch included) and
writes:

- ``path`` (``.so``): the machine code with its weights, dlc's runtime (the
  thread pool and allocator, lib/Runtime, linked in from a static archive),
  a C entry point ``int dlc_<name>(const dlc_tensor *inputs, dlc_tensor
  *outputs)`` that checks every input's dtype and shape, and a metadata
  record (``const char *dlc_metadata(void)``, JSON: format, dlc version,
  target, and per function its inputs' names, dtypes and shapes with dynamic
  dimensions as null, its outputs' dtypes and ranks). It needs only libc,
  libm, libstdc++ and pthread (``ldd`` shows nothing of LLVM or MLIR).
- ``path`` with ``.h``: the C declarations (``dlc_tensor``, the dtype codes,
  the entry points), with a usage comment.

The C ABI (also in the header): inputs are dense C-contiguous tensors the
caller owns; each output is allocated by the library and released with
``dlc_free_tensor``; a non-zero return is an error whose message
``dlc_last_error()`` gives (1: bad input, 2: out of memory).
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import warnings

import numpy as np
from dlcrt import DTYPE_CODES, FORMAT, MAX_RANK

from . import _build_config
from . import dtypes
from .errors import CompileError
from .version import __version__

# FORMAT (the layout of the metadata and the C ABI), MAX_RANK and
# DTYPE_CODES come from the loader, which imports nothing of dlc: one
# definition for both sides.

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: names of the runtime's and the ABI's own functions (dlc_<name>)
_RESERVED = {"num_threads", "set_num_threads", "parallel_for", "call_guarded", "metadata",
             "last_error", "free_tensor", "free_device_tensor", "copy_to_host", "cuda_ready"}


def export(f, *example_args, path, name=None, target="cpu", **jit_kwargs):
    """Compiles `f` for the signature of `example_args` and writes it to
    `path` as a shared library (see the module's docstring), plus a C header
    next to it. Returns the path of the library.

    Args:
      f: a function of dlc ops, a ``dlc.jit`` function, a ``dlc.nn.Module``
        (its parameters become constants of the library) or an imported
        model (:func:`dlc.from_torch`, :func:`dlc.from_onnx`).
      example_args: arguments of the shapes and dtypes to compile for.
      path: the library to write (``.so``); parent folders must exist.
      name: the C name of the function (``dlc_<name>``); by default the
        function's own name.
      target: ``"cpu"`` (this machine) or a :class:`dlc.Target` (another
        x86 CPU: the library then runs where that CPU's features are).
        ``"cuda"``: the kernels for `chip` (a jit keyword, default sm_90)
        as a fatbin: machine code for the chip (assembled by CUDA's ptxas)
        plus PTX, which the driver compiles for newer GPUs; PTX alone, with a
        warning, where ptxas is missing or refuses the chip
        (``kernel_format=`` chooses), and the host code calling dlc's CUDA
        shim, which loads
        ``libcuda.so.1`` when the function first runs. Inputs and outputs
        stay host arrays: the entry point copies them into GPU device memory
        and the results back (the compiled code keeps every buffer in device
        memory).
      jit_kwargs: options of :func:`dlc.jit` (``dynamic_batch``,
        ``disable``, ...) for a plain function or module.
    """
    from .frontends.common import ImportedFunction
    from .jit import JitFunction, jit
    from .nn import Module
    from .target import Target

    if target not in ("cpu", "cuda") and not isinstance(target, Target):
        raise ValueError(f"dlc.export: target must be 'cpu', 'cuda' or a dlc.Target, "
                         f"but got {target!r}")
    if jit_kwargs.get("emulate"):
        raise ValueError("dlc.export: emulate=True runs GPU kernels on the CPU inside "
                         "dlc; export for target='cpu' instead")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"dlc.export: path must be a file path, but got {path!r}")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"dlc.export: the folder {folder!r} does not exist")
    if target != "cpu":
        jit_kwargs["target"] = target

    if isinstance(f, (ImportedFunction, JitFunction)):
        if jit_kwargs:
            raise TypeError(f"dlc.export: options {sorted(jit_kwargs)} are given when "
                            f"{'importing' if isinstance(f, ImportedFunction) else 'jitting'}"
                            f" the function, not to export")
        lowered = f.lower(*example_args)
    elif isinstance(f, Module):
        lowered = jit(f, constants=True, **jit_kwargs).lower(*example_args)
    elif callable(f):
        lowered = jit(f, **jit_kwargs).lower(*example_args)
    else:
        raise TypeError(f"dlc.export: expected a function, a dlc.jit function, a "
                        f"dlc.nn.Module or an imported model, but got {f!r}")
    return export_lowered(lowered, path, name, default_name=getattr(f, "__name__", None))


def export_lowered(lowered, path, name=None, default_name=None):
    """Writes a :class:`dlc.Lowered` (a traced function, or a ``dl`` module
    read from a file: :mod:`dlc.aot`) as a library; see :func:`export`."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"dlc.export: the folder {folder!r} does not exist")
    if lowered.parameter_slots:
        raise ValueError("dlc.export: the module's parameters are arguments of this "
                         "dlc.jit function; export the module itself, or jit it with "
                         "constants=True")
    if lowered.donations:
        raise ValueError("dlc.export: this function donates arguments (donate_argnums): "
                         "an exported entry point returns every result in outputs of "
                         "its own; export it without donate_argnums")
    cuda = lowered.options.is_cuda
    if cuda and lowered.options.gpu.emulate:
        raise ValueError("dlc.export: this function runs its GPU kernels emulated on the "
                         "CPU (emulate=True); export it for target='cpu' instead")
    why_not = None if cuda else lowered.target.why_not_runnable()

    if name is None:
        name = default_name or (lowered.symbol[4:] if lowered.symbol.startswith("dlc_")
                                else lowered.symbol)
        name = re.sub(r"\W", "_", name).strip("_") or "function"
        if name[0].isdigit():
            name = "f_" + name
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"dlc.export: name must be a C identifier, but got {name!r}")
    if name in _RESERVED or name.startswith("runtime_"):
        raise ValueError(f"dlc.export: dlc_{name} is a name of the library's runtime; "
                         f"choose another name")

    record = _function_record(name, lowered)
    kernels, module = _cuda_binary(lowered) if cuda else (None, lowered._module_at("llvm"))
    metadata = {
        "format": FORMAT, "dlc": __version__, "kind": "cuda" if cuda else "cpu",
        "chip": lowered.options.gpu.chip if cuda else None,
        "kernels": kernels,
        "target": {"triple": lowered.target.triple, "cpu": lowered.target.cpu,
                   "features": sorted(lowered.target.isa_features)},
        "functions": [record],
        # Filled in once the library is linked: the SHA-256 of the file with
        # these 64 characters as zeros (dlcrt checks it before loading: a
        # damaged library must be refused, not mapped and run).
        "sha256": _UNSIGNED,
    }
    with tempfile.TemporaryDirectory(prefix="dlc-export-") as work:
        objects = _compile_objects(lowered, module, record, work)
        shim = os.path.join(work, "entry.c")
        header = _header_text(os.path.basename(path), [record], cuda)
        with open(os.path.join(work, "dlc_export.h"), "w") as out:
            out.write(header)
        with open(shim, "w") as out:
            out.write(_shim_text(record, metadata, cuda))
        library = os.path.join(work, "library.so")
        _link(library, [shim, *objects], work)
        _sign(library)
        shutil.move(library, path)
    header_path = os.path.splitext(path)[0] + ".h"
    with open(header_path, "w") as out:
        out.write(header)
    if why_not is not None:
        import warnings
        warnings.warn(f"dlc.export: {path} cannot run on this machine: {why_not}",
                      stacklevel=2)
    return path


def _dim_names(spec):
    """The names of an input's dynamic dimensions (None where static); a
    manifest without names has its dynamic leading dimension as "batch"."""
    if "dims" in spec:
        return spec["dims"]
    return ["batch" if d is None and axis == 0 else None
            for axis, d in enumerate(spec["shape"])]


def _function_record(name, lowered):
    inputs = []
    for spec in lowered.arg_specs:
        if spec.is_static:
            continue  # a compile-time value: baked into the code
        dtype = str(np.dtype(spec.dtype))
        if dtype not in DTYPE_CODES:
            raise ValueError(f"dlc.export: input {spec.name!r} has dtype {dtype}, which "
                             f"the C ABI has no code for")
        if len(spec.shape) > MAX_RANK:
            raise ValueError(f"dlc.export: input {spec.name!r} has {len(spec.shape)} "
                             f"dimensions; the C ABI takes at most {MAX_RANK}")
        shape = [None if d is None else int(d) for d in spec.shape]
        inputs.append({"name": spec.name, "dtype": dtype, "shape": shape,
                       # the name of each dynamic dimension (None where static):
                       # dimensions of one name must agree at a call
                       "dims": [spec.dim_name(axis) if d is None else None
                                for axis, d in enumerate(shape)]})
    outputs = []
    for rank, dtype in lowered.result_specs:
        dtype = str(np.dtype(dtype))
        if rank > MAX_RANK:
            raise ValueError(f"dlc.export: an output has {rank} dimensions; the C ABI "
                             f"takes at most {MAX_RANK}")
        outputs.append({"dtype": dtype, "rank": int(rank)})
    return {"name": name, "symbol": lowered.symbol, "inputs": inputs, "outputs": outputs,
            "single_output": lowered._structure is None}


def _cuda_binary(lowered):
    """The kernels' format and the CUDA host code embedding them: the
    function's own kernel_format, or by default a fatbin (a cubin for the chip
    plus PTX for newer GPUs), or PTX alone, with a warning, where CUDA's ptxas
    is missing or cannot assemble for the chip."""
    chosen = lowered.options.gpu.kernel_format
    if chosen is not None:
        return chosen, lowered._module_at("binary")
    try:
        return "fatbin", lowered.binary_module("fatbin")
    except CompileError as error:
        first = next((line.strip() for line in str(error).splitlines()
                      if "ptxas" in line or "fatbinary" in line), str(error).splitlines()[0])
        warnings.warn(f"dlc.export: the kernels are embedded as PTX only (the driver "
                      f"compiles them when the library is loaded): no cubin for "
                      f"{lowered.options.gpu.chip} could be made ({first})", stacklevel=3)
        return "ptx", lowered._module_at("binary")


def _compile_objects(lowered, module, record, work):
    """LLVM's object code of the function (position independent), from
    `module` (the llvm stage, or the CUDA binary stage), written in `work`:
    [object file paths]. A large CPU module is compiled in parallel parts
    (runtime.compile_library's code generation), anything else by the
    ExecutionEngine into one object."""
    from .mlir import ir
    from .runtime import JITCode, compile_objects, wants_library
    # The module is export's own (traced for it): it can change.
    # The function's symbol (dlc_<fn>) would clash with the C entry point
    # dlc_<name>: the code's own function gets another name.
    cuda = lowered.options.is_cuda
    symbol = record["symbol"]
    with module.context:
        for op in module.body.operations:
            if "sym_name" in op.attributes and \
                    ir.StringAttr(op.attributes["sym_name"]).value == symbol:
                ir.SymbolTable.set_symbol_name(op, symbol + "__dlc_code")
        ir.SymbolTable.replace_all_symbol_uses(symbol, symbol + "__dlc_code",
                                               module.operation)
    opt_level = lowered.options.cpu.llvm_opt_level
    if not cuda and wants_library(module):
        folder = os.path.join(work, "parts")
        os.mkdir(folder)
        try:
            return compile_objects(module, folder, opt_level)
        except RuntimeError as error:
            raise CompileError(f"dlc.export: LLVM could not compile {record['name']}: "
                               f"{error}") from None
    obj = os.path.join(work, "code.o")
    try:
        # CUDA host code: its mgpu* calls resolve against dlc's shim (the JIT
        # compiles; nothing runs here, no GPU needed).
        code = JITCode(module, opt_level=opt_level, pic=True,
                       shared_libs=[_build_config.DLC_CUDA_SHIM_LIB] if cuda else ())
        # Compiled on the first lookup: dumping the object of a module none
        # of whose symbols was looked up aborts the process in the ORC JIT
        # ("Symbols not found: _mlir_<private function>").
        if not code.packed_address("_mlir_ciface_" + symbol):
            raise CompileError(f"dlc.export: the compiled code has no entry for {symbol}")
        code.dump_object(obj)
    except RuntimeError as error:
        raise CompileError(f"dlc.export: LLVM could not compile {record['name']}: "
                           f"{error}") from None
    if not os.path.exists(obj):
        raise CompileError(f"dlc.export: LLVM wrote no object code for {record['name']}")
    if cuda:
        kernels = sum(op.operation.name == "gpu.binary" for op in module.body.operations)
        _expose_module_init(obj, kernels)
    return [obj]


def _expose_module_init(obj, kernels):
    """The GPU modules of CUDA host code are loaded by a constructor, which
    the ORC JIT turns into a local function (__orc_init_func.<module>) that
    it calls itself, not an .init_array entry: in a library nobody would call
    it and every launch would find no kernel. Renamed to the global
    dlc_module_init, which the entry point calls once. A function without
    kernels (`kernels` is 0: an empty slice) has none; the entry point's weak
    dlc_module_init, which does nothing, stands in."""
    nm, objcopy = shutil.which("nm"), shutil.which("objcopy")
    if nm is None or objcopy is None:
        raise RuntimeError("dlc.export(target='cuda') needs binutils (nm, objcopy) to "
                           "link the library; install binutils")
    listing = subprocess.run([nm, obj], capture_output=True, text=True, check=True).stdout
    names = [line.split()[-1] for line in listing.splitlines()
             if line.split() and line.split()[-1].startswith("__orc_init_func.")]
    if not names and not kernels:
        return
    if len(names) != 1:
        raise CompileError(f"dlc.export: expected one module initializer in the CUDA host "
                           f"code, found {names or 'none'}")
    for flags in (["--globalize-symbol", names[0]],
                  ["--redefine-sym", f"{names[0]}=dlc_module_init"]):
        subprocess.run([objcopy, *flags, obj], check=True, capture_output=True)


_UNSIGNED = "0" * 64


def _sign(library):
    """Writes the library's checksum into its metadata record."""
    import hashlib
    with open(library, "rb") as data:
        blob = bytearray(data.read())
    marker = b'"sha256": "' + _UNSIGNED.encode() + b'"'
    at = blob.find(marker)
    if at < 0 or blob.find(marker, at + 1) >= 0:
        raise RuntimeError("dlc.export: the library's metadata record was not found once")
    start = at + len(b'"sha256": "')
    blob[start:start + 64] = hashlib.sha256(bytes(blob)).hexdigest().encode()
    with open(library, "wb") as data:
        data.write(blob)


def _compiler():
    from .cache import _linker  # the disk cache links libraries the same way
    found = _linker()
    if found is None:
        raise RuntimeError("dlc.export needs a C compiler (cc, gcc or clang) to link the "
                           "library; none is on PATH")
    return found


def _link(library, sources, include):
    runtime = _build_config.DLC_RUNTIME_STATIC_LIB
    if not os.path.exists(runtime):
        raise RuntimeError(f"dlc.export: dlc's runtime archive {runtime} is missing "
                           f"(run `make build`)")
    command = [_compiler(), "-shared", "-fPIC", "-O2", "-I", include, "-o", library,
               *sources, runtime, "-Wl,-Bsymbolic", "-Wl,--exclude-libs,ALL",
               "-lstdc++", "-lm", "-lpthread", "-ldl"]
    process = subprocess.run(command, capture_output=True, text=True)
    if process.returncode != 0:
        raise RuntimeError("dlc.export: linking the library failed:\n"
                           + " ".join(command) + "\n" + process.stderr[-4000:])


# -- C text --------------------------------------------------------------------

_HEADER = """\
/* {file}: generated by dlc {version} (dlc.export). The C interface of
 * {library}, a self-contained shared library (link it, or dlopen it).
 *
 *   dlc_tensor x = {{ .data = buffer, .dtype = DLC_{example_dtype}, .rank = {example_rank},
 *                    .shape = {{ {example_shape} }} }};
 *   dlc_tensor y;
 *   if (dlc_{first}(&x, &y) != 0) {{ fputs(dlc_last_error(), stderr); ... }}
 *   ... use y.data (dense, C order, y.shape) ...
 *   dlc_free_tensor(&y);
 *
 * Inputs are dense C-contiguous tensors the caller owns (only .data,
 * .dtype, .rank and .shape are read). Each output is filled in: its data
 * was allocated by the library and is released with dlc_free_tensor. A
 * non-zero return is an error (1: an input of the wrong dtype or shape,
 * 2: out of memory, 3: a CUDA driver call failed or no GPU could be used),
 * described by dlc_last_error() on the calling thread.
 * Calls from several threads at once are safe. Each exported library
 * defines dlc_last_error, dlc_free_tensor, dlc_set_num_threads and
 * dlc_metadata: a program using several of them opens each with dlopen
 * (RTLD_LOCAL) and looks its functions up with dlsym.
 */
#ifndef DLC_EXPORT_{guard}_H
#define DLC_EXPORT_{guard}_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {{
#endif

#ifndef DLC_TENSOR_DEFINED
#define DLC_TENSOR_DEFINED
#define DLC_MAX_RANK {max_rank}
enum dlc_dtype {{
{dtypes}
}};

typedef struct dlc_tensor {{
  void *data;       /* the first element */
  void *allocated;  /* outputs: what dlc_free_tensor releases */
  int32_t dtype;    /* an enum dlc_dtype */
  int32_t rank;
  int64_t shape[DLC_MAX_RANK];
}} dlc_tensor;
#endif

{functions}
/* The last error of this thread (valid until its next call). */
const char *dlc_last_error(void);
/* Releases an output's data; the tensor's data becomes NULL. */
void dlc_free_tensor(dlc_tensor *tensor);
/* Threads of the library's pool a call may use (0: every core). */
void dlc_set_num_threads(int64_t threads);
/* JSON: format, dlc version, target, functions with inputs and outputs. */
const char *dlc_metadata(void);

#ifdef __cplusplus
}}
#endif
#endif
"""


def _describe_inputs(record):
    parts = []
    for spec in record["inputs"]:
        dims = ", ".join("?" if d is None else str(d) for d in spec["shape"])
        parts.append(f"{spec['name']}: {spec['dtype']}[{dims}]")
    return "; ".join(parts) or "none"


_CUDA_DECLARATIONS = """\
/* CUDA libraries: dlc_<name>_device takes inputs whose .data is device
 * memory (cuMemAlloc, torch.cuda, CuPy: dense, C order) and leaves its
 * outputs there (release them with dlc_free_device_tensor). It waits for the
 * device's earlier work before its kernels run and for its own before it
 * returns. dlc_copy_to_host copies device memory to the host (0, or 3 with
 * dlc_last_error()). */
void dlc_free_device_tensor(dlc_tensor *tensor);
int dlc_copy_to_host(void *host, const void *device, size_t bytes);
"""


def _header_text(library, records, cuda=False):
    stem = os.path.splitext(library)[0]
    guard = re.sub(r"\W", "_", stem).upper()
    dtypes_text = ",\n".join(f"  DLC_{name.upper()} = {code}"
                             for name, code in DTYPE_CODES.items())
    functions = ""
    for record in records:
        outputs = ", ".join(f"{o['dtype']} of rank {o['rank']}" for o in record["outputs"])
        functions += (f"/* inputs[{len(record['inputs'])}]: {_describe_inputs(record)}\n"
                      f" * outputs[{len(record['outputs'])}]: {outputs or 'none'} */\n"
                      f"int dlc_{record['name']}(const dlc_tensor *inputs, "
                      f"dlc_tensor *outputs);\n")
        if cuda:
            functions += (f"int dlc_{record['name']}_device(const dlc_tensor *inputs, "
                          f"dlc_tensor *outputs);\n")
    if cuda:
        functions += _CUDA_DECLARATIONS
    example = records[0]["inputs"][0] if records[0]["inputs"] else \
        {"dtype": "float32", "shape": []}
    return _HEADER.format(file=stem + ".h", version=__version__, library=library,
                          first=records[0]["name"], guard=guard, max_rank=MAX_RANK,
                          example_dtype=example["dtype"].upper(),
                          example_rank=len(example["shape"]),
                          example_shape=", ".join("1" if d is None else str(d)
                                                  for d in example["shape"]) or "0",
                          dtypes=dtypes_text, functions=functions)


_ITEMSIZE = {name: (2 if name == "bfloat16" else np.dtype(name).itemsize)
             for name in DTYPE_CODES}


def _c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _descriptor(rank):
    arrays = f" int64_t sizes[{rank}]; int64_t strides[{rank}];" if rank else ""
    return f"struct {{ void *allocated; void *aligned; int64_t offset;{arrays} }}"


def _shim_text(record, metadata, cuda=False):
    name, symbol = record["name"], record["symbol"]
    inputs, outputs = record["inputs"], record["outputs"]
    lines = [
        "/* Generated by dlc.export: the C entry point of one exported function. */",
        "#include <stdint.h>", "#include <stdio.h>", "#include <stdlib.h>",
        "#include <string.h>", '#include "dlc_export.h"', "",
    ]
    if cuda:
        params = "".join(f", char *b{i}" for i in range(len(inputs)))
        frees = " ".join(f"if (b{i}) mgpuMemFree(b{i}, NULL);" for i in range(len(inputs)))
        lines += [
            "/* dlc's CUDA shim (lib/Runtime/CudaShim.cpp), linked in. */",
            "extern void *mgpuMemAlloc(uint64_t, void *, _Bool);",
            "extern void mgpuMemFree(void *, void *);",
            "extern int dlc_cuda_copy_to_device(void *, const void *, size_t);",
            "extern int dlc_cuda_copy_to_host(void *, const void *, size_t);",
            "extern int dlc_cuda_copy_on_device(void *, const void *, size_t);",
            "extern int dlc_cuda_synchronize(void);",
            "extern const char *dlc_cuda_take_error(void);",
            "extern int dlc_cuda_available(const char **);",
            "/* The device copies of host inputs (none where the caller passed device",
            " * memory). */",
            f"static void release_inputs(int on_device{params}) {{ if (on_device) return; "
            f"(void)on_device; {frees} }}",
            "/* The GPU modules' loader (see _expose_module_init), run once. */",
            "#include <pthread.h>",
            "/* Weak: a function without kernels has no loader (see _expose_module_init). */",
            "__attribute__((weak)) void dlc_module_init(void) {}",
            "static pthread_once_t modules_loaded = PTHREAD_ONCE_INIT;",
            "/* Whether a CUDA GPU can be used (why not, if not): exported. */",
            "int dlc_cuda_ready(const char **why) { return dlc_cuda_available(why); }",
            "",
        ]
    if cuda:
        lines += [
            "static __thread char last_error[512];",
            "/* Frees an output of a dlc_<name>_device call (device memory). */",
            "void dlc_free_device_tensor(dlc_tensor *tensor) {",
            "  if (tensor && tensor->allocated) mgpuMemFree(tensor->allocated, NULL);",
            "  if (tensor) { tensor->allocated = NULL; tensor->data = NULL; }",
            "}",
            "/* Copies `bytes` of device memory to the host: 0, or 3 with dlc_last_error. */",
            "int dlc_copy_to_host(void *host, const void *device, size_t bytes) {",
            "  if (dlc_cuda_copy_to_host(host, device, bytes)) return 0;",
            "  const char *e = dlc_cuda_take_error();",
            "  snprintf(last_error, sizeof last_error, \"dlc_copy_to_host: %s\", e ? e : \"failed\");",
            "  return 3;",
            "}", "",
        ]
    lines += [
        "extern int64_t dlc_call_guarded(void (*)(void **), void **);",
        "extern void _mlir_memref_to_llvm_free(void *);",
        "extern int64_t dlc_num_threads __attribute__((weak));",
        f"extern void _mlir__mlir_ciface_{symbol}(void **);",
        "", *([] if cuda else ["static __thread char last_error[512];"]),
        "const char *dlc_last_error(void) { return last_error; }",
        "static int64_t threads_wanted = 0;",
        "void dlc_set_num_threads(int64_t threads) { threads_wanted = threads; }",
        f"const char *dlc_metadata(void) {{ return {_c_string(json.dumps(metadata))}; }}",
        "void dlc_free_tensor(dlc_tensor *tensor) {",
        "  if (tensor && tensor->allocated) _mlir_memref_to_llvm_free(tensor->allocated);",
        "  if (tensor) { tensor->allocated = NULL; tensor->data = NULL; }",
        "}", "",
        "static const char *dtype_name(int32_t code) {",
        "  switch (code) {",
    ]
    lines += [f'  case {code}: return "{dtype}";' for dtype, code in DTYPE_CODES.items()]
    lines += ['  default: return "an unknown dtype";', "  }", "}", "",
              "/* \"float32[2, 3]\" of a tensor given to an entry point. */",
              "static void describe(const dlc_tensor *t, char *text, size_t size) {",
              "  if (t->rank < 0 || t->rank > DLC_MAX_RANK) {",
              "    snprintf(text, size, \"%s of rank %d\", dtype_name(t->dtype), (int)t->rank);",
              "    return;",
              "  }",
              "  int n = snprintf(text, size, \"%s[\", dtype_name(t->dtype));",
              "  for (int d = 0; d < t->rank && n < (int)size; ++d)",
              "    n += snprintf(text + n, size - n, d ? \", %lld\" : \"%lld\", (long long)t->shape[d]);",
              "  if (n < (int)size) snprintf(text + n, size - n, \"]\");",
              "}", ""]
    # Results: one descriptor, or a struct of them.
    result_fields = " ".join(f"{_descriptor(o['rank'])} r{i};" for i, o in enumerate(outputs))
    if cuda:
        # One body for both entry points: host arrays (copied in and out) or
        # device memory (read and left there).
        lines.append(f"static int run_{name}(const dlc_tensor *inputs, dlc_tensor *outputs, "
                     f"int on_device) {{")
    else:
        lines.append(f"int dlc_{name}(const dlc_tensor *inputs, dlc_tensor *outputs) {{")
    lines.append("  last_error[0] = 0;")
    lines.append(f"  if (!inputs && {len(inputs)} > 0) {{ snprintf(last_error, sizeof "
                 f"last_error, \"dlc_{name}: inputs is NULL\"); return 1; }}")
    lines.append(f"  if (!outputs && {len(outputs)} > 0) {{ snprintf(last_error, sizeof "
                 f"last_error, \"dlc_{name}: outputs is NULL\"); return 1; }}")
    # One variable per named dynamic dimension: its size at the first input
    # that has it, which every later one must match.
    names = []
    for spec in inputs:
        for dim in _dim_names(spec):
            if dim is not None and dim not in names:
                names.append(dim)
    for k, dim in enumerate(names):
        lines.append(f"  int64_t dim{k} = -1; int dim{k}_input = -1; (void)dim{k}; "
                     f"(void)dim{k}_input;")
    lines.append("  char got[200];")
    for i, spec in enumerate(inputs):
        rank, code = len(spec["shape"]), DTYPE_CODES[spec["dtype"]]
        want = "[" + ", ".join("?" if d is None else str(d) for d in spec["shape"]) + "]"
        what = f"input {i} ({spec['name']}): expected {spec['dtype']}{want}"
        checks = [f"inputs[{i}].rank != {rank}"]
        for d, size in enumerate(spec["shape"]):
            checks.append(f"inputs[{i}].shape[{d}] {'< 0' if size is None else f'!= {size}'}")
        lines += [
            f"  if (inputs[{i}].dtype != {code} || {' || '.join(checks)}) {{",
            f"    describe(&inputs[{i}], got, sizeof got);",
            f"    snprintf(last_error, sizeof last_error, \"dlc_{name}: {what}, but got %s\", got);",
            "    return 1;",
            "  }",
            f"  int64_t bytes{i} = {_ITEMSIZE[spec['dtype']]};",
            f"  for (int d = 0; d < {rank}; ++d) bytes{i} *= inputs[{i}].shape[d];",
            f"  if (bytes{i} > 0 && inputs[{i}].data == NULL) {{ snprintf(last_error, sizeof "
            f"last_error, \"dlc_{name}: input {i} ({spec['name']}) has no data\"); return 1; }}",
        ]
        for d, dim in enumerate(_dim_names(spec)):
            if dim is None:
                continue
            k = names.index(dim)
            what = ("batched inputs disagree on the batch size" if dim == "batch" else
                    f"inputs disagree on dynamic dimension {dim}")
            lines.append(f"  if (dim{k} < 0) {{ dim{k} = inputs[{i}].shape[{d}]; "
                         f"dim{k}_input = {i}; }} else if (inputs[{i}].shape[{d}] != dim{k}) "
                         f"{{ snprintf(last_error, sizeof last_error, \"dlc_{name}: {what}: "
                         f"input %d has %lld and input {i} ({spec['name']}) has %lld\", "
                         f"dim{k}_input, (long long)dim{k}, (long long)inputs[{i}].shape[{d}]); "
                         f"return 1; }}")
    if cuda:
        # The kernels reach device memory, not the caller's: inputs copied in.
        lines += ["  const char *why = NULL;",
                  "  if (!dlc_cuda_available(&why)) { snprintf(last_error, sizeof last_error, "
                  f"\"dlc_{name}: %s\", why ? why : \"no CUDA device\"); return 3; }}"]
        for i in range(len(inputs)):
            release_so_far = ("release_inputs(on_device" +
                              "".join(f", base{k}" for k in range(i + 1)) +
                              "".join(", NULL" for _ in range(len(inputs) - i - 1)) + ");")
            lines += [
                f"  char *base{i} = on_device ? (char *)inputs[{i}].data : bytes{i} ? "
                f"mgpuMemAlloc(bytes{i}, NULL, 0) : NULL;",
                f"  if (!on_device && bytes{i} && (!base{i} || !dlc_cuda_copy_to_device(base{i}, "
                f"inputs[{i}].data, bytes{i}))) {{ const char *e = dlc_cuda_take_error(); "
                f"{release_so_far} snprintf(last_error, sizeof last_error, \"dlc_{name}: "
                f"input {i}: %s\", e ? e : \"no memory\"); return 3; }}",
            ]
        # The caller's work on its streams (device inputs), or the uploads
        # (pageable copies may still be in flight), done before the kernels
        # run on a non-blocking stream.
        all_so_far = "release_inputs(on_device" + "".join(
            f", base{k}" for k in range(len(inputs))) + ");"
        lines.append(f"  if (!dlc_cuda_synchronize()) {{ const char *e = dlc_cuda_take_error(); "
                     f"{all_so_far} snprintf(last_error, sizeof last_error, \"dlc_{name}: %s\", "
                     f"e ? e : \"synchronization failed\"); return 3; }}")
    else:
        for i in range(len(inputs)):
            lines.append(f"  char *base{i} = inputs[{i}].data;")
    for i, spec in enumerate(inputs):
        rank = len(spec["shape"])
        lines.append(f"  {_descriptor(rank)} a{i};")
        lines.append(f"  a{i}.allocated = a{i}.aligned = base{i}; a{i}.offset = 0;")
        if rank:
            lines.append(f"  {{ int64_t stride = 1; for (int d = {rank - 1}; d >= 0; --d) "
                         f"{{ a{i}.sizes[d] = inputs[{i}].shape[d]; a{i}.strides[d] = stride; "
                         f"stride *= inputs[{i}].shape[d]; }} }}")
        lines.append(f"  void *pa{i} = &a{i};")
    packed = []
    if outputs:
        lines.append(f"  struct {{ {result_fields} }} results;")
        lines.append("  memset(&results, 0, sizeof results);")
        lines.append("  void *presults = &results;")
        packed.append("&presults")
    packed += [f"&pa{i}" for i in range(len(inputs))]
    all_bases = ", ".join(f"base{i}" for i in range(len(inputs))) or ""
    release = f"release_inputs(on_device{', ' if all_bases else ''}{all_bases});" if cuda else ""
    lines.append(f"  void *packed[] = {{ {', '.join(packed) or '0'} }};")
    if cuda:
        lines.append("  pthread_once(&modules_loaded, dlc_module_init);")
    lines.append("  if (&dlc_num_threads) dlc_num_threads = threads_wanted;")
    lines.append(f"  int64_t failed = dlc_call_guarded(_mlir__mlir_ciface_{symbol}, packed);")
    lines.append(f"  if (failed) {{ {release} snprintf(last_error, sizeof last_error, "
                 f"\"dlc_{name}: the compiled code could not allocate %lld bytes\", "
                 "(long long)failed); return 2; }")
    if cuda:
        lines.append("  const char *cuda_error = dlc_cuda_take_error();")
        lines.append(f"  if (cuda_error) {{ {release} snprintf(last_error, sizeof last_error, "
                     f"\"dlc_{name}: %s\", cuda_error); return 3; }}")
    # Whether a pointer lies in an input's buffer (not the library's).
    lines.append("#define DLC_IN_INPUTS(p) (0" + "".join(
        f" || ((char *)(p) >= base{j} && (char *)(p) < base{j} + bytes{j})"
        for j in range(len(inputs))) + ")")
    # A failure while making the outputs (no memory, a failed copy from the
    # GPU) still releases everything: what the library allocated, and the
    # outputs made so far.
    lines.append("  int status = 0;")
    lines.append(f"  for (int k = 0; k < {len(outputs)}; ++k) "
                 "{ outputs[k].allocated = NULL; outputs[k].data = NULL; }")
    for i, spec in enumerate(outputs):
        rank, size = spec["rank"], _ITEMSIZE[spec["dtype"]]
        lines += [
            "  {",
            f"    dlc_tensor *out = &outputs[{i}];",
            f"    out->dtype = {DTYPE_CODES[spec['dtype']]}; out->rank = {rank};",
            "    int64_t count = 1;",
        ]
        if rank:
            lines.append(f"    for (int d = 0; d < {rank}; ++d) {{ out->shape[d] = "
                         f"results.r{i}.sizes[d]; count *= results.r{i}.sizes[d]; }}")
        lines += [
            f"    for (int d = {rank}; d < DLC_MAX_RANK; ++d) out->shape[d] = 0;",
            f"    char *first = (char *)results.r{i}.aligned + results.r{i}.offset * {size};",
            # An output the library does not own alone (an input's buffer, or
            # another output's), not dense, or in GPU memory that the caller
            # wants on the host: copied into a buffer of its own.
            f"    int own = {'on_device' if cuda else 1} && results.r{i}.allocated != NULL && "
            f"!DLC_IN_INPUTS(results.r{i}.allocated);",
            "    int dense = 1; (void)dense;",
        ]
        for j in range(i):
            lines.append(f"    if (results.r{i}.allocated == outputs[{j}].allocated) own = 0;")
        if rank:
            lines.append(f"    {{ int64_t stride = 1; for (int d = {rank - 1}; d >= 0; --d) "
                         f"{{ if (results.r{i}.sizes[d] != 1 && results.r{i}.strides[d] != "
                         f"stride) dense = 0; stride *= results.r{i}.sizes[d]; }} }}")
        lines += [
            "    if (own && dense) { out->data = first; out->allocated = results.r" + str(i)
            + ".allocated; }",
        ]
        if cuda:
            # Device results the caller keeps on the device, dense: one copy
            # within device memory.
            lines += [
                f"    else if (on_device && dense) {{",
                f"      int64_t bytes = count * {size};",
                "      char *buffer = bytes > 0 ? mgpuMemAlloc(bytes, NULL, 0) : NULL;",
                "      if (bytes > 0 && (!buffer || !dlc_cuda_copy_on_device(buffer, first, bytes))) {",
                "        const char *e = dlc_cuda_take_error(); if (buffer) mgpuMemFree(buffer, NULL);",
                f"        snprintf(last_error, sizeof last_error, \"dlc_{name}: output {i}: %s\", "
                "e ? e : \"no device memory\"); status = 3; goto outputs_done;",
                "      }",
                "      out->data = buffer; out->allocated = buffer;",
                "    }",
            ]
        lines += [
            "    else {",
            f"      char *copy = malloc(count * {size} > 0 ? count * {size} : 1);",
            "      if (!copy) { snprintf(last_error, sizeof last_error, \"dlc_" + name
            + ": out of memory for an output\"); status = 2; goto outputs_done; }",
        ]
        if cuda:
            # Device memory: the elements the view spans, brought to the host
            # first (strides are never negative in dlc's code).
            span = "1" + "".join(f" + (results.r{i}.sizes[{d}] - 1) * results.r{i}.strides[{d}]"
                                 for d in range(rank))
            lines += [
                f"      int64_t span = count > 0 ? ({span}) * {size} : 0;",
                "      char *staged = malloc(span > 0 ? span : 1);",
                "      if (!staged) { free(copy); snprintf(last_error, sizeof last_error, \"dlc_"
                + name + ": out of memory for an output\"); status = 2; goto outputs_done; }",
                "      if (span && !dlc_cuda_copy_to_host(staged, first, span)) { free(staged); "
                "free(copy); const char *e = dlc_cuda_take_error(); snprintf(last_error, "
                f"sizeof last_error, \"dlc_{name}: output {i}: %s\", e ? e : \"copy failed\"); "
                "status = 3; goto outputs_done; }",
                "      first = staged;",
            ]
        if rank:
            lines += [
                f"      int64_t index[{rank}] = {{0}};",
                "      for (int64_t e = 0; e < count; ++e) {",
                "        int64_t at = 0;",
                f"        for (int d = 0; d < {rank}; ++d) at += index[d] * results.r{i}.strides[d];",
                f"        memcpy(copy + e * {size}, first + at * {size}, {size});",
                f"        for (int d = {rank - 1}; d >= 0; --d) {{ if (++index[d] < "
                f"results.r{i}.sizes[d]) break; index[d] = 0; }}",
                "      }",
            ]
        else:
            lines.append(f"      memcpy(copy, first, {size});")
        if cuda:
            lines.append("      free(staged);")
            # Strided device results the caller keeps on the device: made
            # dense on the host, uploaded to a buffer of their own.
            lines += [
                "      if (on_device) {",
                f"        int64_t bytes = count * {size};",
                "        char *buffer = bytes > 0 ? mgpuMemAlloc(bytes, NULL, 0) : NULL;",
                "        if (bytes > 0 && (!buffer || !dlc_cuda_copy_to_device(buffer, copy, bytes))) {",
                "          const char *e = dlc_cuda_take_error(); if (buffer) mgpuMemFree(buffer, NULL);",
                f"          free(copy); snprintf(last_error, sizeof last_error, \"dlc_{name}: output "
                f"{i}: %s\", e ? e : \"no device memory\"); status = 3; goto outputs_done;",
                "        }",
                "        free(copy); copy = buffer;",
                "      }",
            ]
        lines += ["      out->data = copy; out->allocated = copy;", "    }", "  }"]
    lines.append("  goto outputs_done;")
    lines.append("outputs_done: ;")
    # Buffers the library allocated for results that no output keeps.
    free_call = "mgpuMemFree(p, NULL)" if cuda else "_mlir_memref_to_llvm_free(p)"
    lines.append(f"  void *freed[{max(len(outputs), 1)}]; int nfreed = 0; (void)freed; (void)nfreed;")
    for i in range(len(outputs)):
        kept = " || ".join(f"p == outputs[{k}].allocated" for k in range(len(outputs)))
        lines += [
            "  {",
            f"    void *p = results.r{i}.allocated; int skip = !p || DLC_IN_INPUTS(p) || {kept};",
            "    for (int k = 0; k < nfreed; ++k) if (freed[k] == p) skip = 1;",
            f"    if (!skip) {{ {free_call}; freed[nfreed++] = p; }}",
            "  }",
        ]
    lines.append("#undef DLC_IN_INPUTS")
    if cuda:
        lines.append(f"  {release}")
        lines.append("  cuda_error = dlc_cuda_take_error();")
        lines.append(f"  if (cuda_error && !status) {{ snprintf(last_error, sizeof last_error, "
                     f"\"dlc_{name}: %s\", cuda_error); status = 3; }}")
    free_output = ("(on_device ? dlc_free_device_tensor : dlc_free_tensor)" if cuda
                   else "dlc_free_tensor")
    lines.append(f"  if (status) for (int k = 0; k < {len(outputs)}; ++k) "
                 f"{free_output}(&outputs[k]);")
    lines += ["  return status;", "}", ""]
    if cuda:
        lines += [
            f"int dlc_{name}(const dlc_tensor *inputs, dlc_tensor *outputs) {{",
            f"  return run_{name}(inputs, outputs, 0);",
            "}",
            "/* The same with inputs and outputs in device memory (outputs: release",
            " * with dlc_free_device_tensor). */",
            f"int dlc_{name}_device(const dlc_tensor *inputs, dlc_tensor *outputs) {{",
            f"  return run_{name}(inputs, outputs, 1);",
            "}", "",
        ]
    return "\n".join(lines)
