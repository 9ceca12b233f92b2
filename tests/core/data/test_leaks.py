"""Leaks: inputs that by themselves almost determine the target (varimp_core.data.leaks).

Expected scores follow from the construction of each column: a column equal to y on a
share q of the rows, flipped elsewhere, has out-of-fold accuracy q up to binomial noise;
a column with one row per level predicts every held-out row by the training majority.
"""
import math

import numpy as np
import pandas as pd
import pytest

import varimp_core as vc
from varimp_core.data.leaks import LEAK_ACCURACY, LEAK_R2, find_leaks, leak_scores
from varimp_core.data.prepare import prepare_table

from _verdict_tables import known_truth


def _frame(seed, n=400, p_one=0.5):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < p_one).astype(int)
    agree = rng.random(n) < 0.97
    return pd.DataFrame({
        "copy97": np.where(agree, y, 1 - y),                       # y on 97% of rows
        "copy80": np.where(rng.random(n) < 0.8, y, 1 - y),         # informative, no leak
        "row_id": [f"id{i:04d}" for i in rng.permutation(n)],      # one row per level
        "noise": rng.integers(0, 5, n), "num": rng.normal(size=n), "y": y}), agree.mean()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_97_percent_copy_is_the_only_leak(seed):
    frame, agree = _frame(seed)
    data = prepare_table(frame, "y", identifiers="keep")
    leaks = find_leaks(data, random_state=seed)
    assert [w["column"] for w in leaks] == ["copy97"]
    w = leaks[0]
    assert w["kind"] == "leak" and "out-of-fold" in w["rule"]
    # Each level's training majority is y's own value, so the held-out accuracy is the
    # share of agreeing rows, exactly.
    assert w["score"] == pytest.approx(agree, abs=1e-12)
    s = dict(zip(*[leak_scores(data, random_state=seed)[k] for k in ("variables", "scores")]))
    n = len(frame)
    majority = max(frame["y"].mean(), 1 - frame["y"].mean())
    assert abs(s["copy80"] - 0.8) < 4 * math.sqrt(0.16 / n)
    # an identifier scores like the majority guess: never seen out of fold
    assert s["row_id"] <= majority + 1e-12 and s["row_id"] < LEAK_ACCURACY


def test_an_imbalanced_target_needs_more_than_the_majority_rate():
    """y is 1 on 96% of rows: a column that says "1" except on a few rows has accuracy above
    0.95 but not above majority + half the remaining gap (0.98), so it is no leak; a copy
    that is right on 99% of rows is."""
    rng = np.random.default_rng(5)
    n = 1000
    y = (rng.random(n) < 0.96).astype(int)
    near_constant = np.where(rng.random(n) < 0.02, 0, 1)
    copy99 = np.where(rng.random(n) < 0.99, y, 1 - y)
    data = prepare_table(pd.DataFrame({"near_constant": near_constant, "copy99": copy99,
                                       "y": y}), "y")
    s = leak_scores(data)
    assert s["threshold"] == pytest.approx(s["majority"] + (1 - s["majority"]) / 2)
    assert s["scores"][0] >= LEAK_ACCURACY
    assert [w["column"] for w in find_leaks(data)] == ["copy99"]


def test_a_numeric_copy_of_a_numeric_target_is_a_leak():
    """Regression: x equals y on 97% of rows (a random y value elsewhere): R^2 about 0.94
    (0.97 minus the 20 bins' within-bin variance); independent noise scores R^2 <= ~0."""
    frame = known_truth(4, n=600, task="regression")
    data = vc.load_data(data=frame, target="y")
    assert data.task == "regression"
    leaks = find_leaks(data)
    assert [w["column"] for w in leaks] == ["leak"] and leaks[0]["score"] >= LEAK_R2
    s = dict(zip(*[leak_scores(data)[k] for k in ("variables", "scores")]))
    assert s["z"] < 0.05 and s["weekday"] < 0.05 and s["branch"] < 0.05


def test_known_truth_tables_flag_the_leak_and_nothing_else():
    for seed in (0, 1):
        data = vc.load_data(data=known_truth(seed), target="y")
        assert [w["column"] for w in find_leaks(data, random_state=seed)] == ["leak"]


def test_exact_distributions_have_no_leaks_and_seeds_reproduce():
    assert find_leaks(vc.load_data(problem="xor:relevant=2")) == []
    data = prepare_table(_frame(3)[0], "y", identifiers="keep")
    assert leak_scores(data, random_state=4) == leak_scores(data, random_state=4)
