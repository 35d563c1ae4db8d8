"""The records database: JSON lines, one measured trial or one task's
result each.

Every line carries the workload key (the hashed op signature,
:mod:`.tasks`), the target key (the hashed complete ``#dl.target``), and
dlc's version with the records' format; a line of another target or of an
incompatible version is never applied (dlc warns once per file and target
when a record exists for an op only on another target or version).

    {"kind": "trial", "format": 1, "dlc": "0.1.0", "target": "…", "workload": "…",
     "strategy": "#dl.strategy<…>", "seconds": 1.2e-4, "ok": true, ...}
    {"kind": "best", ..., "strategy": "#dl.strategy<…>", "seconds": 1.1e-4,
     "heuristic": "#dl.strategy<…>", "heuristic_seconds": 1.3e-4, "improved": true}

A "best" line is written once per task and tuning run, after the few best
candidates were measured again against the heuristic; it is applied only
where ``improved`` (the tuned strategy measured faster than the
heuristic's). The last applicable "best" line of a workload wins, so a
later run supersedes an earlier one. Applying records measures nothing: the
graph stage writes each recorded strategy on its op (with ``dl.tuned``,
which ``dl-opt --dl-explain`` reports as "tuned record").
"""

import json
import os
import socket
import time
import warnings

from ..mlir import ir
from ..version import __version__
from . import tasks as _tasks

#: the records' format; bumped when a strategy's meaning or a key changes
FORMAT = 1


class TuningWarning(UserWarning):
    """Tuning records that are not applied (another target or version), or
    lines of a records file that cannot be read."""


_warned = set()


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, TuningWarning, stacklevel=3)


def compatible(record):
    return record.get("format") == FORMAT and record.get("dlc") == __version__


def read_lines(path):
    """The records of `path` (dicts), skipping lines that are not records
    (with one warning)."""
    records, bad = [], 0
    try:
        with open(path) as source:
            for line in source:
                line = line.strip()
                if not line:
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    bad += 1
                    continue
                if isinstance(record, dict) and "workload" in record and "target" in record:
                    records.append(record)
                else:
                    bad += 1
    except FileNotFoundError:
        return []
    if bad:
        _warn_once(("bad", path, bad), f"dlc: {bad} line(s) of the tuning records {path} "
                   f"are not records and were skipped")
    return records


def append(path, records):
    """Appends `records` (dicts) to `path`, one line each."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    machine = socket.gethostname()
    lines = []
    for record in records:
        full = {"format": FORMAT, "dlc": __version__, "time": stamp, "machine": machine}
        full.update(record)
        lines.append(json.dumps(full, sort_keys=True) + "\n")
    with open(path, "a") as out:
        out.write("".join(lines))


def _milliseconds(seconds):
    return f"{seconds * 1e3:.3f} ms"


class Records:
    """The applicable records of a file, read once (:func:`load`): the best
    strategy per target and workload. Equal (and hashed alike) when read
    from the same file with the same contents, so that compiled functions
    and the disk cache are keyed by what is applied."""

    def __init__(self, path):
        self.path = os.path.abspath(os.fspath(path))
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"dlc: no tuning records file {self.path}")
        self.best = {}      # (target key, workload) -> "best" record (improved)
        self.elsewhere = {}  # workload -> {(target cpu, dlc version), ...} not applicable
        for record in read_lines(self.path):
            if record.get("kind") != "best":
                continue
            if not compatible(record):
                self.elsewhere.setdefault(record["workload"], set()).add(
                    (record.get("target_cpu", "?"), f"dlc {record.get('dlc')} format "
                     f"{record.get('format')}"))
                continue
            if record.get("improved"):
                self.best[(record["target"], record["workload"])] = record
            else:
                self.best.pop((record["target"], record["workload"]), None)
        self.digest = _tasks.digest(json.dumps(sorted(
            (k, v["strategy"]) for k, v in self.best.items())), 32)

    def __eq__(self, other):
        return isinstance(other, Records) and (self.path, self.digest) == (other.path, other.digest)

    def __hash__(self):
        return hash((self.path, self.digest))

    def __repr__(self):
        return f"dlc.tune.Records({self.path!r}, {len(self.best)} tuned workloads)"

    def for_target(self, target):
        key = _tasks.target_key(target)
        return {w: r for (t, w), r in self.best.items() if t == key}

    def key_text(self, target):
        """What the disk cache's key adds for these records on `target`."""
        chosen = sorted((w, r["strategy"]) for w, r in self.for_target(target).items())
        return " tuning " + _tasks.digest(json.dumps(chosen), 32)

    def apply(self, module, target):
        """Writes the recorded strategy (and ``dl.tuned``) on each op of
        `module` (graph stage) with a record for `target`; returns how many
        ops it changed."""
        chosen = self.for_target(target)
        tkey = _tasks.target_key(target)
        applied, foreign = 0, set()
        for op in _tasks.tunable_ops(module):
            workload = _tasks.digest(_tasks.signature_of(op))
            record = chosen.get(workload)
            if record is None:
                if workload in self.elsewhere or any(
                        w == workload and t != tkey for t, w in self.best):
                    foreign.add(workload)
                continue
            op.attributes["dl.strategy"] = ir.Attribute.parse(record["strategy"])
            op.attributes["dl.tuned"] = ir.StringAttr.get(
                f"{_milliseconds(record['seconds'])}, heuristic "
                f"{_milliseconds(record['heuristic_seconds'])}, {record.get('trials', 0)} trials")
            applied += 1
        if foreign:
            others = set()
            for workload in foreign:
                others.update(r.get("target_cpu", "?") for (t, w), r in self.best.items()
                              if w == workload and t != tkey)
                others.update(f"{cpu} ({version})"
                              for cpu, version in self.elsewhere.get(workload, ()))
            others = sorted(others)
            _warn_once(("foreign", self.path, tkey),
                       f"dlc: {self.path} has tuning records for {len(foreign)} op(s) of "
                       f"this function only for another target or dlc version "
                       f"({', '.join(others)}); they are not applied to target "
                       f"{target.cpu} (dlc {__version__}): tune for it")
        return applied

    def graph_pass(self, target):
        """A pass function (``PassManager.add``) applying the records."""
        def dl_apply_tuning(op, pass_=None):
            self.apply(op, target)
        return dl_apply_tuning


def load(path):
    """The :class:`Records` of `path` (FileNotFoundError when missing)."""
    return Records(path)


def from_option(value):
    """`tuning_records=` of dlc.jit & co.: None (then $DLC_TUNING_RECORDS),
    a path, or Records; "" or "off" turns them off."""
    if value is None:
        value = os.environ.get("DLC_TUNING_RECORDS")
        if value is None or value.strip() == "" or value.strip().lower() == "off":
            return None
        if not os.path.isfile(value):
            # Set for a shell, not for this call: every compile would fail.
            _warn_once(("env", value), f"dlc: $DLC_TUNING_RECORDS names {value}, which is "
                       f"not a file; compiling with the heuristics")
            return None
    if isinstance(value, Records):
        return value
    if isinstance(value, (str, os.PathLike)):
        if str(value).strip().lower() in ("", "off"):
            return None
        return Records(value)
    raise TypeError(f"tuning_records must be a path or dlc.tune.Records, but got {value!r}")
