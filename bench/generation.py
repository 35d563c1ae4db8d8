"""Text generation: GPT-2 small (124M parameters, transformers' GPT2LMHeadModel
from its default configuration, random weights) at batch 1: a 32-token prompt,
then 64 greedy tokens. dlc (dlc.generation: compiled prefill and decode step
around a static KV cache) against PyTorch eager (model.generate, its dynamic
cache) and onnxruntime (the same static-cache steps exported to ONNX), each
alone in its own process with the same number of threads; the tokens must be
identical.

    make bench                                # runs this too
    .venv/bin/python bench/generation.py [--threads 2] [--prompt 32] [--new 64]
                                         [--layers 12] [--json FILE]
                                         [--systems torch dlc] [--disable PASS ...]

--disable turns dlc optimizations off by name (dlc.jit's `disable`), to
measure what one of them is worth: `--systems dlc --disable dl-pack-weights`.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def _model(layers):
    import torch
    import transformers
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=layers)   # GPT-2 small: 768 wide, 12 heads
    return transformers.GPT2LMHeadModel(config).eval()


def _prompt(length):
    import numpy as np
    return np.random.default_rng(0).integers(0, 50257, (1, length)).astype(np.int64)


def _worker(system, args):
    import numpy as np
    import torch
    torch.set_num_threads(args.threads)
    model = _model(args.layers)
    prompt = _prompt(args.prompt)
    result = {"system": system}
    if system == "torch":
        ids = torch.from_numpy(prompt)
        prefill, decode, tokens = [], [], None
        with torch.no_grad():
            for _ in range(args.repeats):
                start = time.perf_counter()
                model(ids, use_cache=True)
                prefill.append(time.perf_counter() - start)
                start = time.perf_counter()
                out = model.generate(ids, do_sample=False, max_new_tokens=args.new,
                                     min_new_tokens=args.new, pad_token_id=0)
                total = time.perf_counter() - start
                # generate = one prefill + (new - 1) decode steps
                decode.append((total - prefill[-1]) / (args.new - 1))
                tokens = out.numpy()
        result.update(prefill_s=statistics.median(prefill),
                      decode_s=statistics.median(decode), tokens=tokens.tolist())
    elif system == "onnxruntime":
        result.update(_onnxruntime(model, prompt, args))
    else:
        os.environ["DLC_CACHE_DIR"] = "off"
        from dlc.generation import CausalLM
        start = time.perf_counter()
        lm = CausalLM(model, max_length=args.prompt + args.new,
                      **({"disable": tuple(args.disable)} if args.disable else {}))
        tokens = lm.generate(prompt, args.new)      # compiles the prefill and the step
        result["compile_s"] = time.perf_counter() - start
        prefill, decode = [], []
        for _ in range(args.repeats):
            tokens = lm.generate(prompt, args.new)
            prefill.append(lm.last_timing["prefill"])
            decode.append(statistics.median(lm.last_timing["decode"]))
        result.update(prefill_s=statistics.median(prefill),
                      decode_s=statistics.median(decode), tokens=np.asarray(tokens).tolist())
    print("RESULT " + json.dumps(result), flush=True)


def _onnxruntime(model, prompt, args):
    """The same two steps (dlc.generation's static-cache module: prefill and
    one-token decode) exported with torch's TorchScript-based ONNX exporter
    and run by onnxruntime, every graph optimization on, the same loop."""
    import io
    import warnings

    import numpy as np
    import onnxruntime
    import torch

    from dlc.generation import CausalLM
    lm = CausalLM(model, max_length=args.prompt + args.new)
    cache = [torch.zeros(shape, dtype=dtype) for shape, dtype in lm._shapes(1)]
    names = ["input_ids", "start"] + [f"cache_{i}" for i in range(len(cache))]
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    start = time.perf_counter()
    sessions = {}
    for length in (args.prompt, 1):
        buffer = io.BytesIO()
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(lm.step_module, (torch.zeros((1, length), dtype=torch.long),
                                               torch.tensor(0), *cache), buffer,
                              dynamo=False, opset_version=17, input_names=names)
        sessions[length] = onnxruntime.InferenceSession(
            buffer.getvalue(), options, providers=["CPUExecutionProvider"])
    compile_s = time.perf_counter() - start

    def run(session, ids, position, state):
        out = session.run(None, dict(zip(names, [ids, np.asarray(position, np.int64)] +
                                          state)))
        return out[0], out[1:]

    prefill, decode = [], []
    for _ in range(args.repeats):
        state = [c.numpy() for c in cache]
        tokens = [prompt]
        begin = time.perf_counter()
        logits, state = run(sessions[args.prompt], prompt, 0, state)
        prefill.append(time.perf_counter() - begin)
        steps = []
        for step in range(args.new):
            token = np.argmax(logits, axis=-1).astype(np.int64)
            tokens.append(token[:, None])
            if step + 1 == args.new:
                break
            begin = time.perf_counter()
            logits, state = run(sessions[1], token[:, None], args.prompt + step, state)
            steps.append(time.perf_counter() - begin)
        decode.append(statistics.median(steps))
    return dict(compile_s=compile_s, prefill_s=statistics.median(prefill),
                decode_s=statistics.median(decode),
                tokens=np.concatenate(tokens, axis=1).tolist())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--prompt", type=int, default=32)
    parser.add_argument("--new", type=int, default=64)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None)
    parser.add_argument("--systems", nargs="+", default=["torch", "onnxruntime", "dlc"],
                        choices=["torch", "onnxruntime", "dlc"])
    parser.add_argument("--disable", nargs="*", default=[],
                        help="dlc optimization passes to turn off (dlc.jit's disable)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.new < 2:
        parser.error("--new must be at least 2")
    if args.worker:
        _worker(args.worker, args)
        return 0
    from dlc.target import describe_host
    results = {}
    systems = [s for s in ("torch", "onnxruntime", "dlc") if s in args.systems]
    if "onnxruntime" in systems:
        try:
            import onnxruntime  # noqa: F401 - a bench peer (requirements-bench.txt)
        except ImportError:
            print("onnxruntime is not installed (make bench installs it): skipped",
                  file=sys.stderr)
            systems.remove("onnxruntime")
    for system in systems:                # each alone in its own process
        command = [sys.executable, os.path.abspath(__file__), "--worker", system,
                   "--threads", str(args.threads), "--prompt", str(args.prompt),
                   "--new", str(args.new), "--layers", str(args.layers),
                   "--repeats", str(args.repeats)]
        if args.disable:
            command += ["--disable", *args.disable]
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
                   DLC_NUM_THREADS=str(args.threads))
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        line = next((l for l in done.stdout.splitlines() if l.startswith("RESULT ")), None)
        if done.returncode or line is None:
            print(done.stdout[-2000:], done.stderr[-3000:], file=sys.stderr)
            print(f"{system} failed (exit {done.returncode})", file=sys.stderr)
            return 1
        results[system] = json.loads(line[len("RESULT "):])
    first = next(iter(results.values()))
    same = all(r["tokens"] == first["tokens"] for r in results.values())
    print(f"GPT-2 small ({args.layers} layers, random weights), batch 1, prompt "
          f"{args.prompt}, {args.new} greedy tokens, {args.threads} threads, CPU: "
          f"{describe_host()}; each system alone in its own process, medians of "
          f"{args.repeats} runs")
    print(f"{'':12s} {'prefill ms':>11s} {'decode ms/token':>16s} {'tokens/s':>9s} "
          f"{'dlc x (prefill, decode)':>24s}")
    dlc_result = results.get("dlc")
    for system in systems:
        r = results[system]
        ratio = "" if system == "dlc" or dlc_result is None else \
            f"{r['prefill_s'] / dlc_result['prefill_s']:.2f}, " \
            f"{r['decode_s'] / dlc_result['decode_s']:.2f}"
        print(f"{system:12s} {1e3 * r['prefill_s']:11.1f} {1e3 * r['decode_s']:16.2f} "
              f"{1.0 / r['decode_s']:9.1f} {ratio:>24s}")
    compile_s = f"dlc compile {dlc_result['compile_s']:.1f} s; " if dlc_result else ""
    disabled = f"dlc with {', '.join(args.disable)} off; " if args.disable else ""
    print(f"(dlc x: the peer's time / dlc's, > 1: dlc faster); {disabled}{compile_s}"
          f"tokens identical: {same}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(cpu=describe_host(), threads=args.threads, prompt=args.prompt,
                           new=args.new, layers=args.layers, results=results,
                           disable=args.disable,
                           tokens_identical=same), f, indent=1)
    return 0 if same else 2


if __name__ == "__main__":
    sys.exit(main())
