"""What a paper function needs of a run, without a notebook: the profile, the sample size, the seed, the models.

Paper functions (`atoms.pipeline.snli_consistency`, `taxinli.evaluate`, `factnli.session.build_for`, ...) take a
`RunContext`. A notebook's session (`nli_lib.notebook.NotebookSession`) is one, with the output writer added, so a
notebook passes `nb`; a script, a test or another tool builds one from a profile:

    >>> ctx = RunContext.from_profile("offline", quick=True)
    >>> ctx.tier, ctx.quick, ctx.seed == ctx.profile.seed
    ('offline', True, True)
    >>> model = ctx.nli_model()          # the profile's NLI model, loaded once     # doctest: +SKIP

It holds no output writer: what a paper function computes comes back as values, and the caller decides what to
save (a notebook through `nb.save`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .config import RunInfo, scrub_secrets
from .profile import Profile, load_profile


class Sizes(NamedTuple):
    """A sample size for quick runs and one for full runs, declared once beside the paper's functions so the
    notebook that draws the sample and the planner that counts its calls (`nli_lib.plan`) read the same numbers.

    >>> Sizes(quick=10, full=100).full
    100
    """

    quick: int  # a quick run (--quick): seconds to minutes on a laptop
    full: int  # a full run: the paper's size where the paper gives one


@dataclass(kw_only=True)
class RunContext:
    """The settings of one run and the models it has loaded."""

    profile: Profile  # the validated profile (model references resolved)
    params: dict  # the profile's values plus quick, seed, profile_name: what sidecars record (no secrets)
    models: dict = field(default_factory=dict)  # models loaded by this run, by their reference

    @classmethod
    def from_profile(cls, profile: str | Profile | None = None, *, quick: bool = False,
                     seed: int | None = None) -> "RunContext":
        """A context for a profile's name or YAML path (None: $NLI_PROFILE or 'offline'), or a loaded profile."""
        profile = profile if isinstance(profile, Profile) else load_profile(profile)
        seed = profile.seed if seed is None else int(seed)
        params = {**profile.params(), "quick": bool(quick), "seed": seed, "profile_name": profile.name}
        return cls(profile=profile, params=scrub_secrets(params))

    @property
    def quick(self) -> bool:
        return bool(self.params.get("quick"))

    def size(self, sizes: Sizes):
        """`sizes.quick` in a quick run, else `sizes.full`.

        >>> RunContext.from_profile("offline", quick=True).size(Sizes(quick=10, full=100))
        10
        """
        return sizes.quick if self.quick else sizes.full

    @property
    def seed(self) -> int:
        return int(self.params.get("seed", 0))

    @property
    def tier(self) -> str:
        return self.profile.tier

    @property
    def paper_systems(self) -> dict:
        """The profile's `paper_systems`: our model id -> the paper's system it is (empty offline)."""
        return dict(self.params.get("paper_systems") or {})

    def run_info(self, model: str) -> RunInfo:
        return RunInfo(tier=self.tier, model=model, seed=self.seed)

    def nli_model(self, spec=None):
        """The profile's NLI model, or `spec`: a line-up member (`nli_lib.lineup.ModelRef`), a profile model's
        id or name, a baseline name, a hub id or folder; loaded once per run (`lineup.load_classifier`).

        Neural models score with the profile's inference settings (`Profile.inference`: its `precision`); the
        offline model trains for `nli_epochs`."""
        from .lineup import as_ref, load_classifier

        ref = self.profile.ref("nli_model") if spec is None else as_ref(spec, self.profile)
        key = (ref.kind, ref.id, ref.name, ref.label_order, ref.revision)
        if key not in self.models:
            self.models[key] = load_classifier(ref, quick=self.quick, seed=self.seed, settings=self.profile.inference,
                                               epochs=self.profile.nli_epochs, train_rows=self.profile.quick_train_rows)
        return self.models[key]
