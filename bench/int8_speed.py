"""int8 against float32 (issue 34): models quantized by onnxruntime's
quantization tool, run by dlc and by onnxruntime.

Models (random weights, seeded as in ``bench/zoo_speed.py``; nothing is
downloaded): timm ResNet-50 and MobileNetV2 on 224x224 images, quantized
with ``quantize_static`` (QDQ, per-channel, S8S8, MinMax, calibrated on
``--calibration`` synthetic images); BERT-base on 128 tokens, quantized with
``quantize_dynamic`` (``MatMulInteger``, int8 weights).

Systems, each alone in its own process with the same number of threads:
``dlc-fp32`` (``dlc.from_onnx`` of the float file), ``dlc-int8`` (of the
quantized file), ``ort-fp32`` and ``ort-int8`` (onnxruntime, every graph
optimization on). Each reports the median of timed calls after a warm-up.
Agreement: over ``--agreement`` inputs, the share whose top-1 class (the
argmax of the output's last dimension, per position for BERT) of dlc-int8
equals onnxruntime-int8's, and equals the float model's.

    .venv/bin/python bench/int8_speed.py [--models resnet50 mobilenetv2 bert]
        [--threads 2] [--agreement 200] [--json FILE]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_speed  # noqa: E402

MODELS = {
    "resnet50": "resnet50",
    "mobilenetv2": "mobilenetv2",
    "bert": "bert",
    "test-resnet": "test-resnet",  # small, for the bench's own test
}
zoo_speed.MODELS.setdefault("mobilenetv2", ("timm MobileNetV2", zoo_speed._timm("mobilenetv2_100"),
                                            zoo_speed._image))
SYSTEMS = ("dlc-fp32", "dlc-int8", "ort-fp32", "ort-int8")


def _is_text(name):
    return name == "bert"


def _inputs(name, count, seed):
    """`count` batches of one input set each (the model's batch 1)."""
    make = zoo_speed._entry(name)[2]
    rng = np.random.default_rng(seed)
    return [make(1, rng) for _ in range(count)]


def prepare(name, workdir, calibration):
    """The float ONNX file (zoo_speed's export) and its quantized twin."""
    from onnxruntime import quantization as q
    facts = zoo_speed._export(name, 1, workdir, onnx=True)
    float_path = os.path.join(workdir, "model.onnx")
    int8_path = os.path.join(workdir, "model.int8.onnx")
    start = time.perf_counter()
    if _is_text(name):
        q.quantize_dynamic(float_path, int8_path, weight_type=q.QuantType.QInt8)
        facts["quantization"] = "quantize_dynamic (MatMulInteger, int8 weights)"
    else:
        batches = _inputs(name, calibration, seed=1000)

        class Reader(q.CalibrationDataReader):
            def __init__(self):
                self.data = iter({"in_0": b[0]} for b in batches)

            def get_next(self):
                return next(self.data, None)
        q.quantize_static(float_path, int8_path, Reader(), quant_format=q.QuantFormat.QDQ,
                          per_channel=True, activation_type=q.QuantType.QInt8,
                          weight_type=q.QuantType.QInt8)
        facts["quantization"] = (f"quantize_static (QDQ, per-channel, S8S8, MinMax, "
                                 f"{calibration} images)")
    facts["quantize_s"] = time.perf_counter() - start
    return facts


def _runner(system, workdir, threads):
    """(call(arrays) -> output, facts) of a system on the file it runs."""
    path = os.path.join(workdir, "model.int8.onnx" if system.endswith("int8") else "model.onnx")
    import onnx
    names = [i.name for i in onnx.load(path, load_external_data=False).graph.input]
    if system.startswith("dlc"):
        import dlc
        dlc.set_num_threads(threads)
        start = time.perf_counter()
        f = dlc.from_onnx(path)
        facts = {"import_s": time.perf_counter() - start}

        def call(arrays):
            return f(*[a for i, a in enumerate(arrays) if f"in_{i}" in names])
        return call, facts
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])

    def call(arrays):
        return session.run(None, {n: arrays[int(n.split("_")[1])] for n in names})[0]
    return call, {}


def worker(system, name, workdir, threads, repeats, seconds, agreement):
    """Runs in its own process: times `system`, saves its outputs on the
    agreement inputs as <system>.npy."""
    call, facts = _runner(system, workdir, threads)
    arrays = _inputs(name, 1, seed=1)[0]
    start = time.perf_counter()
    call(arrays)
    facts["first_call_s"] = time.perf_counter() - start
    facts["ms"] = zoo_speed._median_ms(lambda: call(arrays), repeats, seconds)
    outputs = [np.asarray(call(a)) for a in _inputs(name, agreement, seed=2000)]
    np.save(os.path.join(workdir, f"{system}.npy"), np.stack(outputs))
    return facts


def _top1(outputs):
    return np.asarray(outputs).argmax(-1)


def run_model(name, args, progress):
    row = {"model": name, "systems": {}, "failed": {}}
    with tempfile.TemporaryDirectory(prefix="dlc-int8-") as workdir:
        for step in ("prepare",) + SYSTEMS:
            progress(f"{name} {step}")
            command = [sys.executable, os.path.abspath(__file__), "--worker", step,
                       "--models", name, "--threads", str(args.threads), "--repeats",
                       str(args.repeats), "--seconds", str(args.seconds), "--agreement",
                       str(args.agreement), "--calibration", str(args.calibration),
                       "--workdir", workdir]
            env = dict(os.environ, DLC_CACHE_DIR=os.path.join(workdir, f"cache-{step}"),
                       OMP_NUM_THREADS=str(args.threads))
            try:
                process = subprocess.run(command, capture_output=True, text=True, env=env,
                                         timeout=args.timeout)
            except subprocess.TimeoutExpired:
                process = None
            if process is None or process.returncode != 0:
                why = "timeout" if process is None else \
                    (process.stderr.strip().splitlines() or ["failed"])[-1][:300]
                row["failed"][step] = why
                if step == "prepare":
                    return row
                continue
            facts = json.loads(process.stdout.strip().splitlines()[-1])
            if step == "prepare":
                row.update(facts)
            else:
                row["systems"][step] = facts
        outputs = {s: np.load(os.path.join(workdir, f"{s}.npy")) for s in row["systems"]}
    if "dlc-int8" in outputs and "ort-int8" in outputs:
        row["top1_vs_ort_int8"] = float(np.mean(_top1(outputs["dlc-int8"]) ==
                                                _top1(outputs["ort-int8"])))
    if "dlc-int8" in outputs and "ort-fp32" in outputs:
        row["top1_vs_fp32"] = float(np.mean(_top1(outputs["dlc-int8"]) ==
                                            _top1(outputs["ort-fp32"])))
    if "ort-int8" in outputs and "ort-fp32" in outputs:  # the quantization's own loss
        row["ort_int8_top1_vs_fp32"] = float(np.mean(_top1(outputs["ort-int8"]) ==
                                                     _top1(outputs["ort-fp32"])))
    return row


def table(rows, meta):
    lines = [f"int8 vs float32 ({meta['cpu']}; {meta['threads']} threads; each system alone "
             f"in its own process; medians, ms)", "",
             "| model | dlc fp32 | dlc int8 | ort fp32 | ort int8 | dlc int8 / dlc fp32 "
             "speed-up | ort int8 / dlc int8 | top-1 = ort int8 | top-1 = fp32 | "
             "ort int8's top-1 = fp32 |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        ms = {s: f["ms"] for s, f in row["systems"].items()}

        def cell(s):
            return f"{ms[s]:.2f}" if s in ms else "-"
        up = f"{ms['dlc-fp32'] / ms['dlc-int8']:.2f}" if {"dlc-fp32", "dlc-int8"} <= ms.keys() \
            else "-"
        vs = f"{ms['ort-int8'] / ms['dlc-int8']:.2f}" if {"ort-int8", "dlc-int8"} <= ms.keys() \
            else "-"
        def share(key):
            value = row.get(key)
            return "-" if value is None else f"{value:.1%}"
        lines.append(f"| {row['model']} | {cell('dlc-fp32')} | {cell('dlc-int8')} | "
                     f"{cell('ort-fp32')} | {cell('ort-int8')} | {up} | {vs} | "
                     f"{share('top1_vs_ort_int8')} | {share('top1_vs_fp32')} | "
                     f"{share('ort_int8_top1_vs_fp32')} |")
        for step, why in row["failed"].items():
            lines.append(f"|   {step} failed: {why} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["resnet50", "mobilenetv2", "bert"],
                        choices=list(MODELS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--agreement", type=int, default=200,
                        help="inputs the top-1 agreement is measured on")
    parser.add_argument("--calibration", type=int, default=16,
                        help="synthetic images quantize_static calibrates on")
    parser.add_argument("--timeout", type=int, default=3600)
    parser.add_argument("--json")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        name = args.models[0]
        if args.worker == "prepare":
            facts = prepare(name, args.workdir, args.calibration)
        else:
            facts = worker(args.worker, name, args.workdir, args.threads, args.repeats,
                           args.seconds, args.agreement)
        print(json.dumps(facts))
        return 0
    from dlc.target import describe_host
    meta = {"cpu": describe_host(), "threads": args.threads, "date": time.strftime("%Y-%m-%d")}
    total = len(args.models) * (1 + len(SYSTEMS))
    done = [0]

    def progress(label):
        done[0] += 1
        print(f"[{done[0]}/{total}] {label}", file=sys.stderr, flush=True)

    rows = [run_model(name, args, progress) for name in args.models]
    print(table(rows, meta))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    return 1 if any(row["failed"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
