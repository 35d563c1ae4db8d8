"""Text generation: GPT-2 small (124M parameters, transformers' GPT2LMHeadModel
from its default configuration, random weights) at batch 1: a 32-token prompt,
then 64 greedy tokens. dlc (dlc.generation: compiled prefill and decode step
around a static KV cache) against PyTorch eager (model.generate, its dynamic
cache), each alone in its own process with the same number of threads; the
tokens must be identical.

    make bench                                # runs this too
    .venv/bin/python bench/generation.py [--threads 2] [--prompt 32] [--new 64]
                                         [--layers 12] [--json FILE]
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
    else:
        os.environ["DLC_CACHE_DIR"] = "off"
        from dlc.generation import CausalLM
        start = time.perf_counter()
        lm = CausalLM(model, max_length=args.prompt + args.new)
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--prompt", type=int, default=32)
    parser.add_argument("--new", type=int, default=64)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.new < 2:
        parser.error("--new must be at least 2")
    if args.worker:
        _worker(args.worker, args)
        return 0
    from dlc.target import describe_host
    results = {}
    for system in ("torch", "dlc"):       # each alone in its own process
        command = [sys.executable, os.path.abspath(__file__), "--worker", system,
                   "--threads", str(args.threads), "--prompt", str(args.prompt),
                   "--new", str(args.new), "--layers", str(args.layers),
                   "--repeats", str(args.repeats)]
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
                   DLC_NUM_THREADS=str(args.threads))
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        line = next((l for l in done.stdout.splitlines() if l.startswith("RESULT ")), None)
        if done.returncode or line is None:
            print(done.stdout[-2000:], done.stderr[-3000:], file=sys.stderr)
            print(f"{system} failed (exit {done.returncode})", file=sys.stderr)
            return 1
        results[system] = json.loads(line[len("RESULT "):])
    same = results["dlc"]["tokens"] == results["torch"]["tokens"]
    print(f"GPT-2 small ({args.layers} layers, random weights), batch 1, prompt "
          f"{args.prompt}, {args.new} greedy tokens, {args.threads} threads, CPU: {describe_host()}; "
          f"each system alone in its own process, medians of {args.repeats} runs")
    print(f"{'':8s} {'prefill ms':>11s} {'decode ms/token':>16s} {'tokens/s':>9s}")
    for system in ("torch", "dlc"):
        r = results[system]
        print(f"{system:8s} {1e3 * r['prefill_s']:11.1f} {1e3 * r['decode_s']:16.2f} "
              f"{1.0 / r['decode_s']:9.1f}")
    print(f"dlc / eager: prefill {results['torch']['prefill_s'] / results['dlc']['prefill_s']:.2f}x, "
          f"decode {results['torch']['decode_s'] / results['dlc']['decode_s']:.2f}x "
          f"(> 1: dlc faster); dlc compile {results['dlc']['compile_s']:.1f} s; "
          f"tokens identical: {same}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(cpu=describe_host(), threads=args.threads, prompt=args.prompt,
                           new=args.new, layers=args.layers, results=results,
                           tokens_identical=same), f, indent=1)
    return 0 if same else 2


if __name__ == "__main__":
    sys.exit(main())
