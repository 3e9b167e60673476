"""In-context exemplars of the δ-NLI prompts: C.1 (full examples) and C.2 (atoms), drawn from train/dev only.

The paper few-shots Prompt C.1 with "10 in-context examples evenly split between strengtheners and weakeners"
and adapts it to atoms (Prompt C.2), "us[ing] atoms in exemplars instead of full hypotheses" (§5.1); it prints
neither exemplar set. The atom labels it does print (Table 1, Table 7, §6) are δ-SNLI-TEST sub-problems, so they
are evaluation items here (the gold fixture of notebook 12), never exemplars.

* C.1 (`dnli_shots`): seeded δ-SNLI train-subset examples, half strengtheners, half weakeners.
* C.2 (`atom_shots`): atomic sub-problems (P, aᵢ, U) of δ-SNLI train-subset and dev examples in `POOL`. Each
  atom is written in the paper's Neo-Davidsonian style (H entails it, P does not) and labelled on the paper's
  -2..+2 scale by the companion (one annotator, for this purpose; these are not the paper's labels), with a
  one-line reason that becomes the exemplar's "single line of explanation". The texts (premise, hypothesis,
  update) are read from the data by pair_id; no dataset text is committed.

Balance (`SHOT_PLAN`): every 6 C.2 exemplars hold 2 'more' atoms of strengtheners, 2 'less' atoms of weakeners
and 1 'none' atom of each, so the three answers of Prompt C.2 come equally often and strengthener and weakener
examples are half each. Both draws refuse (ValueError) an exemplar whose pair_id or premise is in δ-SNLI test.

>>> from collections import Counter
>>> sorted(Counter(e.three_way for e in POOL).values()) == [8, 8, 8]
True
>>> sum(SHOT_PLAN.values())
6
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

C1_LABELS = ("strengthener", "weakener")
SHOT_PLAN = {  # per 6 C.2 exemplars: (the example's update_type, the atom's three-way label) -> how many
    ("strengthener", "strengthener"): 2, ("weakener", "weakener"): 2,
    ("strengthener", "no effect"): 1, ("weakener", "no effect"): 1,
}
C2_DEFAULT_SHOTS = 12  # two rounds of SHOT_PLAN (the paper gives no number for C.2; C.1 uses 10)


@dataclass(frozen=True)
class AtomExemplar:
    """One labelled atomic sub-problem of a δ-SNLI train or dev example (a Prompt C.2 exemplar)."""

    pair_id: str  # δ-SNLI train-subset example_id ('snli.train.N') or dev id ('dnli-snli-dev-NNNNNN')
    atom: str  # the atom: H entails it, P does not (a valid atom in the sense of §3.2)
    scale: int  # the update's effect on the atom, -2 (strongly weakens) .. +2 (strongly strengthens)
    why: str  # the annotator's one-line reason, used as the exemplar's explanation line

    @property
    def three_way(self) -> str:
        """'strengthener' / 'weakener' / 'no effect' (Prompt C.2's more / less / none)."""
        return "strengthener" if self.scale > 0 else "weakener" if self.scale < 0 else "no effect"


_ = AtomExemplar
POOL: tuple[AtomExemplar, ...] = (
    # strengtheners, atom strengthened
    _("snli.train.26811", "The weather is nice.", 2, "Bright sunshine makes nice weather very likely."),
    _("snli.train.11211", "The person is speaking to the girl.", 2, "Directing a question to her is speaking to her."),
    _("snli.train.34173", "The person is a punk rocker.", 2, "Pink hair spiked into a Mohawk is a punk look."),
    _("snli.train.14427", "It is night.", 2, "Stars are visible at night."),
    _("snli.train.88453", "The chair is a recliner.", 1, "Lying nearly horizontal suggests a reclining chair."),
    _("dnli-snli-dev-000637", "The sky is cloudy.", 2, "Expecting rain suggests a cloudy sky."),
    _("dnli-snli-dev-001565", "The person is doing a crossword.", 1, "A pen in hand fits filling in a crossword."),
    _("dnli-snli-dev-000197", "The person is in a park.", 1, "A tree-lined path away from traffic fits a park."),
    # weakeners, atom weakened
    _("snli.train.11210", "The person is speaking to the girl.", -2,
      "He speaks into the microphone and she ignores him."),
    _("snli.train.34170", "The person is a punk rocker.", -2, "The pink hair is a clown's wig."),
    _("snli.train.26810", "The weather is nice.", -1, "Many clouds make nice weather somewhat less likely."),
    _("snli.train.37072", "The people are celebrating their anniversary.", -2,
      "A proposal means they are not yet married."),
    _("dnli-snli-dev-001036", "The people are cold.", -2, "Nobody is cold at 80 degrees in the sun."),
    _("dnli-snli-dev-001564", "The person is doing a crossword.", -1,
      "A cup of coffee in one hand makes writing harder."),
    _("dnli-snli-dev-000190", "The person is in a park.", -2, "A crosswalk on a busy street is not in a park."),
    _("dnli-snli-dev-000400", "The person is taking a photo with her son.", -2, "The son is not at the photo shoot."),
    # strengtheners, atom unaffected
    _("snli.train.34173", "The person is helping a man up.", 0,
      "A Mohawk says nothing about helping the man get up."),
    _("snli.train.14427", "The people are in a river.", 0, "Visible stars say nothing about a river."),
    _("snli.train.3319", "The person is a grandfather.", 0, "Baiting a hook says nothing about being a grandfather."),
    _("snli.train.88453", "The person enjoys a beer.", 0, "Lying back says nothing about what is in the bottle."),
    # weakeners, atom unaffected
    _("snli.train.34172", "The person is helping a man up.", 0, "A business suit says nothing about helping."),
    _("snli.train.67616", "It is snowing.", 0, "His age says nothing about the weather."),
    _("dnli-snli-dev-000612", "The bag is of a popular brand.", 0, "The update is about the purse, not the bag."),
    _("snli.train.38846", "The person is wearing overalls.", 0, "Chasing a balloon says nothing about his clothes."),
)
del _


def pool_frame(train: pd.DataFrame | None = None, dev: pd.DataFrame | None = None) -> pd.DataFrame:
    """`POOL` with its texts: pair_id, premise, hypothesis (H), update, update_type, atom, scale, label (three-way),
    explanation, split ('train' | 'dev').

    `train` / `dev` default to the mirror's δ-SNLI train subset and dev. Raises ValueError when a pair_id is in
    neither (`atom_shots` also refuses any row from δ-SNLI test).
    """
    from ..data.loaders import load_dnli, load_dsnli_train_subset

    train = load_dsnli_train_subset() if train is None else train
    dev = load_dnli("snli", "dev", drop_impossible=True) if dev is None else dev
    texts = pd.concat([train.assign(split="train"), dev.assign(split="dev")], ignore_index=True)
    texts = texts.drop_duplicates("pair_id").set_index("pair_id")
    missing = sorted({e.pair_id for e in POOL} - set(texts.index))
    if missing:
        raise ValueError(f"C.2 exemplar pair_id(s) {missing} are in neither δ-SNLI train nor dev")
    rows = pd.DataFrame([{"pair_id": e.pair_id, "atom": e.atom, "scale": e.scale, "label": e.three_way,
                          "explanation": e.why} for e in POOL])
    rows = rows.join(texts[["premise", "hypothesis", "update", "update_type", "split"]], on="pair_id")
    return rows[["pair_id", "premise", "hypothesis", "update", "update_type", "atom", "scale", "label",
                 "explanation", "split"]]


def refuse_test_items(rows: pd.DataFrame, test: pd.DataFrame | None = None) -> None:
    """Raise ValueError naming the exemplars whose pair_id or premise occurs in δ-SNLI test (default: the mirror's).

    >>> test = pd.DataFrame({"pair_id": ["t1"], "premise": ["A man sleeps."]})
    >>> refuse_test_items(pd.DataFrame({"pair_id": ["x"], "premise": ["A dog runs."]}), test)
    >>> refuse_test_items(pd.DataFrame({"pair_id": ["x"], "premise": ["A man sleeps."]}), test)
    Traceback (most recent call last):
    ...
    ValueError: exemplars from δ-SNLI test (pair_id or premise): ['x']
    """
    if test is None:
        from ..data.loaders import load_dnli

        test = load_dnli("snli", "test")
    leaked = rows["pair_id"].isin(set(test["pair_id"])) | rows["premise"].isin(set(test["premise"]))
    if leaked.any():
        raise ValueError(f"exemplars from δ-SNLI test (pair_id or premise): {rows.loc[leaked, 'pair_id'].tolist()}")


def _interleave(groups: list[list[dict]]) -> list[dict]:
    """Round-robin over groups, so no label dominates the end of the prompt.

    >>> _interleave([[1, 2, 3], ["a"], ["x", "y"]])
    [1, 'a', 'x', 2, 'y', 3]
    """
    out, longest = [], max((len(g) for g in groups), default=0)
    for i in range(longest):
        out.extend(g[i] for g in groups if i < len(g))
    return out


def atom_shots(n: int = C2_DEFAULT_SHOTS, seed: int = 0, pool: pd.DataFrame | None = None,
               test: pd.DataFrame | None = None) -> list[dict]:
    """`n` Prompt C.2 exemplars (a multiple of 6) drawn with `seed` from `pool` (default `pool_frame()`) by
    `SHOT_PLAN`: a third each more / less / none, half strengtheners, half weakeners; the atom is the hypothesis.
    ValueError when a pool row comes from δ-SNLI test (`test`, default the mirror's).

    Each row: premise, hypothesis (the atom), update, label (three-way), explanation, plus pair_id, split,
    update_type and scale for inspection.
    """
    if n <= 0 or n % 6:
        raise ValueError(f"C.2 exemplars come in rounds of 6 (SHOT_PLAN); n={n} is not a positive multiple of 6")
    pool = pool_frame() if pool is None else pool
    refuse_test_items(pool, test)
    groups = []
    for (update_type, label), per_round in SHOT_PLAN.items():
        cell = pool[(pool["update_type"] == update_type) & (pool["label"] == label)]
        want = per_round * n // 6
        if len(cell) < want:
            raise ValueError(f"the C.2 pool has {len(cell)} {label!r} atoms of {update_type} examples; {want} needed")
        picked = cell.sample(n=want, random_state=seed)
        groups.append(picked.rename(columns={"hypothesis": "full_hypothesis", "atom": "hypothesis"})
                      .to_dict("records"))
    return _interleave(groups)


def dnli_shots(n: int = 10, seed: int = 0, train: pd.DataFrame | None = None,
               test: pd.DataFrame | None = None) -> list[dict]:
    """Prompt C.1 exemplars: `n` seeded δ-SNLI train-subset examples (`train` overrides), half strengtheners,
    half weakeners, interleaved (`consistency.balanced_shots`); ValueError when one comes from δ-SNLI test."""
    from ..data.loaders import load_dsnli_train_subset
    from .consistency import balanced_shots

    if n % len(C1_LABELS):
        raise ValueError(f"C.1 exemplars are split evenly between {C1_LABELS}; n={n} is odd")
    train = load_dsnli_train_subset() if train is None else train
    rows = balanced_shots(train, n, C1_LABELS, seed=seed, label_col="update_type")
    refuse_test_items(pd.DataFrame(rows, columns=list(train.columns)), test)
    return [{"premise": r["premise"], "hypothesis": r["hypothesis"], "update": r["update"], "label": r["update_type"],
             "pair_id": r["pair_id"]} for r in rows]
