"""RS against SRS as independent (seed, method) runs (varimp_core.studies.rs_srs)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from varimp_core.studies.rs_srs import (SOURCES, SubspaceComparison, check_study,
                                        compare_subspace_methods, random_split, selection_run,
                                        study_source)
from varimp_core.studies.selection import madelon_curves, madelon_split

STUDY = dict(subspace_size=20, alpha=0.5, max_features=None, n_estimators=12, min_sampled=5,
             beta=0.95)


def _run(study, seed, method, *, progress=None, should_stop=None):
    """A run on Madelon with 80 irrelevant features, JSON in and out (as a worker's)."""
    return selection_run(madelon_split(80, seed), method=method, random_state=seed,
                         keep_selection=seed == 0, **study,
                         progress=None if progress is None else (lambda d, t: progress(d)),
                         should_stop=should_stop)


def test_madelon_comparison_equals_madelon_curves():
    # the oracle: madelon_curves draws and runs the same experiment in one loop
    got = compare_subspace_methods(_run, STUDY, n_seeds=2)
    want = madelon_curves([80], seeds=[0, 1], n_estimators=12, subspace_size=20)
    pd.testing.assert_frame_equal(got.curves, want, check_dtype=False)
    assert (got.p, got.truth_known, got.trees_asked, got.trees_done, got.partial) == \
        (100, True, 48, 48, False)
    assert sorted(got.selections) == ["rs", "srs"]        # seed 0 only
    assert got.selections["srs"].relevant == tuple(f"X{j}" for j in range(1, 21))


def test_a_mapper_in_any_order_gives_the_numbers_of_a_local_run():
    here = compare_subspace_methods(_run, STUDY, n_seeds=2)
    seen, ticks = [], []

    def mapper(args, *, progress=None, should_stop=None):
        seen.append([a[1:] for a in args])
        for i in reversed(range(len(args))):      # JSON in, JSON out, last piece first
            out = _run(*json.loads(json.dumps(args[i])), progress=lambda d, i=i: progress(i, d))
            yield i, json.loads(json.dumps(out))

    there = compare_subspace_methods(_run, STUDY, n_seeds=2, mapper=mapper,
                                     progress=lambda d, t, where: ticks.append((d, t, where)))
    assert seen == [[(0, "rs"), (0, "srs"), (1, "rs"), (1, "srs")]]
    assert there.to_dict() == here.to_dict()
    assert ticks[-1] == (48, 48, "4 of 4 runs done")


def test_the_runs_done_are_handed_out_while_the_others_grow():
    """After each run but the last, ``partial`` gets the comparison of the finished runs
    (RS of seed 0 first); the final numbers are those of a run without it."""
    seen = []
    got = compare_subspace_methods(_run, STUDY, n_seeds=1, partial=seen.append)
    assert len(seen) == 1 and seen[0].partial and seen[0].trees_done == 12
    assert set(seen[0].curves["method"]) == {"rs"} and sorted(seen[0].selections) == ["rs"]
    rs = got.curves[got.curves["method"] == "rs"].reset_index(drop=True)
    pd.testing.assert_frame_equal(seen[0].curves.reset_index(drop=True), rs)
    assert got.to_dict() == compare_subspace_methods(_run, STUDY, n_seeds=1).to_dict()


def test_stopping_keeps_the_runs_that_started():
    looks = []

    def stop():
        looks.append(1)
        return len(looks) > 15                     # during the second run (12 trees each)

    ticks = []
    out = compare_subspace_methods(_run, STUDY, n_seeds=2, should_stop=stop,
                                   progress=lambda d, t, where: ticks.append(where))
    assert out.partial and 12 < out.trees_done < 24
    assert set(out.curves["method"]) == {"rs", "srs"} and set(out.curves["seed"]) == {0}
    assert "seed 0, SRS" in ticks


def test_random_split_is_two_thirds_and_one_third_of_the_rows():
    X, y = np.arange(20).reshape(10, 2), np.arange(10) % 2
    a = random_split(X, y, 3, variables=("a", "b"))
    assert a.X_train.shape == (6, 2) and a.X_test.shape == (4, 2)     # floor(2 * 10 / 3) = 6
    rows = np.concatenate([a.X_train[:, 0], a.X_test[:, 0]]) // 2
    assert sorted(rows) == list(range(10))                            # every row once
    assert np.array_equal(a.y_train, rows[:6] % 2) and a.relevant is None
    b = random_split(X, y, 3, variables=("a", "b"), relevant=["a"])
    assert np.array_equal(a.X_train, b.X_train) and b.relevant == ("a",)
    with pytest.raises(ValueError, match="at least 6"):
        random_split(X[:5], y[:5], 0, variables=("a", "b"))


def test_final_means_and_the_selections_frame():
    curves = pd.DataFrame({"method": ["rs", "rs", "rs", "srs"], "seed": [0, 0, 1, 0],
                           "n_trees": [5, 10, 10, 10], "auprc": [0.1, 0.5, 0.7, 0.9],
                           "accuracy": [0.2, 0.6, 0.8, 1.0]})
    final = SubspaceComparison(curves=curves).final()
    # the last checkpoint of each (method, seed) run, averaged over the seeds
    assert final.loc["rs", "auprc"] == pytest.approx(0.6)
    assert final.loc["srs", "accuracy"] == pytest.approx(1.0)
    out = compare_subspace_methods(_run, STUDY, n_seeds=1)
    frame = out.selections_frame()
    assert list(frame.columns[:3]) == ["method", "variable", "importance"]
    assert len(frame) == 2 * 100 and set(frame["method"]) == {"rs", "srs"}
    back = SubspaceComparison.from_dict(json.loads(json.dumps(out.to_dict())))
    pd.testing.assert_frame_equal(back.curves, out.curves)
    assert back.selections["rs"].selected == out.selections["rs"].selected


def test_a_study_s_source_and_the_settings_that_cannot_run_together():
    # Guyon's Madelon design: 20 relevant features, so k irrelevant ones make p = 20 + k
    assert study_source("480") == ({"kind": "madelon", "irrelevant": 480}, 500)
    assert study_source("data", {"problem": "led"}, 7) == ({"kind": "data",
                                                            "data": {"problem": "led"}}, 7)
    assert SOURCES["5480"] == "Madelon, 5,480 irrelevant (p = 5,500)"
    with pytest.raises(ValueError, match="must be one of 480"):
        study_source("481")
    ok = {"subspace_size": 50, "max_features": None, "n_seeds": 2, "n_estimators": 300}
    check_study(ok, n_features=500, max_trees=1200)             # 2 seeds x 2 methods x 300
    for change, p, words in [({"subspace_size": 501}, 500, "from 1 to 500"),
                             ({"max_features": 52}, 500, "from 1 to 51 \\(q \\+ 1\\)"),
                             ({"n_estimators": 301}, 500, "1,204 trees is more than the limit")]:
        with pytest.raises(ValueError, match=words):
            check_study({**ok, **change}, n_features=p, max_trees=1200)
    check_study({**ok, "subspace_size": 10_000}, n_features=None, max_trees=1200)  # p unknown
