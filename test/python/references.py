"""Independent numpy references (no scipy) for the ops of the test suites.

Each is written from the operator's definition, in float64, without sharing
code with dlc: convolution and pooling as explicit window sums, normalizations
from their formulas.
"""

import math

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def erf(x):
    return _erf(np.asarray(x, np.float64))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + erf(x / np.sqrt(2)))


def hardswish(x):
    return x * np.clip(x + 3, 0, 6) / 6


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _to_nchw(x, layout):
    return x if layout == "NCHW" else np.transpose(x, (0, 3, 1, 2))


def _from_nchw(x, layout):
    return x if layout == "NCHW" else np.transpose(x, (0, 2, 3, 1))


def conv2d(x, w, b=None, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1),
           groups=1, layout="NCHW"):
    """Direct convolution: a sum over kernel offsets of shifted, strided views."""
    x = _to_nchw(np.asarray(x, np.float64), layout)
    w = np.asarray(w, np.float64)
    if layout == "NHWC":
        w = np.transpose(w, (3, 2, 0, 1))  # [KH, KW, C/g, F] -> [F, C/g, KH, KW]
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    top, bottom, left, right = padding
    xp = np.zeros((n, c, h + top + bottom, wd + left + right))
    xp[:, :, top:top + h, left:left + wd] = x
    sh, sw = stride
    dh, dw = dilation
    oh = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, f, oh, ow))
    fg = f // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * fg:(g + 1) * fg]
        for i in range(kh):
            for j in range(kw):
                window = xs[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                            j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, g * fg:(g + 1) * fg] += np.einsum("nchw,fc->nfhw", window, ws[:, :, i, j])
    if b is not None:
        out += np.asarray(b, np.float64)[None, :, None, None]
    return _from_nchw(out, layout)


def pool2d(x, kernel, stride, padding=(0, 0, 0, 0), kind="max", count_include_pad=True,
           layout="NCHW"):
    """Max or average pooling by explicit windows."""
    x = _to_nchw(np.asarray(x, np.float64), layout)
    n, c, h, w = x.shape
    kh, kw = kernel
    sh, sw = stride
    top, bottom, left, right = padding
    oh = (h + top + bottom - kh) // sh + 1
    ow = (w + left + right - kw) // sw + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * sh - top, j * sw - left
            rows = slice(max(r0, 0), min(r0 + kh, h))
            cols = slice(max(c0, 0), min(c0 + kw, w))
            window = x[:, :, rows, cols]
            if kind == "max":
                out[:, :, i, j] = window.max(axis=(2, 3))
            else:
                count = kh * kw if count_include_pad else window.shape[2] * window.shape[3]
                out[:, :, i, j] = window.sum(axis=(2, 3)) / count
    return _from_nchw(out, layout)


def batch_norm(x, mean, var, gamma, beta, eps=1e-5, axis=1):
    shape = [1] * x.ndim
    shape[axis] = -1
    r = lambda a: np.asarray(a, np.float64).reshape(shape)  # noqa: E731
    return (x - r(mean)) / np.sqrt(r(var) + eps) * r(gamma) + r(beta)


def layer_norm(x, gamma, beta, axis=-1, eps=1e-5):
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta
