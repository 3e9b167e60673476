"""Pairs/second of the default NLI model: our batched, length-sorted path vs a naive pipeline loop.

    NLI_DATA_MIRROR=../shared/data .venv/bin/python benchmarks/nli_throughput.py [--n 2000] [--quick-model]

Both paths run the same fine-tuned model on the same SNLI-test pairs (e-SNLI test, seeded sample) and
bypass the call cache, so the numbers measure model throughput. The naive path is a transformers
`pipeline("text-classification")` called one pair at a time. Target: batched ≥ 5× naive. The default
fp32 path and the opt-in bf16 autocast path (HFClassifier(precision="bfloat16")) are both timed.
Also prints the peak resident memory of the process during each phase (sampled every 20 ms).
"""
from __future__ import annotations

import argparse
import os
import threading
import time

import numpy as np
import psutil


class PeakRSS:
    """Context manager sampling this process's resident memory; `.peak_mb` after exit."""

    def __enter__(self):
        self.proc, self.peak, self._stop = psutil.Process(), 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(0.02)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak_mb = self.peak / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="number of SNLI test pairs")
    ap.add_argument("--quick-model", action="store_true", help="use the quick (1k-row) model: faster to train")
    ap.add_argument("--naive-n", type=int, default=None, help="pairs for the naive loop (default: same n)")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import torch
    from transformers import pipeline

    from nli_lib.data.loaders import load_esnli
    from nli_lib.models import offline_nli_model

    clf = offline_nli_model(quick=args.quick_model, progress=False)
    pairs = load_esnli("test").sample(n=args.n, random_state=0)
    prem, hyp = pairs["premise"].tolist(), pairs["hypothesis"].tolist()
    print(f"model: {clf.name} ({clf.model_path}); device: {clf.device}; torch threads: {torch.get_num_threads()}; "
          f"pairs: {len(prem)}")

    clf._predict_proba_uncached(prem[:64], hyp[:64])  # load the weights and warm up outside the timing
    with PeakRSS() as mem_batched:
        t = time.perf_counter()
        batched = clf._predict_proba_uncached(prem, hyp)  # the model path behind predict_proba, cache bypassed
        t_batched = time.perf_counter() - t

    # the same model with bf16 autocast (opt-in: HFClassifier(precision="bfloat16"); fp32 stays the default)
    from nli_lib.models import HFClassifier

    fast = HFClassifier(clf.model_path, labels=clf.labels, max_length=clf.max_length, progress=False,
                        precision="bfloat16")
    fast._predict_proba_uncached(prem[:64], hyp[:64])
    with PeakRSS() as mem_bf16:
        t = time.perf_counter()
        bf16 = fast._predict_proba_uncached(prem, hyp)
        t_bf16 = time.perf_counter() - t
    same_bf16 = float(np.mean(bf16.argmax(1) == batched.argmax(1)))

    naive_n = args.naive_n or len(prem)
    # same device as the batched path (a pipeline given device=-1 would move the model to the CPU)
    pipe = pipeline("text-classification", model=clf.model, tokenizer=clf.tokenizer, device=clf.device, top_k=None)
    for p, h in zip(prem[:8], hyp[:8]):
        pipe({"text": p, "text_pair": h})
    with PeakRSS() as mem_naive:
        t = time.perf_counter()
        naive = [pipe({"text": p, "text_pair": h}) for p, h in zip(prem[:naive_n], hyp[:naive_n])]
        t_naive = time.perf_counter() - t

    # same predictions from both paths (sanity check that we compare like with like)
    naive_labels = [max(scores, key=lambda s: s["score"])["label"] for scores in naive]
    agree = np.mean([a == b for a, b in zip(naive_labels, np.asarray(clf.labels)[batched[:naive_n].argmax(1)])])

    rate_batched, rate_naive = len(prem) / t_batched, naive_n / t_naive
    print(f"batched (length-sorted, batch {clf.batch_size}): {rate_batched:8.1f} pairs/s  "
          f"({t_batched:.1f} s)  peak RSS {mem_batched.peak_mb:.0f} MiB")
    print(f"naive pipeline loop (1 pair/call):  {rate_naive:8.1f} pairs/s  "
          f"({t_naive:.1f} s)  peak RSS {mem_naive.peak_mb:.0f} MiB")
    rate_bf16 = len(prem) / t_bf16
    print(f"batched, bf16 autocast (opt-in):     {rate_bf16:8.1f} pairs/s  ({t_bf16:.1f} s)  peak RSS "
          f"{mem_bf16.peak_mb:.0f} MiB; labels equal to fp32 batched: {same_bf16:.4f}; max |Δp| "
          f"{np.abs(bf16 - batched).max():.3f}")
    print(f"speed-up fp32 batched / naive: {rate_batched / rate_naive:.2f}x   "
          f"bf16 batched / naive: {rate_bf16 / rate_naive:.2f}x   (target >= 5x); naive-vs-batched label agreement "
          f"{agree:.3f}")


if __name__ == "__main__":
    main()
