"""One compiled convolutional network for every image size (issue 30).

timm's ResNet-50 (random weights, 1000 classes), batch 1, imported once with
`dlc.from_torch(..., dynamic_shapes=...)` (height and width dynamic, as
multiples of 32 from 64 to 512: what torch.export asks of a network that
downsamples five times) and run at several sizes; each size also compiled
for its static shape, and PyTorch eager. Each system runs alone in its own
process with the same number of threads; medians of `--repeats` calls after
one warm-up. The dynamic function must compile once and match eager at every
size (max |dlc - eager| <= 1e-4 x max |eager|).

    .venv/bin/python bench/dynamic_image.py [--threads 2] [--sizes 64x64 128x96 224x224]
                                            [--model resnet50] [--json FILE]
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dynamic_seq import _time, compiled, run_systems  # noqa: E402


def _model(name):
    import timm
    import torch
    torch.manual_seed(0)
    return timm.create_model(name, pretrained=False).eval()


def _image(size):
    import numpy as np
    h, w = size
    return np.random.default_rng(h * 1000 + w).standard_normal((1, 3, h, w)).astype(
        np.float32)


def _worker(system, args):
    import numpy as np
    import torch
    torch.set_num_threads(args.threads)
    model = _model(args.model)
    sizes = [tuple(map(int, s.split("x"))) for s in args.sizes]
    rows = []
    if system == "torch":
        with torch.no_grad():
            for size in sizes:
                x = torch.from_numpy(_image(size))
                rows.append({"size": "x".join(map(str, size)),
                             "ms": _time(lambda: model(x), args.repeats)})
        return rows
    import dlc
    dlc.set_num_threads(args.threads)
    if system == "dlc-dynamic":
        dims = {2: 32 * torch.export.Dim("h", min=2, max=16),
                3: 32 * torch.export.Dim("w", min=2, max=16)}
        f, compile_s = compiled(model, [torch.from_numpy(_image((64, 64)))],
                                dynamic_shapes={"x": dims})
    for size in sizes:
        x = _image(size)
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        if system == "dlc-static":
            f, compile_s = compiled(model, [torch.from_numpy(x)])
        error = float(np.abs(f(x) - want).max() / np.abs(want).max())
        rows.append({"size": "x".join(map(str, size)), "ms": _time(lambda: f(x), args.repeats),
                     "rel_error": error, "compile_s": round(compile_s, 1)})
    if system == "dlc-dynamic":
        rows.append({"compilations": f._jit.cache_size()})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sizes", nargs="+", default=["64x64", "128x96", "224x224", "320x256"])
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--systems", nargs="+",
                        default=["torch", "dlc-dynamic", "dlc-static"])
    parser.add_argument("--json", default=None)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_worker(args.worker, args)))
        return 0
    extra = ["--model", args.model, "--sizes", *args.sizes]
    return run_systems(__file__, args, extra, "size", args.sizes,
                       f"{args.model} (timm), batch 1, {args.threads} threads, ms per call "
                       f"(medians)")


if __name__ == "__main__":
    sys.exit(main())
