"""The exact McNemar test and the paired bootstrap on small cases worked out by hand."""

from __future__ import annotations

import math

import pytest

from bench.memory.stats import mcnemar_exact, paired_bootstrap


def test_mcnemar_no_discordant_pairs_is_p_one():
    assert mcnemar_exact([True, False], [True, False]) == {"only_a": 0, "only_b": 0, "p_value": 1.0}


def test_mcnemar_five_to_nothing():
    # n = 5, k = 0: 2 * (1/32)
    r = mcnemar_exact([True] * 5 + [False], [False] * 5 + [False])
    assert (r["only_a"], r["only_b"]) == (5, 0)
    assert r["p_value"] == pytest.approx(2 / 32)


def test_mcnemar_one_to_nine():
    a = [True] + [False] * 9 + [True, True]
    b = [False] + [True] * 9 + [True, True]
    r = mcnemar_exact(a, b)
    assert (r["only_a"], r["only_b"]) == (1, 9)
    assert r["p_value"] == pytest.approx(2 * (math.comb(10, 0) + math.comb(10, 1)) / 2 ** 10)  # 0.021484375


def test_mcnemar_even_split_caps_at_one():
    assert mcnemar_exact([True, False], [False, True])["p_value"] == 1.0


def test_bootstrap_degenerate_cases():
    same = paired_bootstrap([True, False, True], [True, False, True], resamples=200)
    assert (same["diff"], same["low"], same["high"]) == (0.0, 0.0, 0.0)
    apart = paired_bootstrap([True] * 4, [False] * 4, resamples=200)
    assert (apart["diff"], apart["low"], apart["high"]) == (1.0, 1.0, 1.0)


def test_bootstrap_is_seeded_and_brackets_the_difference():
    a = [True] * 30 + [False] * 10
    b = [True] * 20 + [False] * 20
    one = paired_bootstrap(a, b, resamples=2000, seed=3)
    assert one == paired_bootstrap(a, b, resamples=2000, seed=3)
    assert one["diff"] == pytest.approx(0.25)
    assert one["low"] < 0.25 < one["high"]
    assert 0.0 < one["low"] and one["high"] < 0.5  # ten discordant pairs, all one way: clearly above zero


def test_bootstrap_needs_paired_lists():
    with pytest.raises(ValueError):
        paired_bootstrap([True], [True, False])
