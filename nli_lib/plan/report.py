"""`nli-companion plan`: the printed plan of a run (and `--json` for scripts). See `nli_lib.plan`."""
from __future__ import annotations

import argparse
import json
import math
import sys

import pandas as pd

from . import DEFAULT_UTILISATION, DEVICES, Plan, plan_diagnose, plan_run


def _int(value) -> str:
    return "?" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{int(value):,}"


def _money(value) -> str:
    """A cost: '-' for none, cents above 100, else three significant digits (prices per 1k tokens are small)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:,.2f}" if value >= 100 else f"{value:.3g}"


def _sci(value) -> str:
    return "?" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.2e}"


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda r: "  ".join(str(x).ljust(w) if i < 2 else str(x).rjust(w)  # noqa: E731
                               for i, (x, w) in enumerate(zip(r, widths)))
    return [line(header), *(line(r) for r in rows)]


def llm_lines(plan: Plan) -> list[str]:
    calls = plan.calls
    if calls.empty and not plan.unplanned and not plan.errors:
        return ["LLM calls: none (no llm or rewriter section: the LLM steps run the offline rule-based stand-ins)"]
    out = ["LLM calls (distinct calls; 'cached': already in the call cache; tokens and cost of the new ones):"]
    rows = [[r.notebook, r.step, _int(r.calls), _int(r.cached), _int(r.new), _int(r.prompt_tokens),
             f"{_int(r.completion_tokens_est)} / {_int(r.completion_tokens_max)}",
             f"{_money(r.cost_est)} / {_money(r.cost_max)}"] for r in calls.itertuples()]
    if rows:
        out += ["  " + s for s in _table(rows, ["nb", "step", "calls", "cached", "new", "prompt tok",
                                                "completion tok est / max", "cost est / max"])]
        models = sorted(set(calls["model"]))
        how = sorted(set(", ".join(calls["counted_by"]).split(", ")))
        out.append(f"  model(s): {'; '.join(models)} · prompt tokens counted by: {', '.join(how)}"
                   + (" (chars/4: the model's tokenizer is not available offline; set llm.tokenizer to a local "
                      "folder for exact counts)" if "chars/4" in how else ""))
        total = calls[["calls", "cached", "new", "prompt_tokens"]].sum()
        est, top = calls["completion_tokens_est"].sum(min_count=1), calls["completion_tokens_max"]
        top = None if top.isna().any() else top.sum()
        out.append(f"  total: {_int(total.calls)} calls, {_int(total.cached)} cached, {_int(total.new)} new · "
                   f"{_int(total.prompt_tokens)} prompt tokens · completion tokens ≈ {_int(est)} (at most "
                   f"{_int(top)}) · cost ≈ {_money(calls['cost_est'].sum(min_count=1))} (at most "
                   f"{_money(calls['cost_max'].sum(min_count=1))})")
        if calls["cost_est"].isna().any():
            out.append("  cost '-': no price in the profile (llm: price_per_1k_prompt_tokens, "
                       "price_per_1k_completion_tokens)")
    for p in plan.pending.itertuples():
        exact = p.basis == "at most"
        each = "?" if p.per_answer is None or pd.isna(p.per_answer) else f"{p.per_answer:.2g} ({p.basis})"
        bound = "" if p.calls_bound is None or pd.isna(p.calls_bound) else \
            f" → {'at most' if exact else 'about'} {_int(p.calls_bound)} more calls"
        out.append(f"  + {p.notebook} {p.step}: depends on {_int(p.answers)} answers of {p.after} not in the "
                   f"cache; calls per answer {each}{bound}")
    for nb, why in sorted(plan.unplanned.items()):
        local = nb.startswith("diagnose MODEL ")  # a MODEL scored locally (`plan.diagnose.LOCAL`)
        out.append(f"  {nb}: {why}" if local else f"  {nb}: not enumerated before a run: {why}")
    for nb, why in sorted(plan.errors.items()):
        out.append(f"  {nb}: its planner failed: {why}")
    return out


def training_lines(plan: Plan) -> list[str]:
    t = plan.training
    device = DEVICES[plan.device]
    if t.empty:
        return ["Fine-tuning: none"]
    hours = f"{plan.device}_hours"
    t = t.assign(family=t["model"].str.split(" · ").str[0])
    rows = []
    for (nb, family), g in t.groupby(["notebook", "family"], sort=False):
        rows.append([nb, family, str(len(g)), _int(g["steps"].sum()), _int(g["tokens_max"].sum()),
                     _int(g["params"].iloc[0]), _sci(g["flops"].sum(min_count=len(g))),
                     "?" if g[hours].isna().any() else f"{g[hours].sum():.3g}",
                     "/".join(sorted(set(g["cached"])))])
    out = [f"Fine-tuning on {plan.device} ({device.source}; assumed utilisation {plan.utilisation:.0%}; FLOPs ≈ 6 × "
           "params × tokens, tokens counted at the token limit: an upper bound"
           + ("; with --only: the chosen notebooks' fits and notebook 01's, whose models the others load" if plan.only
              else "") + "):"]
    out += ["  " + s for s in _table(rows, ["nb", "model", "fits", "steps", "tokens ≤", "params", "FLOPs",
                                            "GPU-hours", "trained"])]
    known = t[hours].dropna()
    unknown = int(t[hours].isna().sum())
    out.append(f"  total: {_int(t['steps'].sum())} steps · {known.sum():.3g} GPU-hours for the fits with known "
               f"parameters" + (f"; {unknown} fits of models whose parameters are unknown offline (their "
                                "weights are not in the local cache)" if unknown else ""))
    return out


def download_lines(plan: Plan) -> list[str]:
    d = plan.downloads
    todo = d[d["status"] == "download"]
    if d.empty:
        return ["Models to download: none (every model is a local folder or one of the companion's own)"]
    out = [f"Models to download: {len(todo)} of {len(d)} hub models (the hub's metadata is not asked offline: sizes "
           "of models not in the local cache are unknown)"]
    out += [f"  {r.status:<8} {r.model}  ({r.key}; {r.size})" for r in d.itertuples()]
    return out


def render(plan: Plan) -> str:
    if plan.notebooks and all(n.startswith("diagnose ") for n in plan.notebooks):
        head = (f"Plan of a {'quick ' if plan.quick else ''}diagnose under profile {plan.profile} (tier {plan.tier}), "
                f"lenses {', '.join(n.removeprefix('diagnose ') for n in plan.notebooks)}: nothing was called; the "
                "call cache was read. Its LLM calls only (loading the MODELs and the PhrasIS lens's fine-tuning "
                "are not planned here).")
        return "\n\n".join(["\n".join(x) for x in ([head], llm_lines(plan))])
    head = (f"Plan of a {'quick ' if plan.quick else ''}run of profile {plan.profile} (tier {plan.tier}), "
            f"notebooks {', '.join(plan.notebooks) if plan.only else 'all'}: nothing was called; the call cache "
            "was read.")
    return "\n\n".join(["\n".join(x) for x in ([head], llm_lines(plan), download_lines(plan), training_lines(plan))])


def as_json(plan: Plan) -> dict:
    frame = lambda df: json.loads(df.to_json(orient="records"))  # noqa: E731
    return {"profile": plan.profile, "tier": plan.tier, "quick": plan.quick, "notebooks": plan.notebooks,
            "calls": frame(plan.calls), "pending": frame(plan.pending), "unplanned": plan.unplanned,
            "errors": plan.errors, "downloads": frame(plan.downloads), "training": frame(plan.training),
            "device": plan.device, "utilisation": plan.utilisation}


def main(args: list[str] | None = None) -> int:
    """Print what a run will do, calling nothing: LLM calls, tokens and cost; downloads; fine-tuning work."""
    ap = argparse.ArgumentParser(prog="nli-companion plan", description=main.__doc__)
    ap.add_argument("--profile", default=None, help="a shipped profile's name or a YAML path (default: "
                                                    "$NLI_PROFILE or offline)")
    ap.add_argument("--only", nargs="+", metavar="NN", help="plan these notebooks only (numbers or names)")
    ap.add_argument("--quick", action="store_true", help="plan a quick run (small samples, as run --quick)")
    ap.add_argument("--seed", type=int, default=None, help="the run's seed (default: the profile's)")
    ap.add_argument("--device", choices=sorted(DEVICES), default="h100", help="the accelerator of the GPU-hour "
                                                                                "estimate (default h100)")
    ap.add_argument("--utilisation", type=float, default=DEFAULT_UTILISATION,
                    help=f"assumed fraction of the device's peak (default {DEFAULT_UTILISATION})")
    ap.add_argument("--json", action="store_true", help="print the plan as JSON")
    ap.add_argument("--diagnose", nargs="+", metavar="MODEL", help="plan `nli-companion diagnose MODEL ...` "
                    "instead of a run: its LLM calls per lens (MODEL 'llm': the profile's endpoint)")
    ap.add_argument("--lens", action="append", help="with --diagnose: only this lens (repeatable)")
    ap.add_argument("--phrasis", action="store_true", help="with --diagnose: also the PhrasIS lens")
    opts = ap.parse_args(args)
    if not 0 < opts.utilisation <= 1:
        ap.error("--utilisation must be in (0, 1]")
    from ..diagnose.candidates import DiagnoseError

    try:
        if opts.diagnose:
            plan = plan_diagnose(opts.diagnose, opts.profile, quick=opts.quick, lenses=opts.lens,
                                 phrasis=opts.phrasis, seed=opts.seed, device=opts.device,
                                 utilisation=opts.utilisation)
        else:
            plan = plan_run(opts.profile, quick=opts.quick, only=opts.only, device=opts.device,
                            utilisation=opts.utilisation, seed=opts.seed)
    except (ValueError, FileNotFoundError, DiagnoseError) as exc:
        raise SystemExit(f"nli-companion plan: {exc}") from None
    print(json.dumps(as_json(plan), indent=1) if opts.json else render(plan))
    return 1 if plan.errors else 0


if __name__ == "__main__":
    sys.exit(main())
