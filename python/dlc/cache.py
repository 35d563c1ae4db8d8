"""dlc's disk cache of compiled code: a second process compiles nothing.

An entry is the machine code of one compiled function, linked into a
shared library, keyed by everything that decides that code: the function's
``dl`` IR (its text and the bytes of every constant, weights included),
the pass pipeline with its
options, the target (``dl.target``, in the IR), the entry symbol and result
types, and dlc's version and build. The first compile of a key builds its
library: a large module in the cache's folder directly
(runtime.compile_library: LLVM in parallel parts, linked with the system C
compiler, ``cc``; without one nothing is cached), a small one JIT-compiled
as always (position-independent), then written as an object file, linked
and stored; later compiles of the key, in any process, load the library (``dlopen``)
instead of running the pipeline and LLVM.

Where: ``$DLC_CACHE_DIR``, else ``$XDG_CACHE_HOME/dlc``, else
``~/.cache/dlc``; ``DLC_CACHE_DIR=off`` (or empty) turns the cache off.
Only compiles that took at least ``$DLC_CACHE_MIN_SECONDS`` (default 1.0,
as JAX's persistent cache) are stored: linking a library costs tens of
milliseconds, more than compiling a small function again. Size: the least
recently used entries are removed once the cache passes
``$DLC_CACHE_MAX_MB`` (default 2048).

Safe against concurrent writers: each writer builds its entry in a private
folder and renames it into place, which succeeds for one of them; readers
only ever see complete entries. Safe against corrupt entries: each records
the BLAKE3 digest of its library and of each weight file (14 GB/s on two
Zen 5 cores: GPT-2's 500 MB of weights were 0.35 s of SHA-256 at every
load, 0.08 s of CRC-32). The library's digest is checked at every load;
a weight file's only where its size, modification or change time differs
from those recorded when it was written (as git's index trusts a file whose
stat is unchanged): hashing them every time was 0.08 s of BERT-base's 0.31 s
and 0.11 s of GPT-2's 0.41 s compile from the cache on two Zen 3 cores. A
mismatch, or a library that does not load, removes the entry and compiles
again.

Private to its user: an entry holds a model's weights, so the cache's
folders are made 0700 and its files 0600 whatever the process umask (as
ccache, Triton and TorchInductor keep theirs). A cache folder that belongs to
another user, or that others can write into, is not used at all (a library
in it could be theirs); one that others can read is read but not written
to. Either way a :class:`CacheWarning` says why and how to fix it.
"""

import json
import os
import shutil
import stat
import subprocess
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import blake3
import numpy as np

from . import _build_config
from .version import __version__

#: bumped when the layout of an entry changes (3: weights checked by CRC-32;
#: 4: the key, the library and the weights hashed with BLAKE3)
FORMAT = 4

_LIBRARY = "code.so"
_META = "entry.json"


def directory():
    """The cache folder, or None when the cache is off."""
    value = os.environ.get("DLC_CACHE_DIR")
    if value is not None:
        value = value.strip()
        if value == "" or value.lower() in ("off", "0", "none"):
            return None
        return os.path.abspath(os.path.expanduser(value))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "dlc")


class CacheWarning(UserWarning):
    """dlc's disk cache folder cannot be used safely (another user's, or
    open to other users); compiles go on without it."""


_warned = set()


def _refusal(root, writing):
    """Why `root` must not be read (writing=False) or written to
    (writing=True), or None. A folder that does not exist yet is fine: it
    is created private."""
    try:
        status = os.stat(root)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"it cannot be examined ({error.strerror})"
    mode = stat.S_IMODE(status.st_mode)
    if status.st_uid != os.geteuid():
        return (f"it belongs to another user (uid {status.st_uid}), so a library in it "
                f"could be theirs; point DLC_CACHE_DIR at a folder of your own")
    if mode & 0o022:
        return (f"other users can write into it (mode {mode:04o}), so a library in it "
                f"could be theirs; check its contents, then `chmod 700 {root}` "
                f"(or point DLC_CACHE_DIR elsewhere)")
    if writing and mode & 0o077:
        return (f"other users can read it (mode {mode:04o}) and its entries hold your "
                f"models' weights; make it private with `chmod 700 {root}`")
    return None


def _usable(root, writing):
    """Whether dlc may read (or write) the cache at `root`; warns once per
    folder and reason where not."""
    reason = _refusal(root, writing)
    if reason is None:
        return True
    if (root, reason) not in _warned:
        _warned.add((root, reason))
        use = "written to" if writing and "read it" in reason else "used"
        warnings.warn(f"dlc's disk cache {root} is not {use}: {reason}", CacheWarning,
                      stacklevel=4)
    return False


def _private_folder(path):
    """Creates `path` (and missing parents) as 0700 folders, whatever the
    umask; an existing folder is left as it is."""
    missing = []
    while path and not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            continue
        os.chmod(folder, 0o700)  # mkdir's mode is masked by the umask


def max_bytes():
    text = os.environ.get("DLC_CACHE_MAX_MB", "").strip()
    try:
        return int(float(text) * 2 ** 20) if text else 2048 * 2 ** 20
    except ValueError:
        raise ValueError(f"DLC_CACHE_MAX_MB must be a number of megabytes, "
                         f"got {text!r}") from None


def min_seconds():
    text = os.environ.get("DLC_CACHE_MIN_SECONDS", "").strip()
    try:
        return float(text) if text else 1.0
    except ValueError:
        raise ValueError(f"DLC_CACHE_MIN_SECONDS must be a number of seconds, "
                         f"got {text!r}") from None


_build_identity = None


def build_identity():
    """dlc's version and this build's compiled libraries (size and time of
    each): code from another build of dlc is never reused."""
    global _build_identity
    if _build_identity is None:
        from .mlir import _mlir_libs
        parts = [f"dlc {__version__}", f"format {FORMAT}",
                 f"llvm {_build_config.LLVM_VERSION}"]
        libraries = [os.path.join(os.path.dirname(_mlir_libs.__file__), "libDLCPythonCAPI.so"),
                     _build_config.DLC_RUNTIME_LIB]
        for library in libraries:
            try:
                status = os.stat(os.path.realpath(library))
                parts.append(f"{os.path.basename(library)} {status.st_size} "
                             f"{status.st_mtime_ns}")
            except OSError:
                parts.append(f"{os.path.basename(library)} missing")
        _build_identity = "\n".join(parts)
    return _build_identity


def key(module, pipeline, symbol, result_specs):
    """The key of `module` (an ir.Module at the dl stage) compiled through
    `pipeline` (text) for entry `symbol` returning `result_specs`."""
    digest = _hasher()
    for part in (build_identity(), pipeline, symbol, repr(list(result_specs))):
        digest.update(part.encode())
        digest.update(b"\0")
    _fingerprint(module, digest)
    return digest.hexdigest()


def _hasher():
    """A BLAKE3 hasher that spreads a large update over every core (and lets
    go of the GIL). BLAKE3 rather than SHA-256: the key hashes every weight
    and a load checks every stored one, and at 500 MB (GPT-2) SHA-256 on two
    cores took 0.17 s and CRC-32 0.08 s of a 0.36 s cached compile; BLAKE3
    takes 0.035 s for the same bytes (Zen 5, AVX-512), and is as collision
    resistant as SHA-256 for a key. One thread in a child forked after its
    parent hashed on several: the pool's threads are the parent's, and the
    child waited for them forever."""
    global _threads_pid
    if _threads_pid is None:
        _threads_pid = os.getpid()
    if _threads_pid != os.getpid():
        return blake3.blake3()
    return blake3.blake3(max_threads=blake3.blake3.AUTO)


#: the process whose BLAKE3 hashes started the (Rust) thread pool
_threads_pid = None


def _dense_attributes(attribute, found):
    """The dense elements attributes and resource blobs in `attribute`
    (nested in arrays and dictionaries too), appended to `found` in
    order."""
    from .mlir import ir
    from .tracing import as_resource
    if isinstance(attribute, ir.DenseElementsAttr):
        found.append(attribute)
    elif (resource := as_resource(attribute)) is not None:
        found.append(resource)
    elif isinstance(attribute, ir.ArrayAttr):
        for item in attribute:
            _dense_attributes(item, found)
    elif isinstance(attribute, ir.DictAttr):
        for index in range(len(attribute)):
            _dense_attributes(attribute[index].attr, found)


def _fingerprint(module, digest):
    """Feeds `digest` what the key hashes of the module: its text with large
    constants elided, then the bytes of every dense constant and of every
    resource constant dlc traced (tracing.RESOURCE_BYTES) in program order,
    viewed in place (serializing the module whole, as bytecode, copied the
    weights first: 0.27 s of GPT-2's 0.65 s compile from the cache)."""
    import numpy as np
    from . import tracing
    from .mlir import ir
    # large_resource_limit 0: any other limit hex-encodes each blob before
    # eliding it (1.2 s for 170 MB).
    text = module.operation.get_asm(large_elements_limit=16, large_resource_limit=0,
                                    assume_verified=True)
    text = tracing.normalize_resource_names(text)
    found = []

    def visit(op):
        attributes = op.attributes
        for index in range(len(attributes)):
            _dense_attributes(attributes[index].attr, found)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    buffers = []
    seen = {}  # a constant used again (GPT-2's tied embedding, 154 MB) is hashed once
    for attribute in found:
        is_resource = isinstance(attribute, ir.DenseResourceElementsAttr)
        identity = str(attribute) if is_resource else attribute  # both uniqued
        if identity in seen:
            buffers.append(f"the constant #{seen[identity]}".encode())
            continue
        seen[identity] = len(seen)
        header = f"{attribute.type}".encode()
        if is_resource:
            array = tracing.resource_array(attribute)
            if array is None:  # a blob from elsewhere (a parsed file)
                digest.update(b"bytecode")
                digest.update(_bytecode(module))
                return
            buffers.append(b"resource " + header + f"{array.dtype}".encode())
            buffers.append(array.view(np.uint8).reshape(-1).data)
            continue
        if attribute.is_splat:
            buffers.append(header + str(attribute).encode())
            continue
        try:
            array = np.asarray(attribute)
        except Exception:  # noqa: BLE001 - a type numpy cannot view (bf16)
            digest.update(b"bytecode")
            digest.update(_bytecode(module))
            return
        buffers.append(header + f"{array.dtype}".encode())
        buffers.append(np.ascontiguousarray(array).view(np.uint8).reshape(-1).data)
    digest.update(b"text+constants")
    digest.update(text.encode())
    for buffer in buffers:
        digest.update(len(buffer).to_bytes(8, "little"))
        digest.update(buffer)


def _workers(tasks):
    return max(1, min(tasks, os.cpu_count() or 1))


def _bytecode(module):
    import io
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()


def _digest_of(path):
    """The BLAKE3 digest of a file's bytes (mapped, hashed on every core),
    as hex."""
    digest = _hasher()
    if os.path.getsize(path):
        digest.update_mmap(path)
    return digest.hexdigest()


def _stat_of(path):
    """What a lookup compares to trust a weight file without hashing it:
    its size, modification and change times (ns; a write changes both
    times, and the change time cannot be set back), as a JSON-able list."""
    status = os.stat(path)
    return [status.st_size, status.st_mtime_ns, status.st_ctime_ns]


def _digest_of_each(paths):
    """_digest_of each path, in order: each file is hashed on every core,
    the small ones side by side."""
    if len(paths) <= 1:
        return [_digest_of(p) for p in paths]
    with ThreadPoolExecutor(_workers(len(paths))) as pool:
        return list(pool.map(_digest_of, paths))


def lookup(entry_key):
    """The library stored under `entry_key` and its weights, checked:
    (path, {pointer symbol: read-only array mapped from its file}), or
    None."""
    root = directory()
    if root is None or not _usable(root, writing=False):
        return None
    folder = os.path.join(root, entry_key[:2], entry_key)
    library, meta = os.path.join(folder, _LIBRARY), os.path.join(folder, _META)
    try:
        with open(meta) as data:
            record = json.load(data)
        if record.get("format") != FORMAT or _digest_of(library) != record.get("library"):
            raise ValueError("corrupt entry")
        recorded = record.get("weights", {})
        if not all(name.isidentifier() for name in recorded):
            raise ValueError("corrupt entry")
        paths = [os.path.join(folder, name + ".npy") for name in recorded]
        stats = record.get("stats", {})
        changed = [(path, recorded[name]) for name, path in zip(recorded, paths)
                   if stats.get(name) != _stat_of(path)]
        if _digest_of_each([path for path, _ in changed]) != [d for _, d in changed]:
            raise ValueError("corrupt entry")
        if changed:  # the same bytes, stat changed (copied, rewritten): trust them again
            _record_stats(meta, record, recorded, paths)
        weights = {name: np.load(path, mmap_mode="r", allow_pickle=False)
                   for name, path in zip(recorded, paths)}
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        remove(entry_key)
        return None
    try:
        os.utime(folder)  # most recently used
    except OSError:
        pass
    return library, weights


def _record_stats(meta, record, names, paths):
    """Rewrites the entry's record `meta` with the weight files' current
    stat (atomically: readers see the old record or the new); best effort,
    a cache others own or a full disk just hashes them again next time."""
    record = dict(record, stats={name: _stat_of(path) for name, path in zip(names, paths)})
    try:
        handle, temporary = tempfile.mkstemp(prefix=".entry-", dir=os.path.dirname(meta))
        with os.fdopen(handle, "w") as data:  # mkstemp: 0600
            json.dump(record, data)
        os.replace(temporary, meta)
    except OSError:
        try:
            os.remove(temporary)
        except (OSError, UnboundLocalError):
            pass


def remove(entry_key):
    root = directory()
    if root is not None:
        shutil.rmtree(os.path.join(root, entry_key[:2], entry_key), ignore_errors=True)


def _linker():
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return path
    return None


def can_link():
    """Whether a C compiler is there to link object files into a library."""
    return _linker() is not None


def link(objects, library):
    """Links the object files `objects` into the shared library `library`;
    returns whether it could."""
    linker = _linker()
    if linker is None:
        return False
    process = subprocess.run([linker, "-shared", "-o", library, *objects],
                             capture_output=True, text=True)
    return process.returncode == 0


def begin(entry_key):
    """A private folder (0700) in the cache to build the entry of
    `entry_key` in, or None where nothing can be stored (no cache, no C
    compiler, a full disk: the cache is an optimization, never an error).
    Its library is to be written at ``library_path(folder)``; then
    :func:`commit` stores it, or :func:`abandon` drops it."""
    root = directory()
    if root is None or _linker() is None or not _usable(root, writing=True):
        return None
    shard = os.path.join(root, entry_key[:2])
    try:
        _private_folder(shard)
        return tempfile.mkdtemp(prefix=f".{entry_key[:12]}-", dir=shard)  # 0700
    except OSError:
        return None


def library_path(folder):
    return os.path.join(folder, _LIBRARY)


def abandon(folder):
    shutil.rmtree(folder, ignore_errors=True)


def commit(entry_key, folder, weights=None):
    """Stores the entry built in `folder` (by :func:`begin`; its library
    written) with `weights` (the arrays of its externalized constants, by
    pointer symbol) under `entry_key`; returns the stored library's path, or
    None. Either way `folder` is gone afterwards (a library loaded from it
    stays loaded)."""
    shard = os.path.dirname(folder)  # where begin made it
    root, final = os.path.dirname(shard), os.path.join(shard, entry_key)
    library = library_path(folder)
    try:
        os.chmod(library, 0o600)  # the linker's mode follows the umask
        # The externalized constants (runtime.externalize_constants) beside
        # the library, one .npy each, read back mapped.
        paths = {}
        for name, array in (weights or {}).items():
            path = os.path.join(folder, name + ".npy")
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(handle, "wb") as data:
                np.save(data, array)
            paths[name] = path
        checksums = dict(zip(paths, _digest_of_each(list(paths.values()))))
        stats = {name: _stat_of(path) for name, path in paths.items()}
        meta = os.open(os.path.join(folder, _META), os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                       0o600)
        with os.fdopen(meta, "w") as data:
            json.dump({"format": FORMAT, "library": _digest_of(library), "weights": checksums,
                       "stats": stats, "created": time.time(), "dlc": __version__}, data)
        os.chmod(os.path.join(folder, _META), 0o600)
        try:
            os.rename(folder, final)
        except OSError:  # another process stored the same key first
            return library_path(final) if os.path.isdir(final) else None
        folder = None
        _evict(root, keep=final)
        return library_path(final)
    except OSError:
        return None
    finally:
        if folder is not None:
            abandon(folder)


def store(entry_key, code):
    """Links the object code of `code` (a runtime.JITCode compiled with
    pic=True) into a library stored under `entry_key`; returns its path, or
    None where nothing could be stored."""
    folder = begin(entry_key)
    if folder is None:
        return None
    try:
        obj = os.path.join(folder, "code.o")
        code.dump_object(obj)
        linked = link([obj], library_path(folder))
        os.remove(obj)
    except OSError:
        linked = False
    if not linked:
        abandon(folder)
        return None
    return commit(entry_key, folder, getattr(code, "weights", {}))


def entries():
    """[(path of the entry's folder, bytes, last use time)] of the cache."""
    root = directory()
    found = []
    if root is None or not os.path.isdir(root):
        return found
    for shard in os.listdir(root):
        shard_path = os.path.join(root, shard)
        if not os.path.isdir(shard_path):
            continue
        for name in os.listdir(shard_path):
            folder = os.path.join(shard_path, name)
            if name.startswith(".") or not os.path.isdir(folder):
                continue
            try:
                size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
                found.append((folder, size, os.path.getmtime(folder)))
            except OSError:
                continue
    return found


def _evict(root, keep):
    found = sorted((entry for entry in entries() if entry[0] != keep),
                   key=lambda entry: entry[2])
    total = sum(size for _, size, _ in entries())
    limit = max_bytes()
    for folder, size, _ in found:
        if total <= limit:
            break
        shutil.rmtree(folder, ignore_errors=True)
        total -= size


def clear():
    """Removes every entry of the disk cache; returns how many."""
    found = entries()
    for folder, _, _ in found:
        shutil.rmtree(folder, ignore_errors=True)
    return len(found)
