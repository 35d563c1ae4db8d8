"""Timing for dlc's benchmark: medians of interleaved blocks of calls."""

import statistics
import time


def calls_per_block(fn, target_seconds):
    start = time.perf_counter()
    fn()
    elapsed = max(time.perf_counter() - start, 1e-7)
    return max(1, min(10000, int(target_seconds / elapsed)))


def measure(peers, rounds, block_seconds, options_pause=0.2):
    """Median seconds per call of each peer, over `rounds` interleaved blocks
    of calls (each block about `block_seconds`)."""
    counts = {name: calls_per_block(fn, block_seconds) for name, fn in peers.items()}
    samples = {name: [] for name in peers}
    for _ in range(rounds):
        for name, fn in peers.items():
            count = counts[name]
            start = time.perf_counter()
            for _ in range(count):
                fn()
            samples[name].append((time.perf_counter() - start) / count)
            # Let this library's worker threads go idle before timing the
            # next one: OpenBLAS and PyTorch's OpenMP spin for a while after
            # each call, and on a few cores they would steal the next
            # library's time.
            time.sleep(options_pause)
    return {name: statistics.median(values) for name, values in samples.items()}
