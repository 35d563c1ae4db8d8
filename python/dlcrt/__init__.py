"""dlcrt: run libraries written by ``dlc.export`` with ctypes and numpy only.

No compiler, no LLVM or MLIR: this package imports nothing of dlc's, so it
works where only the exported ``.so`` and numpy are installed.

    import dlcrt
    model = dlcrt.load("resnet18.so")
    logits = model(images)          # one exported function
    model.resnet18(images)          # the same, by name

A library exported with ``target="cuda"`` also takes tensors already in GPU
memory (``torch.cuda`` tensors, CuPy arrays: anything with ``__dlpack__`` or
``__cuda_array_interface__``) and then returns :class:`DeviceArray` results
that stay on the GPU (``torch.from_dlpack(result)``; ``result.numpy()``
copies to the host): nothing crosses the PCIe bus (:mod:`dlcrt.dlpack`).

Calls check every input as a ``dlc.jit`` function does and raise the same
errors (:class:`ShapeError`, :class:`DTypeError`, :class:`ArityError`,
``MemoryError``); ``dlc.ShapeError`` and ``dlcrt.ShapeError`` are one class.
A library that is not dlc's, was damaged, was written by another format of
dlc, or was compiled for another CPU is refused with an
:class:`ArtifactError` saying which.
"""

import ctypes
import json
import mmap
import os
import platform

import numpy as np

from .dlpack import DeviceArray, device_view, is_device_array
from .errors import (ArityError, ArtifactError, CUDAUnavailableError, DLCError,  # noqa: F401
                     DTypeError, ShapeError)

#: the layout of the metadata and of the C ABI (dlc.export writes it);
#: bumped when either changes
FORMAT = 1
#: the most dimensions a tensor of the C ABI has
MAX_RANK = 8
#: dtype codes of the C ABI (dlc_tensor.dtype)
DTYPE_CODES = {"float32": 0, "float64": 1, "float16": 2, "bfloat16": 3, "int8": 4,
               "int16": 5, "int32": 6, "int64": 7, "bool": 8, "uint8": 9,
               "uint16": 10, "uint32": 11, "uint64": 12}


def _numpy_dtype(name):
    if name == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise DTypeError("this function takes bfloat16 arrays, which need the "
                             "ml_dtypes package") from None
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


class Tensor(ctypes.Structure):
    """dlc_tensor of the C ABI (see the header dlc.export writes)."""
    _fields_ = [("data", ctypes.c_void_p), ("allocated", ctypes.c_void_p),
                ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_RANK)]


def _host_flags():
    """The CPU's feature flags as /proc/cpuinfo names them (empty where
    unknown: then nothing is refused for features)."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


# LLVM feature names whose instructions the code may use -> /proc/cpuinfo
# flags. Only vector ISA features (what dlc's code generation chooses by):
# a missing one means an illegal instruction.
_CPUINFO = {"avx": "avx", "avx2": "avx2", "fma": "fma", "f16c": "f16c",
            "avx512f": "avx512f", "avx512bw": "avx512bw", "avx512dq": "avx512dq",
            "avx512vl": "avx512vl", "avx512cd": "avx512cd", "avx512bf16": "avx512_bf16",
            "avx512fp16": "avx512_fp16", "avx512vnni": "avx512_vnni",
            "avx512vbmi": "avx512vbmi", "avx512ifma": "avx512ifma", "amx-tile": "amx_tile",
            "amx-bf16": "amx_bf16", "amx-int8": "amx_int8", "avxvnni": "avx_vnni"}


def why_not_runnable(target, flags=None, machine=None):
    """None where code for `target` (the metadata's record) runs here, else
    why not."""
    machine = machine or platform.machine()
    arch = target["triple"].split("-")[0]
    if arch != machine:
        return f"it is compiled for {arch} ({target['cpu']}) and this machine is {machine}"
    flags = _host_flags() if flags is None else flags
    if not flags:
        return None
    missing = sorted(_CPUINFO[f] for f in target["features"]
                     if f in _CPUINFO and _CPUINFO[f] not in flags)
    if missing:
        return (f"it is compiled for {target['cpu']}, whose features "
                f"{', '.join(missing)} this machine's CPU lacks")
    return None


class Library:
    """An exported library, loaded: one callable per exported function (as
    attributes, by name); called directly where it holds exactly one."""

    def __init__(self, path):
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"dlcrt.load: no such file: {self.path!r}")
        metadata = self._peek_metadata()
        why_not = why_not_runnable(metadata["target"])
        if why_not is not None:
            raise ArtifactError(f"dlcrt.load: {self.path} cannot run on this machine: "
                                f"{why_not}")
        try:
            self._library = ctypes.CDLL(os.path.abspath(self.path), mode=ctypes.RTLD_LOCAL)
        except OSError as error:
            raise ArtifactError(f"dlcrt.load: {self.path} does not load: {error}") from None
        self.metadata = metadata
        if metadata.get("kind", "cpu") == "cuda":
            # The library loads libcuda.so.1 itself, on first use: asked now,
            # so that a machine without a GPU is told at load.
            why = ctypes.c_char_p()
            available = self._library.dlc_cuda_ready
            available.argtypes = [ctypes.POINTER(ctypes.c_char_p)]
            if not available(ctypes.byref(why)):
                reason = (why.value or b"no CUDA device").decode()
                # A cubin alone runs on its chip only; PTX (alone or in a
                # fatbin) is compiled by the driver for newer GPUs too.
                which = ("" if metadata.get("kernels") == "cubin" else " or newer")
                raise CUDAUnavailableError(f"dlcrt.load: {self.path} runs its kernels on "
                                           f"a CUDA GPU ({metadata.get('chip')}{which}): "
                                           f"{reason}")
        self._library.dlc_last_error.restype = ctypes.c_char_p
        self._library.dlc_free_tensor.argtypes = [ctypes.POINTER(Tensor)]
        if metadata.get("kind", "cpu") == "cuda":
            self._library.dlc_free_device_tensor.argtypes = [ctypes.POINTER(Tensor)]
            copy = self._library.dlc_copy_to_host
            copy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        self._library.dlc_set_num_threads.argtypes = [ctypes.c_int64]
        self.functions = {}
        for record in metadata["functions"]:
            function = Function(self, record)
            self.functions[record["name"]] = function
            setattr(self, record["name"], function)

    def _peek_metadata(self):
        """The metadata record, read from the file's bytes before loading
        it (a library for another CPU must not be run to be refused)."""
        with open(self.path, "rb") as data:
            if data.read(4) != b"\x7fELF":
                raise ArtifactError(f"dlcrt.load: {self.path} is not a shared library "
                                    f"(no ELF header)")
            # Mapped, not read: the checksum reads every byte once.
            with mmap.mmap(data.fileno(), 0, access=mmap.ACCESS_READ) as blob:
                return self._parse_metadata(blob)

    def _parse_metadata(self, blob):
        marker = b'{"format": '
        start = blob.find(marker)
        if start < 0:
            raise ArtifactError(f"dlcrt.load: {self.path} is not a library written by "
                                f"dlc.export (no metadata record)")
        end = blob.find(b"\0", start)
        try:
            metadata = json.loads(blob[start:end].decode())
        except (UnicodeDecodeError, ValueError):
            raise ArtifactError(f"dlcrt.load: {self.path} is damaged: its metadata "
                                f"record is not valid") from None
        if metadata.get("format") == FORMAT:
            self._check_sum(blob, start, metadata)
        if metadata.get("format") != FORMAT:
            raise ArtifactError(
                f"dlcrt.load: {self.path} has format {metadata.get('format')!r} (written by "
                f"dlc {metadata.get('dlc', '?')}); this loader reads format {FORMAT}: "
                f"export it again with this version of dlc")
        return metadata

    def _check_sum(self, blob, start, metadata):
        """The SHA-256 of the file with the record's own checksum as zeros
        must be the record's (dlc.export wrote it after linking)."""
        import hashlib
        expected = metadata.get("sha256", "")
        marker = b'"sha256": "' + expected.encode() + b'"'
        at = blob.find(marker, start)
        if len(expected) != 64 or at < 0:
            raise ArtifactError(f"dlcrt.load: {self.path} is damaged: its metadata "
                                f"record has no checksum")
        begin = at + len(b'"sha256": "')
        digest = hashlib.sha256()
        view = memoryview(blob)
        try:
            digest.update(view[:begin])
            digest.update(b"0" * 64)
            digest.update(view[begin + 64:])
        finally:
            view.release()
        if digest.hexdigest() != expected:
            raise ArtifactError(f"dlcrt.load: {self.path} is damaged: its contents do "
                                f"not match the checksum dlc.export recorded (a partial "
                                f"copy, or changed bytes)")

    def copy_to_host(self, host, device, size):
        """Copies `size` bytes of GPU memory at `device` to `host` (a CUDA
        library's results: DeviceArray.numpy)."""
        if self._library.dlc_copy_to_host(host, device, size) != 0:
            raise RuntimeError((self._library.dlc_last_error() or b"").decode())

    def set_num_threads(self, threads):
        """Threads of the library's own pool a call may use (0: every core)."""
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
            raise ValueError(f"threads must be a non-negative int, but got {threads!r}")
        self._library.dlc_set_num_threads(threads)

    def __call__(self, *args):
        if len(self.functions) != 1:
            raise TypeError(f"{self.path} holds {len(self.functions)} functions "
                            f"({', '.join(self.functions)}): call one by name")
        return next(iter(self.functions.values()))(*args)

    def __repr__(self):
        return f"<dlcrt library {self.path}: {', '.join(self.functions)}>"


class _Owner:
    """Keeps an output's buffer until the last numpy view (or DeviceArray) of
    it is gone."""

    def __init__(self, library, tensor, device=False):
        self._free = (library._library.dlc_free_device_tensor if device
                      else library._library.dlc_free_tensor)
        self._tensor = tensor

    def __del__(self):
        self._free(ctypes.byref(self._tensor))


class Function:
    """One exported function: call it with numpy arrays."""

    def __init__(self, library, record):
        self._library = library
        self.name = record["name"]
        self.inputs = record["inputs"]
        self.outputs = record["outputs"]
        self._single = record.get("single_output", len(self.outputs) == 1)
        self._dtypes = [_numpy_dtype(i["dtype"]) if i["dtype"] != "bfloat16" else None
                        for i in self.inputs]
        self._entry = getattr(library._library, "dlc_" + self.name)
        self._entry.argtypes = [ctypes.POINTER(Tensor), ctypes.POINTER(Tensor)]
        self._entry.restype = ctypes.c_int
        self._device_entry = None
        if library.metadata.get("kind") == "cuda":
            # Inputs and outputs in GPU memory (see _call_device).
            self._device_entry = getattr(library._library, "dlc_" + self.name + "_device")
            self._device_entry.argtypes = [ctypes.POINTER(Tensor), ctypes.POINTER(Tensor)]
            self._device_entry.restype = ctypes.c_int

    def _describe(self, spec):
        dims = ", ".join("?" if d is None else str(d) for d in spec["shape"])
        return f"{spec['dtype']}[{dims}]"

    def _check_arity(self, args):
        if len(args) != len(self.inputs):
            names = ", ".join(i["name"] for i in self.inputs)
            raise ArityError(f"{self.name} takes {len(self.inputs)} arguments ({names}), "
                             f"but got {len(args)}")

    def _check_signature(self, described):
        """Checks each argument's (dtype name, shape), in order, against the
        inputs: dtypes, static dimensions, one size per named dynamic
        dimension (a manifest without names: one batch size)."""
        seen = {}
        for spec, (dtype, shape) in zip(self.inputs, described):
            got = f"{dtype}{list(shape)}"
            if dtype != spec["dtype"]:
                raise DTypeError(f"argument {spec['name']!r}: expected "
                                 f"{self._describe(spec)}, but got {got}")
            wanted = spec["shape"]
            if len(shape) != len(wanted) or any(
                    e is not None and e != g for e, g in zip(wanted, shape)):
                raise ShapeError(f"argument {spec['name']!r}: expected "
                                 f"{self._describe(spec)}, but got {got}")
            names = spec.get("dims") or [
                "batch" if d is None and axis == 0 else None for axis, d in enumerate(wanted)]
            for axis, dim in enumerate(names):
                if dim is None:
                    continue
                size, first = seen.setdefault(dim, (shape[axis], spec["name"]))
                if shape[axis] == size:
                    continue
                if dim == "batch":
                    raise ShapeError(f"batched arguments disagree on the batch size: "
                                     f"{first!r} has {size} and {spec['name']!r} "
                                     f"has {shape[axis]}")
                raise ShapeError(f"arguments disagree on dynamic dimension {dim!r}: "
                                 f"{first!r} has {size} and {spec['name']!r} has "
                                 f"{shape[axis]}")

    def _check(self, args):
        self._check_arity(args)
        arrays, described = [], []
        for spec, dtype, value in zip(self.inputs, self._dtypes, args):
            dtype = dtype or _numpy_dtype(spec["dtype"])
            array = value if isinstance(value, np.ndarray) else np.asarray(value)
            # Compared as numpy dtypes (bfloat16's name differs by version).
            described.append((spec["dtype"] if array.dtype == dtype else str(array.dtype),
                              array.shape))
            arrays.append(array)
        self._check_signature(described)
        # Not np.ascontiguousarray, which makes a 0-d array 1-d (and the
        # library refuses a rank-1 input where it expects a scalar).
        return [a if a.flags.c_contiguous else a.copy(order="C") for a in arrays]

    def _tensors(self, described):
        """The C ABI's input array for (address, dtype name, shape) triples."""
        inputs = (Tensor * max(len(described), 1))()
        for tensor, (address, dtype, shape) in zip(inputs, described):
            tensor.data = address
            tensor.dtype = DTYPE_CODES[dtype]
            tensor.rank = len(shape)
            for d, size in enumerate(shape):
                tensor.shape[d] = size
        return inputs

    def _raise(self, status):
        message = (self._library._library.dlc_last_error() or b"").decode()
        if status == 2:
            raise MemoryError(message)
        if status == 3:
            raise RuntimeError(message)  # a CUDA driver call failed
        raise ShapeError(message)

    def _marshal_device(self, args):
        """(device entry point, C inputs, what keeps the arguments alive) of
        arguments already in GPU memory."""
        views = []
        for spec, value in zip(self.inputs, args):
            if not is_device_array(value):
                raise TypeError(f"argument {spec['name']!r} is a host array while others "
                                f"are in GPU memory: pass all arguments on the GPU (as "
                                f"DLPack or CUDA array interface tensors) or all on the "
                                f"host")
            views.append(device_view(value, f"argument {spec['name']!r}"))
        self._check_signature([(v.dtype, v.shape) for v in views])
        inputs = self._tensors([(v.pointer, spec["dtype"], v.shape)
                                for v, spec in zip(views, self.inputs)])
        return self._device_entry, inputs, views

    def _marshal(self, args):
        """(entry point, C inputs, what keeps the arguments alive): the
        device entry point where the arguments are in GPU memory (CUDA
        libraries), else the host one."""
        self._check_arity(args)
        if self._device_entry is not None and any(is_device_array(a) for a in args):
            return self._marshal_device(args)
        arrays = self._check(args)
        inputs = self._tensors([(a.ctypes.data, spec["dtype"], a.shape)
                                for a, spec in zip(arrays, self.inputs)])
        return self._entry, inputs, arrays

    def _run(self, entry, inputs):
        outputs = (Tensor * max(len(self.outputs), 1))()
        status = entry(inputs, outputs)
        if status != 0:
            self._raise(status)
        device = entry is self._device_entry
        results = []
        for index, spec in enumerate(self.outputs):
            tensor = outputs[index]
            shape = tuple(tensor.shape[d] for d in range(tensor.rank))
            owner = _Owner(self._library, Tensor.from_buffer_copy(tensor), device=device)
            if device:
                # Results of device arguments stay in GPU memory.
                results.append(DeviceArray(tensor.data or 0, shape, spec["dtype"], 0, owner,
                                           self._library.copy_to_host))
                continue
            dtype = _numpy_dtype(spec["dtype"])
            count = int(np.prod(shape, dtype=np.int64))
            if count == 0 or not tensor.data:
                results.append(np.zeros(shape, dtype))
                continue
            buffer = (ctypes.c_char * (count * dtype.itemsize)).from_address(tensor.data)
            buffer._dlcrt_owner = owner  # freed with the last view
            results.append(np.frombuffer(buffer, dtype=dtype).reshape(shape))
        return results[0] if self._single else tuple(results)

    def __call__(self, *args):
        """Runs the function: numpy arrays in, numpy arrays out; or (CUDA
        libraries) GPU tensors in, :class:`DeviceArray` results out."""
        entry, inputs, alive = self._marshal(args)
        results = self._run(entry, inputs)
        del alive  # the call has finished with the arguments
        return results

    def prepare(self, *args):
        """The call of this function on `args`, checked and marshalled once:
        calling the returned object runs the function again on the same
        argument buffers (read anew at each call; keep them alive and their
        shapes unchanged), without the per-argument Python work of a plain
        call, which for a model with its weights as 100 GPU arguments costs
        more than its kernels. As a C caller of the entry point would."""
        entry, inputs, alive = self._marshal(args)

        def call():
            return self._run(entry, inputs)
        call.arguments = alive
        return call

    def __repr__(self):
        inputs = ", ".join(f"{i['name']}: {self._describe(i)}" for i in self.inputs)
        return f"<dlcrt function {self.name}({inputs})>"


def load(path):
    """Loads a library written by ``dlc.export``; returns a :class:`Library`."""
    return Library(path)
