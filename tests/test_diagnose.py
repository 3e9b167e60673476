"""Diagnose: the paired significance tests on hand-computed cases."""
from __future__ import annotations

import numpy as np
import pytest

from nli_lib.diagnose.paired import mcnemar, paired_bootstrap


def test_mcnemar_counts_only_the_items_the_models_disagree_on():
    # 10 items: both right on 5, both wrong on 2, only A right on 3, never only B: p = 2 * (1/2)**3 = 0.25
    a = [1] * 5 + [0] * 2 + [1] * 3
    b = [1] * 5 + [0] * 2 + [0] * 3
    assert mcnemar(a, b) == {"n": 10, "a_only": 3, "b_only": 0, "p_value": 0.25}
    # the same discordant items among many more agreements give the same p-value
    assert mcnemar(a + [1] * 100, b + [1] * 100)["p_value"] == 0.25
    # 1 vs 9 discordant: 2 * P(X <= 1 | 10, 1/2) = 2 * 11 / 1024
    assert mcnemar([1] + [0] * 9, [0] + [1] * 9)["p_value"] == pytest.approx(22 / 1024)
    assert mcnemar([1, 0, 1], [1, 0, 1])["p_value"] == 1.0  # no disagreement: no evidence
    # symmetric in A and B
    assert mcnemar(b, a)["p_value"] == 0.25 and mcnemar(b, a)["b_only"] == 3


def test_paired_bootstrap_difference_interval_and_p_value():
    same = paired_bootstrap([1, 0, 1, 1], [1, 0, 1, 1])
    assert (same["difference"], same["ci_low"], same["ci_high"], same["p_value"]) == (0.0, 0.0, 0.0, 1.0)
    always = paired_bootstrap([1, 1, 1], [0, 0, 0], n_boot=200)
    assert (always["difference"], always["ci_low"], always["ci_high"], always["p_value"]) == (1.0, 1.0, 1.0, 0.0)
    # A better on 30 of 200 items, B on 10: difference 0.1; the interval holds it and excludes 0
    rng = np.random.default_rng(1)
    base = rng.integers(0, 2, 200)
    a, b = base.copy(), base.copy()
    a[:30], b[:30] = 1, 0
    b[30:40], a[30:40] = 1, 0
    r = paired_bootstrap(a, b, n_boot=4000, seed=3)
    assert r["difference"] == pytest.approx(0.1)
    assert 0 < r["ci_low"] < 0.1 < r["ci_high"] < 0.2 and r["p_value"] < 0.01
    assert paired_bootstrap(a, b, n_boot=4000, seed=3) == r  # seeded: the same numbers again


def test_paired_tests_refuse_unpaired_or_non_binary_input():
    with pytest.raises(ValueError, match="same items"):
        mcnemar([1, 0], [1, 0, 1])
    with pytest.raises(ValueError, match="0/1"):
        paired_bootstrap([0.5, 1], [1, 0])
