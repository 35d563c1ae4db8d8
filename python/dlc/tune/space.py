"""The search space of a task: #dl.strategy parameters, and their features.

Every knob of a matmul or convolution that ``dl-affine-register-tile`` and
``convert-dl-to-linalg`` obey is a parameter of ``#dl.strategy``:

- ``kind`` (convolutions with groups = 1: ``direct`` on the convolution's
  own nest, or ``im2col_gemm``; a matmul is ``register_tiled_gemm``),
- ``rows`` x ``vectors``: the micro-kernel's register tile (every tile whose
  accumulators, one B row of vectors and one broadcast fit the register
  file),
- ``column_block``: output columns per cache block (0: from the target; a
  multiple of the tile's columns),
- ``reduction_block``: reduction iterations per cache block (0: from the
  target).

A candidate is a dict of those; :func:`strategy_text` writes it as the
attribute the passes read, so a tuned choice replays with ``dl-opt``. The
heuristic's own strategy is always the first candidate.
"""

import math
import re

import numpy as np

#: reduction iterations per cache block tried (0: the target's choice)
REDUCTION_BLOCKS = (0, 32, 64, 128, 256, 512, 1024)
#: column blocks tried, in tiles of the micro-kernel (0: the target's)
COLUMN_BLOCK_TILES = (0, 1, 2, 4, 8, 16, 32)


def parse_strategy(text):
    """A candidate dict from a #dl.strategy's text."""
    fields = dict(re.findall(r"(\w+) = (\"[^\"]*\"|\w+)", text))
    return {"kind": fields["kind"], "rows": int(fields.get("rows", 0)),
            "vectors": int(fields.get("vectors", 0)),
            "column_block": int(fields.get("column_block", 0)),
            "reduction_block": int(fields.get("reduction_block", 0)),
            "layout": fields.get("layout", '""').strip('"')}


def strategy_text(candidate):
    """The #dl.strategy of a candidate dict."""
    parts = [f"kind = {candidate['kind']}"]
    for name in ("rows", "vectors", "column_block", "reduction_block"):
        if candidate.get(name):
            parts.append(f"{name} = {candidate[name]}")
    if candidate.get("layout"):
        parts.append(f'layout = "{candidate["layout"]}"')
    return "#dl.strategy<" + ", ".join(parts) + ">"


def key(candidate):
    return tuple(candidate.get(n) for n in ("kind", "rows", "vectors", "column_block",
                                            "reduction_block", "layout"))


class Space:
    """The candidates of one task on its target (a dlc.Target)."""

    def __init__(self, task, target):
        self.task = task
        self.heuristic = parse_strategy(task.heuristic)
        self.lanes = target.lanes(np.float32)
        self.registers = target.vector_registers
        self.l1 = target.l1d
        self.l2 = target.l2
        kinds = [self.heuristic["kind"]]
        if task.op_name == "dl.conv2d" and int(task.attributes.get("groups", 1)) == 1 \
                and self.heuristic["layout"] == "NHWC":
            kinds = ["direct", "im2col_gemm"]
        self.kinds = kinds
        _, m, n, k = task.gemm
        # Tiles that fit the register file: rows x vectors accumulators,
        # one row of B's vectors and a broadcast of A.
        self.tiles = [(r, v) for r in range(1, 17) for v in range(1, 7)
                      if r * v + v + 1 <= self.registers and r <= max(m, 1)
                      and (v - 1) * self.lanes < max(n, 1)]
        self.reduction_blocks = [b for b in REDUCTION_BLOCKS if b == 0 or b < k]

    def column_blocks(self, vectors):
        columns = vectors * self.lanes
        _, _, n, _ = self.task.gemm
        return [t * columns for t in COLUMN_BLOCK_TILES if t == 0 or t * columns < n]

    def size(self):
        return len(self.kinds) * sum(len(self.column_blocks(v)) for _, v in self.tiles) * \
            len(self.reduction_blocks)

    def random(self, rng):
        rows, vectors = self.tiles[rng.integers(len(self.tiles))]
        blocks = self.column_blocks(vectors)
        return {"kind": self.kinds[rng.integers(len(self.kinds))], "rows": rows,
                "vectors": vectors, "column_block": blocks[rng.integers(len(blocks))],
                "reduction_block": self.reduction_blocks[rng.integers(len(self.reduction_blocks))],
                "layout": self.heuristic["layout"]}

    def mutate(self, candidate, rng):
        """`candidate` with one parameter changed (to a neighbour or at
        random)."""
        child = dict(candidate)
        choice = rng.integers(4 if len(self.kinds) == 1 else 5)
        if choice <= 1:  # the tile: a neighbour in rows or vectors
            near = [(r, v) for r, v in self.tiles
                    if abs(r - child["rows"]) + abs(v - child["vectors"]) <= 2
                    and (r, v) != (child["rows"], child["vectors"])]
            pool = near or self.tiles
            child["rows"], child["vectors"] = pool[rng.integers(len(pool))]
            if child["column_block"] % (child["vectors"] * self.lanes):
                child["column_block"] = 0
        elif choice == 2:
            blocks = self.column_blocks(child["vectors"])
            child["column_block"] = blocks[rng.integers(len(blocks))]
        elif choice == 3:
            child["reduction_block"] = self.reduction_blocks[
                rng.integers(len(self.reduction_blocks))]
        else:
            child["kind"] = self.kinds[rng.integers(len(self.kinds))]
        return child

    def features(self, candidate):
        """Numbers a cost model learns from: the task's product and the
        candidate's tile, blocks, remainders and working sets relative to
        the caches."""
        batch, m, n, k = self.task.gemm
        rows, vectors = candidate["rows"], candidate["vectors"]
        columns = vectors * self.lanes
        cb = candidate["column_block"] or 0
        rb = candidate["reduction_block"] or 0
        full_rows = (m // rows) * rows
        full_cols = (n // columns) * columns
        kb = rb if rb else k
        nb = cb if cb else n
        conv = self.task.op_name == "dl.conv2d"
        return [
            math.log2(batch), math.log2(max(m, 1)), math.log2(max(n, 1)),
            math.log2(max(k, 1)), float(conv), float(candidate["kind"] == "direct"),
            float(candidate["kind"] == "im2col_gemm"),
            float(any(self.task.constant[1:2])),
            rows, vectors, rows * vectors, columns,
            1.0 - full_rows / max(m, 1), 1.0 - full_cols / max(n, 1),
            math.log2(cb) if cb else 0.0, math.log2(rb) if rb else 0.0,
            float(cb == 0), float(rb == 0),
            # bytes of B's block and A's panel against L1 and L2
            math.log2(max(kb * min(nb, n) * 4, 1) / self.l2),
            math.log2(max(kb * columns * 4, 1) / self.l1),
            math.log2(max(rows * kb * 4, 1) / self.l1),
            # loads per FMA of the micro-kernel
            (rows + vectors) / (rows * vectors),
        ]
