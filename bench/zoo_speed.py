"""The zoo speed table (issue 32): full-size models from timm and transformers,
dlc through both frontends against onnxruntime and PyTorch.

Every model is built at its published size with random weights (nothing is
downloaded; the seed is fixed, so every process builds the same weights; biases
and norms random too, as in a trained network: ``dlc.zoo.weights.trained_like``):
timm's ResNet-50, EfficientNet-B0, MobileNetV3-Large, ConvNeXt-T, RegNetY-1.6GF,
ViT-S/16, DeiT-S and Swin-T on 224x224 images; transformers' BERT-base,
DistilBERT and GPT-2 small (prefill: logits of every position, no cache) on
128 tokens, and Whisper-base's encoder on 30 s of audio (80 x 3000 features).

Systems, each alone in its own process with the same number of threads:

- ``dlc-torch``: ``dlc.from_torch`` (torch.export, then dlc's compile);
- ``dlc-onnx``: ``dlc.from_onnx`` of the model exported by
  ``torch.onnx.export`` (TorchScript exporter, opset 17; the dynamo exporter
  where that one fails, as on GPT-2's masks);
- ``onnxruntime``: the same ONNX file, every graph optimization on;
- ``torch``: PyTorch eager under ``torch.no_grad()``;
- ``torch-compile``: ``torch.compile`` (inductor; not in the default list:
  it compiles for minutes on 2 cores; ``--systems ... torch-compile``).

Each reports the median of timed calls after one warm-up (at least 3, at most
``--repeats``, within about ``--seconds`` per system). Every output is
compared with eager's (largest difference over the largest magnitude, at
most 1e-3: several hundred float32 ops deep). dlc's cold compile
(``DLC_CACHE_DIR`` a new, empty folder) is split into its phases: import
(torch.export or the ONNX file read, and dlc's import), trace (to the dl
dialect), graph (graph optimizations), codegen (lowering to the llvm
dialect) and llvm (LLVM's code generation); "cached" is the same compile
again from dlc's disk cache (trace and load). ``--profile N`` also runs
:func:`dlc.profile` in each dlc process and prints each model's N slowest
source lines (time in dlc's parallel regions, summed by the model's line).

    .venv/bin/python bench/zoo_speed.py [--models resnet50 bert ...] [--batches 1 8]
        [--systems dlc-torch dlc-onnx onnxruntime torch] [--threads 2]
        [--json FILE] [--markdown FILE] [--plot FILE] [--profile N]

``make bench`` runs it with the defaults (about an hour on 2 cores).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

#: the relative error (largest difference over the largest magnitude)
#: allowed against eager
TOLERANCE = 1e-3

SEQ = 128
IMAGE = 224


def _timm(name):
    def build():
        import timm
        return timm.create_model(name, pretrained=False)
    return build


def _hf(config_name, model_name, **config):
    def build():
        import transformers
        return getattr(transformers, model_name)(getattr(transformers, config_name)(**config))
    return build


def _whisper_encoder():
    import transformers
    config = transformers.WhisperConfig(d_model=512, encoder_layers=6, decoder_layers=6,
                                        encoder_attention_heads=8, decoder_attention_heads=8,
                                        encoder_ffn_dim=2048, decoder_ffn_dim=2048)
    return transformers.WhisperModel(config).get_encoder()


def _image(batch, rng):
    return [rng.standard_normal((batch, 3, IMAGE, IMAGE), dtype=np.float32)]


def _tokens(vocab, mask=True):
    def inputs(batch, rng):
        ids = rng.integers(0, vocab, (batch, SEQ)).astype(np.int64)
        return [ids, np.ones((batch, SEQ), np.int64)] if mask else [ids]
    return inputs


def _audio(batch, rng):
    return [rng.standard_normal((batch, 80, 3000), dtype=np.float32)]


#: name -> (description, builder of the torch module, inputs(batch, rng))
MODELS = {
    "resnet50": ("timm ResNet-50", _timm("resnet50"), _image),
    "efficientnet_b0": ("timm EfficientNet-B0", _timm("efficientnet_b0"), _image),
    "mobilenetv3": ("timm MobileNetV3-Large", _timm("mobilenetv3_large_100"), _image),
    "convnext_tiny": ("timm ConvNeXt-T", _timm("convnext_tiny"), _image),
    "regnety_016": ("timm RegNetY-1.6GF", _timm("regnety_016"), _image),
    "vit_small": ("timm ViT-S/16", _timm("vit_small_patch16_224"), _image),
    "deit_small": ("timm DeiT-S", _timm("deit_small_patch16_224"), _image),
    "swin_tiny": ("timm Swin-T", _timm("swin_tiny_patch4_window7_224"), _image),
    "bert": ("BERT-base seq 128", _hf("BertConfig", "BertModel"), _tokens(30522)),
    "distilbert": ("DistilBERT seq 128", _hf("DistilBertConfig", "DistilBertModel"),
                   _tokens(30522)),
    "gpt2": ("GPT-2 prefill seq 128", _hf("GPT2Config", "GPT2LMHeadModel", use_cache=False),
             _tokens(50257, mask=False)),
    "whisper_encoder": ("Whisper-base encoder 30 s", _whisper_encoder, _audio),
}
#: a small model for the bench's own test (not in the default list)
TEST_MODELS = {
    "test-resnet": ("timm ResNet-10t 64x64 (test)", _timm("resnet10t"),
                    lambda b, rng: [rng.standard_normal((b, 3, 64, 64), dtype=np.float32)]),
}
SYSTEMS = ("dlc-torch", "dlc-onnx", "onnxruntime", "torch", "torch-compile")
DEFAULT_SYSTEMS = SYSTEMS[:4]
ONNX_SYSTEMS = ("dlc-onnx", "onnxruntime")


def _entry(name):
    if name in MODELS:
        return MODELS[name]
    if name in TEST_MODELS:
        return TEST_MODELS[name]
    raise SystemExit(f"unknown model {name!r}; models: {', '.join(MODELS)}")


def build(name, batch):
    """(torch module returning one tensor, inputs as numpy arrays), the same
    in every process."""
    import torch

    class FirstOutput(torch.nn.Module):
        """The model's first output (logits, last hidden state) as a tensor."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, *args):
            out = self.model(*args)
            return out if isinstance(out, torch.Tensor) else out[0]

    from dlc.zoo.weights import trained_like

    _, builder, inputs = _entry(name)
    torch.manual_seed(0)
    # no zero biases or identity norms: a checkpoint's graph, not one the
    # graph passes fold down
    module = trained_like(FirstOutput(builder()), 0).eval()
    return module, inputs(batch, np.random.default_rng(batch))


def _median_ms(call, repeats, seconds):
    """Median ms of up to `repeats` calls (at least 3) within about
    `seconds`, after one warm-up call."""
    call()
    times = []
    deadline = time.perf_counter() + seconds
    while len(times) < repeats and (len(times) < 3 or time.perf_counter() < deadline):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


# -- workers (each in its own process) -----------------------------------------


def _export(name, batch, workdir, onnx):
    """Eager's output (the reference) and, with `onnx`, the model as ONNX;
    both saved in `workdir`."""
    import torch
    module, inputs = build(name, batch)
    tensors = [torch.from_numpy(a) for a in inputs]
    with torch.no_grad():
        np.save(os.path.join(workdir, "want.npy"), module(*tensors).numpy())
    if not onnx:
        return {}
    start = time.perf_counter()
    path = os.path.join(workdir, "model.onnx")
    names = [f"in_{i}" for i in range(len(tensors))]
    with torch.no_grad():
        try:
            torch.onnx.export(module, tuple(tensors), path, dynamo=False, opset_version=17,
                              input_names=names, output_names=["out"])
            exporter = "torchscript"
        except Exception:  # noqa: BLE001 - e.g. aten::diff in transformers' masks
            torch.onnx.export(module, tuple(tensors), path, dynamo=True,
                              input_names=names, output_names=["out"])
            exporter = "dynamo"
    return {"onnx_export_s": time.perf_counter() - start, "exporter": exporter}


def _dlc(frontend, name, batch, workdir, threads):
    import torch

    import dlc
    dlc.set_num_threads(threads)
    module, inputs = build(name, batch)
    onnx_path = os.path.join(workdir, "model.onnx")

    def imported():
        if frontend == "torch":
            with torch.no_grad():
                return dlc.from_torch(module, *[torch.from_numpy(a) for a in inputs])
        return dlc.from_onnx(onnx_path)

    start = time.perf_counter()
    f = imported()
    import_s = time.perf_counter() - start
    arrays = inputs
    if frontend == "onnx":  # the exporter may drop inputs the model does not use
        import onnx
        names = [i.name for i in onnx.load(onnx_path, load_external_data=False).graph.input]
        arrays = [a for i, a in enumerate(inputs) if f"in_{i}" in names]
    cold = f.lower(*arrays).compile()
    facts = {"import_s": import_s, "phases": cold.phase_seconds,
             "compile_s": import_s + sum(cold.phase_seconds.values())}
    again = f.lower(*arrays).compile()  # from the disk cache, as a new process would
    facts["cached_s"] = sum(again.phase_seconds.values())
    facts["cached_from_disk"] = "cache" in again.phase_seconds
    call = lambda: f(*arrays)  # noqa: E731
    call.profiled = (f, arrays)  # what --profile runs dlc.profile on
    return facts, call


def _onnxruntime(name, batch, workdir, threads):
    import onnxruntime
    inputs = _entry(name)[2](batch, np.random.default_rng(batch))
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    start = time.perf_counter()
    session = onnxruntime.InferenceSession(os.path.join(workdir, "model.onnx"), options,
                                           providers=["CPUExecutionProvider"])
    feed = {i.name: inputs[int(i.name.split("_")[1])] for i in session.get_inputs()}
    facts = {"compile_s": time.perf_counter() - start}
    return facts, lambda: session.run(None, feed)[0]


def _torch(name, batch, threads, compiled):
    import torch
    torch.set_num_threads(threads)
    module, inputs = build(name, batch)
    tensors = [torch.from_numpy(a) for a in inputs]
    facts = {}
    if compiled:
        start = time.perf_counter()
        module = torch.compile(module)
        with torch.no_grad():
            module(*tensors)
        facts["compile_s"] = time.perf_counter() - start

    def call():
        with torch.no_grad():
            return module(*tensors).numpy()
    return facts, call


def _profile_facts(f, arrays, top):
    """dlc.profile of `f`: the slowest `top` source lines (ms per call)."""
    import dlc
    profile = dlc.profile(f, *arrays, calls=5, warmup=1)
    return {"ms": profile.seconds * 1e3, "serial_ms": profile.serial_seconds * 1e3,
            "regions": len(profile.regions),
            "lines": [[source, launches, seconds * 1e3]
                      for source, launches, seconds in profile.by_source()[:top]]}


def worker(system, name, batch, workdir, threads, repeats, seconds, onnx=True,
           profile_top=0):
    """Runs in its own process: prepares `system`, times it, saves its
    output as <system>.npy in `workdir`; returns its facts. The "export"
    step saves eager's output and, with `onnx`, the ONNX file. With
    `profile_top`, a dlc system also reports dlc.profile's slowest lines."""
    if system == "export":
        return _export(name, batch, workdir, onnx)
    if system in ("dlc-torch", "dlc-onnx"):
        facts, call = _dlc(system[4:], name, batch, workdir, threads)
    elif system == "onnxruntime":
        facts, call = _onnxruntime(name, batch, workdir, threads)
    elif system in ("torch", "torch-compile"):
        facts, call = _torch(name, batch, threads, compiled=system == "torch-compile")
    else:
        raise SystemExit(f"unknown system {system!r}; systems: {', '.join(SYSTEMS)}")
    np.save(os.path.join(workdir, f"{system}.npy"), np.asarray(call()))
    facts["ms"] = _median_ms(call, repeats, seconds)
    if profile_top and hasattr(call, "profiled"):
        facts["profile"] = _profile_facts(*call.profiled, profile_top)
    return facts


# -- the table ---------------------------------------------------------------


def run_row(name, batch, args, progress):
    """One model at one batch size: the export step, then each system in its
    own process; the row of the table."""
    row = {"model": name, "batch": batch, "systems": {}, "failed": {}}
    with tempfile.TemporaryDirectory(prefix="dlc-zoo-speed-") as workdir:
        steps = ["export"] + list(args.systems)
        for system in steps:
            progress(f"{name} b{batch} {system}")
            command = [sys.executable, os.path.abspath(__file__), "--worker", system,
                       "--models", name, "--batches", str(batch), "--threads",
                       str(args.threads), "--repeats", str(args.repeats), "--seconds",
                       str(args.seconds), "--workdir", workdir]
            if system == "export" and any(s in ONNX_SYSTEMS for s in args.systems):
                command.append("--with-onnx")
            if args.profile:
                command += ["--profile", str(args.profile)]
            # Cold compiles: a disk cache of the process's own, empty at first.
            env = dict(os.environ, DLC_CACHE_DIR=os.path.join(workdir, f"cache-{system}"),
                       OMP_NUM_THREADS=str(args.threads))
            try:
                process = subprocess.run(command, capture_output=True, text=True, env=env,
                                         timeout=args.timeout)
            except subprocess.TimeoutExpired:
                row["failed"][system] = f"timeout after {args.timeout} s"
                if system == "export":
                    return row
                continue
            if process.returncode != 0:
                lines = process.stderr.strip().splitlines() or [f"exit {process.returncode}"]
                row["failed"][system] = lines[-1][:300]
                if system == "export":
                    return row
                continue
            facts = json.loads(process.stdout.strip().splitlines()[-1])
            if system == "export":
                row.update(facts)
                continue
            output = np.load(os.path.join(workdir, f"{system}.npy"))
            want = np.load(os.path.join(workdir, "want.npy"))
            scale = float(np.abs(want).max()) or 1.0
            facts["rel_error"] = float(np.abs(output - want).max()) / scale \
                if output.shape == want.shape else float("inf")
            if not facts["rel_error"] <= TOLERANCE:
                row["failed"][system] = (f"wrong output: relative error "
                                         f"{facts['rel_error']:.2e} > {TOLERANCE}")
            row["systems"][system] = facts
    ms = {s: f["ms"] for s, f in row["systems"].items() if s not in row["failed"]}
    if "dlc-torch" in ms:
        row["ratio"] = {s: t / ms["dlc-torch"] for s, t in ms.items() if s != "dlc-torch"}
    return row


def _cell(value, fmt, width):
    return (f"{value:{fmt}}" if value is not None else "-").rjust(width)


def table(rows, systems):
    """The table as text: ms per system, ratios, dlc's compile."""
    short = {"dlc-torch": "dlc pt", "dlc-onnx": "dlc onnx", "onnxruntime": "ort",
             "torch": "eager", "torch-compile": "t.compile"}
    peers = [s for s in systems if s != "dlc-torch"]
    head = (f"{'model':<27}{'b':>2}" + "".join(f"{short[s] + ' ms':>12}" for s in systems)
            + "".join(f"{'x ' + short[s]:>11}" for s in peers)
            + f"{'compile s':>10}{'cached s':>9}  phases s (import/trace/graph/codegen/llvm)")
    lines = [head]
    for row in rows:
        got = row["systems"]
        ratio = row.get("ratio", {})
        dlc = got.get("dlc-torch", {})
        phases = dlc.get("phases", {})
        phase_text = "/".join(f"{v:.1f}" for v in
                              [dlc.get("import_s")] + [phases.get(p) for p in
                                                       ("trace", "graph", "codegen", "llvm")]
                              if v is not None)
        lines.append(
            f"{_entry(row['model'])[0]:<27}{row['batch']:>2}"
            + "".join(_cell(got.get(s, {}).get("ms") if s not in row["failed"] else None,
                            ".2f", 12) for s in systems)
            + "".join(_cell(ratio.get(s), ".2f", 11) for s in peers)
            + _cell(dlc.get("compile_s"), ".1f", 10) + _cell(dlc.get("cached_s"), ".2f", 9)
            + "  " + phase_text)
        for system, why in row["failed"].items():
            lines.append(f"    {system}: {why}")
    lines.append("x peer = the peer's ms / dlc-torch's ms (above 1: dlc through from_torch "
                 "is faster); compile s: dlc-torch's cold compile,\nimport (torch.export) "
                 "included; cached s: the same compile from dlc's disk cache")
    return "\n".join(lines)


def markdown(rows, systems, meta):
    peers = [s for s in systems if s != "dlc-torch"]
    lines = [f"CPU: {meta['cpu']}; {meta['threads']} threads; each system alone in its own "
             f"process; medians; {meta['date']}.", "",
             "| " + " | ".join(["model", "batch"] + [f"{s} ms" for s in systems]
                              + [f"{s} / dlc-torch" for s in peers]
                              + ["compile s", "cached s",
                                 "import / trace / graph / codegen / llvm s"]) + " |",
             "|---|---:|" + "---:|" * (len(systems) + len(peers) + 2) + "---|"]
    for row in rows:
        got, ratio = row["systems"], row.get("ratio", {})
        dlc = got.get("dlc-torch", {})
        phases = dlc.get("phases", {})

        def fmt(value, spec):
            return "-" if value is None else f"{value:{spec}}"
        cells = [fmt(got.get(s, {}).get("ms") if s not in row["failed"] else None, ".2f")
                 for s in systems]
        cells += [fmt(ratio.get(s), ".2f") for s in peers]
        cells += [fmt(dlc.get("compile_s"), ".1f"), fmt(dlc.get("cached_s"), ".2f"),
                  " / ".join(fmt(v, ".1f") for v in [dlc.get("import_s")] + [
                      phases.get(p) for p in ("trace", "graph", "codegen", "llvm")])]
        lines.append(f"| {_entry(row['model'])[0]} | {row['batch']} | " + " | ".join(cells)
                     + " |")
    failures = [(row, s, why) for row in rows for s, why in row["failed"].items()]
    if failures:
        lines += ["", "Failed:"]
        lines += [f"- {_entry(row['model'])[0]} b{row['batch']} {s}: {why}"
                  for row, s, why in failures]
    return "\n".join(lines) + "\n"


def profiles(rows):
    """dlc.profile's slowest source lines per model and dlc system."""
    lines = []
    for row in rows:
        for system, facts in row["systems"].items():
            profile = facts.get("profile")
            if not profile:
                continue
            lines.append(f"{row['model']} b{row['batch']} {system}: {profile['ms']:.2f} ms "
                         f"per profiled call, {profile['regions']} parallel regions, "
                         f"{profile['serial_ms']:.2f} ms outside them")
            lines += [f"  {ms:9.3f} ms {ms / profile['ms']:6.1%} {launches:5g}x  {source}"
                      for source, launches, ms in profile["lines"]]
    return "\n".join(lines)


def plot(rows, systems, path):
    """Bars: each peer's time over dlc-torch's, per model and batch."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    peers = [s for s in systems if s != "dlc-torch"]
    labels = [f"{row['model']} b{row['batch']}" for row in rows]
    figure, axes = plt.subplots(figsize=(max(6, 0.6 * len(rows) + 2), 4))
    width = 0.8 / max(1, len(peers))
    for k, peer in enumerate(peers):
        values = [row.get("ratio", {}).get(peer, 0.0) for row in rows]
        axes.bar([i + k * width for i in range(len(rows))], values, width, label=peer)
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.set_xticks([i + width * (len(peers) - 1) / 2 for i in range(len(rows))])
    axes.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    axes.set_ylabel("peer ms / dlc-torch ms (above 1: dlc faster)")
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--systems", nargs="+", default=list(DEFAULT_SYSTEMS),
                        choices=SYSTEMS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="time budget of the timed calls per system")
    parser.add_argument("--timeout", type=int, default=1800,
                        help="seconds a system may take in all (import, compile, calls)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also run dlc.profile in each dlc system and print the N "
                             "slowest source lines of each model")
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    parser.add_argument("--plot")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    parser.add_argument("--with-onnx", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for name in args.models:
        _entry(name)
    if args.worker:
        facts = worker(args.worker, args.models[0], args.batches[0], args.workdir,
                       args.threads, args.repeats, args.seconds, args.with_onnx,
                       args.profile)
        print(json.dumps(facts))
        return 0
    from dlc.target import describe_host
    meta = {"cpu": describe_host(), "threads": args.threads,
            "date": time.strftime("%Y-%m-%d"), "python": platform.python_version()}
    total = len(args.models) * len(args.batches) * (1 + len(args.systems))
    done = [0]

    def progress(label):
        done[0] += 1
        print(f"[{done[0]}/{total}] {label}", file=sys.stderr, flush=True)

    rows = []
    for name in args.models:
        for batch in args.batches:
            rows.append(run_row(name, batch, args, progress))
    print(f"zoo speed ({meta['cpu']}; {args.threads} threads; each system alone in its "
          f"own process; medians)")
    print(table(rows, args.systems))
    if args.profile:
        print(profiles(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(rows, args.systems, meta))
    if args.plot:
        plot(rows, args.systems, args.plot)
    # A model dlc cannot import yet is a row of the table; a wrong output
    # is a bug.
    wrong = [f"{row['model']} b{row['batch']} {system}" for row in rows
             for system, why in row["failed"].items() if why.startswith("wrong output")]
    if wrong:
        print("wrong outputs: " + ", ".join(wrong), file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
