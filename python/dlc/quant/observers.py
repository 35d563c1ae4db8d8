"""Calibration observers: from the values a tensor took on calibration data to
the scale and zero point of its quantization.

- ``minmax``: the range seen (onnxruntime's MinMax, PyTorch's MinMaxObserver).
- ``percentile``: the range holding `percentile` % of the values (the tails
  beyond are clipped), from a histogram of |x|.
- ``entropy``: the clipping threshold whose quantized distribution is closest
  to the observed one in KL divergence (TensorRT's calibration: 2048 bins of
  |x|, 128 quantization levels), for symmetric ranges.

Activations are quantized per tensor; uint8 ranges are asymmetric (a zero
point) and include 0, int8 ranges are symmetric (zero point 0). Weights are
quantized per output channel, symmetric int8, from their min/max.
"""

import numpy as np

METHODS = ("minmax", "percentile", "entropy")

_BINS = 2048


class Observer:
    """Collects the values of one tensor over calibration batches."""

    def __init__(self, method="minmax", percentile=99.99):
        if method not in METHODS:
            raise ValueError(f"unknown calibration method {method!r}; the methods are "
                             f"{', '.join(METHODS)}")
        self.method = method
        self.percentile = percentile
        self.low, self.high = np.inf, -np.inf
        self.histogram = None  # of |x| over [0, self.edge]
        self.edge = 0.0
        self.count = 0

    def observe(self, values):
        values = np.asarray(values, np.float64)
        finite = values[np.isfinite(values)]
        if finite.size == 0:
            return
        self.count += 1
        self.low = min(self.low, float(finite.min()))
        self.high = max(self.high, float(finite.max()))
        if self.method == "minmax":
            return
        magnitude = np.abs(finite)
        top = float(magnitude.max())
        if self.histogram is None:
            self.edge = top if top > 0 else 1.0
            self.histogram = np.zeros(_BINS, np.float64)
        elif top > self.edge:  # widen: merge the old bins into the new width
            factor = int(np.ceil(top / self.edge))  # >= 2
            merged = np.add.reduceat(self.histogram, np.arange(0, _BINS, factor))
            self.histogram = np.zeros(_BINS, np.float64)
            self.histogram[:merged.size] = merged
            self.edge *= factor
        counts, _ = np.histogram(magnitude, bins=_BINS, range=(0.0, self.edge))
        self.histogram += counts

    def threshold(self):
        """The clipping magnitude chosen by the method (None: use min/max)."""
        if self.method == "minmax" or self.histogram is None or self.histogram.sum() == 0:
            return None
        width = self.edge / _BINS
        if self.method == "percentile":
            cumulative = np.cumsum(self.histogram) / self.histogram.sum()
            index = int(np.searchsorted(cumulative, self.percentile / 100.0))
            return (index + 1) * width
        return (_entropy_threshold_bin(self.histogram) + 0.5) * width

    def qparams(self, dtype):
        """(scale, zero_point) of this tensor for a uint8 (asymmetric) or int8
        (symmetric) quantization."""
        if self.count == 0:
            raise ValueError("no finite value was observed")
        low, high = min(self.low, 0.0), max(self.high, 0.0)
        clip = self.threshold()
        if clip is not None:
            low, high = max(low, -clip), min(high, clip)
        return affine_qparams(low, high, dtype)


def affine_qparams(low, high, dtype):
    """Scale and zero point mapping [low, high] (which holds 0) onto dtype's
    range: asymmetric for unsigned types, symmetric for signed ones."""
    info = np.iinfo(dtype)
    if info.min < 0:  # symmetric: zero point 0, [-127, 127] as the usual int8 range
        bound = max(abs(low), abs(high))
        scale = bound / info.max if bound > 0 else 1.0
        return np.float32(scale), np.array(0, dtype)
    span = high - low
    scale = span / (info.max - info.min) if span > 0 else 1.0
    zero = int(np.clip(np.rint(info.min - low / scale), info.min, info.max))
    return np.float32(scale), np.array(zero, dtype)


def channel_scales(weight, axis, dtype=np.int8):
    """Symmetric per-channel scales of a weight along `axis` (max |w| of each
    output channel over 127)."""
    weight = np.asarray(weight, np.float64)
    reduce = tuple(d for d in range(weight.ndim) if d != axis)
    bound = np.abs(weight).max(axis=reduce) if reduce else np.abs(weight)
    info = np.iinfo(dtype)
    scales = np.where(bound > 0, bound / info.max, 1.0)
    return scales.astype(np.float32)


def _entropy_threshold_bin(histogram, levels=128):
    """TensorRT's entropy calibration: the bin index i (>= levels) minimizing
    KL(P || Q), P the histogram clipped at i (the tail added to its last bin),
    Q that histogram merged into `levels` bins and expanded back over the
    non-zero bins of P."""
    best, best_bin = np.inf, len(histogram) - 1
    total = histogram.sum()
    for i in range(levels, len(histogram) + 1, 16):
        reference = histogram[:i].astype(np.float64).copy()
        reference[-1] += histogram[i:].sum()
        groups = np.array_split(histogram[:i].astype(np.float64), levels)
        expanded = []
        for group in groups:
            nonzero = group > 0
            share = group.sum() / nonzero.sum() if nonzero.any() else 0.0
            expanded.append(np.where(nonzero, share, 0.0))
        candidate = np.concatenate(expanded)
        p = reference / total
        q_total = candidate.sum()
        if q_total == 0:
            continue
        q = candidate / q_total
        mask = p > 0
        if np.any(q[mask] == 0):
            q = np.where(mask & (q == 0), 1e-12, q)
        divergence = float(np.sum(p[mask] * np.log(p[mask] / q[mask])))
        if divergence < best:
            best, best_bin = divergence, i - 1
    return best_bin
