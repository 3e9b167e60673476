"""Know the cost before you run: what a run will ask its LLMs, download and fine-tune, computed without calling
any model or endpoint (`nli-companion plan --profile FILE [--only NN ...] [--quick]`)::

    result = plan_run("paper", quick=True, only=["10", "11"])
    result.calls      # per notebook and step: distinct calls, cached, new, tokens, cost (see calls.CallPlan)
    result.pending    # steps whose prompts wait for answers not in the cache, with a bound or an estimate
    result.training   # per fine-tuning: rows, epochs, steps, tokens, params, FLOPs, GPU-hours

Pieces: `calls` (the planning client: the call cache is read, nothing is sent), `notebooks` (which notebook
asks what: each LLM step run with the planning client, no NLI model loaded), `compute` (fine-tuning work and
downloads), `report` (the printed plan and the command).

The offline profile asks no LLM (its LLM steps are rule-based stand-ins) and downloads nothing: its plan is the
fine-tuning work alone.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import pandas as pd

from ..context import RunContext
from .calls import CallPlan
from .compute import DEFAULT_UTILISATION, DEVICES, downloads, training_jobs, training_table
from .notebooks import PLANNERS, UNPLANNED

SHARED_MODELS = "01"  # the notebook training the models most others load: its fits are planned with any --only
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}  # the plan never asks the hub


@dataclass
class Plan:
    """What a run will do (see the module docstring); every frame is empty where there is nothing."""

    profile: str
    tier: str
    quick: bool
    notebooks: list  # the notebook numbers whose LLM calls were planned
    calls: pd.DataFrame  # CallPlan.table() with cost columns
    pending: pd.DataFrame  # CallPlan.pending_table()
    unplanned: dict  # notebook -> why its LLM calls are not enumerated
    training: pd.DataFrame  # compute.training_table()
    downloads: pd.DataFrame  # compute.downloads()
    device: str
    utilisation: float
    errors: dict = field(default_factory=dict)  # notebook -> why its planner failed (the plan says so)
    call_plan: CallPlan | None = None  # the distinct calls themselves (CallPlan.frame())
    only: bool = False  # True: --only chose the notebooks


def add_cost(table: pd.DataFrame, prices: dict) -> pd.DataFrame:
    """`table` with cost_est and cost_max: new prompt tokens and completion tokens (estimated / at most) at the
    model's prices per 1,000 tokens; NaN where the profile gives no price.

    >>> t = pd.DataFrame({"model": ["m"], "prompt_tokens": [2000], "completion_tokens_est": [500],
    ...                   "completion_tokens_max": [1000]})
    >>> add_cost(t, {"m": (0.5, 2.0)})[["cost_est", "cost_max"]].values.tolist()   # 2×0.5 + 0.5×2, 2×0.5 + 1×2
    [[2.0, 3.0]]
    """
    out = table.copy()
    est, top = [], []
    for row in out.itertuples():
        p, c = prices.get(row.model, (None, None))
        if p is None or c is None:
            est.append(float("nan"))
            top.append(float("nan"))
            continue
        prompt = row.prompt_tokens * p / 1000
        est.append(prompt + _num(row.completion_tokens_est) * c / 1000)
        top.append(prompt + _num(row.completion_tokens_max) * c / 1000)
    out["cost_est"], out["cost_max"] = est, top
    return out


def _num(value) -> float:
    return float("nan") if value is None or pd.isna(value) else float(value)


def _offline() -> None:
    """The hub is never asked while planning (unless the caller set these already)."""
    for name, value in OFFLINE_ENV.items():
        os.environ.setdefault(name, value)


def _selected(only: list[str] | None) -> list[str]:
    """The notebook numbers to plan: `only` (checked against the checkout's notebooks when there is one), else
    every notebook with LLM steps."""
    known = sorted({*PLANNERS, *UNPLANNED})
    if not only:
        return known
    wanted = sorted({o.removesuffix(".ipynb")[:2] for o in only})
    try:
        from ..runner import notebooks

        notebooks(wanted)  # SystemExit naming a notebook that does not exist
    except SystemExit:
        raise
    except Exception:  # noqa: BLE001 - outside a checkout: the numbers are taken as given
        pass
    return wanted


def plan_run(profile=None, *, quick: bool = False, only: list[str] | None = None, device: str = "h100",
             utilisation: float = DEFAULT_UTILISATION, seed: int | None = None) -> Plan:
    """The plan of a run of `profile` (a name, a YAML path or a loaded Profile); see the module docstring."""
    _offline()
    if device not in DEVICES:
        raise ValueError(f"unknown device {device!r}; known: {', '.join(DEVICES)}")
    ctx = RunContext.from_profile(profile, quick=quick, seed=seed)
    selected = _selected(only)
    plan, errors = CallPlan(), {}
    with plan.active():
        for number in selected:
            if number not in PLANNERS:
                continue
            with plan.notebook(number):
                try:
                    PLANNERS[number](ctx, plan)
                except Exception as exc:  # noqa: BLE001 - one notebook's planner: the plan says what failed
                    errors[number] = f"{type(exc).__name__}: {exc}"
    jobs = [j for j in training_jobs(ctx) if not only or j.notebook in selected or j.notebook == SHARED_MODELS]
    llm = ctx.profile.llm is not None or ctx.profile.rewriter is not None
    return Plan(profile=ctx.profile.name, tier=ctx.tier, quick=quick, notebooks=selected,
                calls=add_cost(plan.table(), plan.prices), pending=plan.pending_table(),
                unplanned={n: why for n, why in UNPLANNED.items() if n in selected and llm},
                training=training_table(jobs, DEVICES[device], utilisation), downloads=downloads(ctx),
                device=device, utilisation=utilisation, errors=errors, call_plan=plan, only=bool(only))


def plan_diagnose(models: list[str], profile=None, *, quick: bool = False, lenses: list[str] | None = None,
                  phrasis: bool = False, seed: int | None = None, device: str = "h100",
                  utilisation: float = DEFAULT_UTILISATION) -> Plan:
    """The plan of `nli-companion diagnose MODEL ...` under `profile` (`diagnose.plan_lenses`): its LLM calls
    per lens; the MODELs scored locally are listed in `unplanned` with why (no LLM call)."""
    from .diagnose import plan_lenses

    _offline()
    ctx = RunContext.from_profile(profile, quick=quick, seed=seed)
    plan = CallPlan()
    with plan.active():
        labels, unplanned, local = plan_lenses(ctx, plan, models, lenses, phrasis)
    return Plan(profile=ctx.profile.name, tier=ctx.tier, quick=quick, notebooks=labels,
                calls=add_cost(plan.table(), plan.prices), pending=plan.pending_table(),
                unplanned={**unplanned, **{f"diagnose MODEL {m}": why for m, why in local.items()}},
                training=training_table([], DEVICES[device], utilisation), downloads=pd.DataFrame(
                    columns=["key", "model", "status", "size"]), device=device, utilisation=utilisation, call_plan=plan,
                only=True)


__all__ = ["Plan", "plan_run", "plan_diagnose", "add_cost", "CallPlan", "DEVICES", "DEFAULT_UTILISATION"]
