"""Requests/second of the LLM client against a server of known capacity, by client concurrency.

    .venv/bin/python benchmarks/llm_concurrency.py [--latency-ms 250] [--parallel 64] [--concurrency 1 8 64 256]

The server (`python -m nli_lib.llm.server --fixed-latency-ms L --parallel N`, a separate process on 127.0.0.1)
answers each request after L ms and serves at most N at once, like a vLLM server with N sequences in flight:
its capacity is N / L requests per second. For each client concurrency c the benchmark sends distinct prompts
(cache misses, stored in a fresh on-disk call cache as in a real run) through `LLMClient.chat_many` and
reports requests/s beside the most the server can give at that concurrency, min(c, N) / L. Target: at
c >= 64 the client reaches >= 90 % of it. The last line is

    bench: llm_concurrency ratio=<lowest ratio at c >= 64> target=0.900 ok|short | <conditions>
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET = 0.9


def start_server(latency_ms: float, parallel: int) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "nli_lib.llm.server", "--fixed-latency-ms", str(latency_ms),
                             "--parallel", str(parallel), "--port", "0", "--name", "echo"],
                            stdout=subprocess.PIPE, text=True, env=env, cwd=REPO)
    line = proc.stdout.readline()  # "serving 'echo' on http://127.0.0.1:<port>/v1"
    if "http://" not in line:
        proc.kill()
        raise RuntimeError(f"server did not start: {line!r}")
    return proc, line.split(" on ", 1)[1].strip()


def run(url: str, concurrency: int, n: int, cache_dir: Path, tag: str) -> float:
    """Requests per second for `n` distinct prompts at `concurrency`."""
    from nli_lib.cache import CallCache
    from nli_lib.llm import LLMClient, LLMConfig

    cache = CallCache(cache_dir / f"calls-{tag}.sqlite")
    try:
        with LLMClient(LLMConfig(base_url=url, model="echo", concurrency=concurrency, max_tokens=8, max_retries=0,
                                 timeout_s=120), cache=cache) as llm:
            llm.chat_many([f"warm-up {tag} {i}" for i in range(concurrency)], progress=False)  # connections open
            prompts = [f"prompt {tag} {i}: the quick brown fox jumps over the lazy dog" for i in range(n)]
            start = time.perf_counter()
            results = llm.chat_many(prompts, progress=False)
            elapsed = time.perf_counter() - start
    finally:
        cache.close()
    failed = sum(not r.ok for r in results)
    if failed:
        raise RuntimeError(f"{failed} of {n} requests failed at concurrency {concurrency}")
    return n / elapsed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency-ms", type=float, default=250.0, help="server latency per request")
    ap.add_argument("--parallel", type=int, default=64, help="requests the server serves at once")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 64, 256])
    ap.add_argument("--seconds", type=float, default=3.0, help="ideal duration of each measurement")
    args = ap.parse_args(argv)
    latency = args.latency_ms / 1000
    capacity = args.parallel / latency
    proc, url = start_server(args.latency_ms, args.parallel)
    print(f"server: {args.parallel} parallel x {args.latency_ms:g} ms = capacity {capacity:.0f} requests/s ({url})")
    print(f"{'concurrency':>11} {'requests':>8} {'req/s':>8} {'ideal':>8} {'ratio':>6}")
    ratios = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for c in args.concurrency:
                ideal = min(c, args.parallel) / latency
                n = max(2 * c, int(ideal * args.seconds))
                rate = run(url, c, n, Path(tmp), f"c{c}")
                ratio = rate / ideal
                if c >= 64:
                    ratios.append(ratio)
                print(f"{c:>11} {n:>8} {rate:>8.1f} {ideal:>8.1f} {ratio:>6.2f}", flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    worst = min(ratios) if ratios else float("nan")
    sys.path.insert(0, str(REPO))
    from nli_lib.bench import BenchLine

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(BenchLine("llm_concurrency", worst, TARGET, f"lowest share of the server's capacity at c >= 64; "
                    f"{args.parallel} x {args.latency_ms:g} ms server; load average {load}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
