"""Issue #26, items 1-4: missing values, a missing target, the CLI's --min-samples-leaf,
and exact-rf's refusal before the work."""

from __future__ import annotations

import json
from unittest.mock import patch

import numpy as np
import pandas as pd
import pytest

from varimp_core.__main__ import main
from varimp_core.api import compute_importances, load_data
from varimp_core.exact.binary import (binary_refusal_sentence, exact_et_importances,
                                      exact_rf_importances)

METHODS = {"exact-rf": exact_rf_importances, "exact-et": exact_et_importances}


def _table_with_nan():
    rng = np.random.default_rng(3)
    a = rng.normal(size=80).round(2)
    b = rng.integers(0, 3, size=80).astype(float)
    y = (a + rng.normal(size=80) > 0).astype(int)
    a[::7] = np.nan
    return pd.DataFrame({"age": a, "b": b, "y": y})


@pytest.mark.parametrize("method", sorted(METHODS))
def test_missing_inputs_are_refused_with_the_column_named(method):
    """No stand-in value: scikit-learn splits NaN natively, so the exact value refuses."""
    df = _table_with_nan()
    with pytest.raises(ValueError, match=r"'age' has missing values") as info:
        METHODS[method](df[["age", "b"]], df["y"], max_features=1)
    assert "'b'" not in str(info.value) and str(info.value).endswith(".")
    data = load_data(data=df, target="y")             # "missing" kept as a category
    assert data.kinds["age"] == "numeric"
    with pytest.raises(ValueError, match=r"'age' has missing values"):
        compute_importances(data, method=method, max_features=1)
    from varimp_core.studies.convergence import binary_refusal
    assert "'age' has missing values" in binary_refusal(data, method=method, max_features=1)
    # without the missing rows it runs
    data = load_data(data=df, target="y", missing="drop")
    r = compute_importances(data, method=method, max_features=1)
    assert np.all(np.isfinite(r.importances))


def test_several_columns_with_missing_values_are_all_named():
    X = np.array([[1.0, np.nan, 0.0], [np.nan, 2.0, 1.0], [3.0, 1.0, 0.0]])
    with pytest.raises(ValueError, match=r"columns 'x1', 'x2' have missing values"):
        exact_et_importances(X, [0, 1, 0], max_features=1)
    sentence = binary_refusal_sentence(X, [0, 1, 0], method="exact-rf", max_features=1)
    assert "'x1', 'x2'" in sentence and "'x3'" not in sentence


@pytest.mark.parametrize("y", [[0.0, 1.0, np.nan, 1.0],
                               np.array(["a", None, "b", "a"], dtype=object)])
def test_missing_target_is_refused_not_a_class_of_its_own(y):
    X = [[0.0], [1.0], [2.0], [3.0]]
    for fn in METHODS.values():
        with pytest.raises(ValueError, match=r"y has 1 missing value .*refuses a missing target"):
            fn(X, y, max_features=1)
    from sklearn.ensemble import RandomForestClassifier
    if np.asarray(y).dtype.kind == "f":          # scikit-learn refuses it too
        with pytest.raises(ValueError):
            RandomForestClassifier(n_estimators=2).fit(X, y)


def test_loading_drops_rows_without_a_target_so_the_methods_agree():
    """The prepare layer leaves rows without a target out (with a note) whatever --missing says."""
    df = pd.DataFrame({"x": [0.5, 1.5, 2.5, 3.5, 4.5, 5.5], "y": ["a", "b", None, "a", "b", "a"]})
    data = load_data(data=df, target="y")
    assert data.n_samples == 5
    r = compute_importances(data, method="exact-rf", max_features=1)
    keep = df["y"].notna()
    want = exact_rf_importances(df.loc[keep, ["x"]], df.loc[keep, "y"], max_features=1)
    np.testing.assert_allclose(r.importances, want.importances, atol=1e-15)


def _csv(tmp_path):
    rng = np.random.default_rng(0)
    x1 = rng.integers(0, 6, 60)
    x2 = rng.integers(0, 6, 60)
    y = (x1 + rng.integers(0, 3, 60) > 4).astype(int)
    f = tmp_path / "t.csv"
    pd.DataFrame({"x1": x1, "x2": x2, "y": y}).to_csv(f, index=False)
    return str(f)


@pytest.mark.parametrize("method", ["sklearn-rf", "sklearn-et", "exact-rf", "exact-et"])
def test_cli_min_samples_leaf_reaches_the_binary_methods(capsys, tmp_path, method):
    f = _csv(tmp_path)
    base = ["importances", "--data", f, "--target", "y", "--method", method,
            "--max-features", "2", "--format", "json"]
    if method.startswith("sklearn"):
        base += ["--n-estimators", "20"]
    got = {}
    for leaf in (None, 1, 7):
        argv = base + ([] if leaf is None else ["--min-samples-leaf", str(leaf)])
        assert main(argv) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["parameters"]["min_samples_leaf"] == (1 if leaf is None else leaf)
        got[leaf] = out["importances"]
    assert got[None] == got[1] and got[7] != got[1]
    if method.startswith("exact"):
        data = load_data(data=f, target="y")
        r = compute_importances(data, method=method, max_features=2, min_samples_leaf=7)
        np.testing.assert_allclose(got[7], r.importances, atol=1e-12)


@pytest.mark.parametrize("method", [None, "exact", "forest"])
def test_cli_min_samples_leaf_on_a_multiway_method_is_one_sentence(capsys, method):
    argv = ["importances", "--problem", "xor", "--min-samples-leaf", "3"]
    argv += [] if method is None else ["--method", method]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and "--min-samples-leaf applies to the binary-split methods" in err
    assert err.count("\n") == 1


def test_readme_synopsis_names_the_binary_methods_and_the_leaf_flag():
    from pathlib import Path
    text = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    synopsis = text[text.index("python -m varimp_core importances"):]
    synopsis = synopsis[:synopsis.index("python -m varimp_core relevance")]
    assert "exact-rf|exact-et" in synopsis and "[--min-samples-leaf L]" in synopsis


def test_exact_rf_refuses_a_large_table_before_the_work_with_the_count():
    """Issue #26 item 4: N = 3,000, p = 2 worked 36 s before refusing; now it counts first."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 2)).round(3)
    y = (X.sum(axis=1) + rng.normal(size=3000) > 0).astype(int)
    import varimp_core.exact.binary as binary

    def no_work(*args, **kwargs):
        raise AssertionError("the exact recursion was started")

    # the count comes before the recursion (6-17 s on 2 shared cores; the recursion took
    # 76-130 s to refuse), and the sentence names the depth that is sure to fit
    with patch.object(binary, "BinarySolver", no_work), pytest.raises(
            ValueError, match=r"\(exact-rf\) needs more than 300,000 distinct nodes "
                              r"on these 3,000 rows and 2 inputs: counting them "
                              r"level by level found 3\d\d,\d\d\d before any was "
                              r"solved; use a max depth of at most 2 \(sure to fit here\)"):
        exact_rf_importances(X, y, max_features=1)
    # at K = p the same table is one tree up to ties: it runs
    r = exact_rf_importances(X, y, max_features=2)
    assert r.parameters["n_nodes"] < 2 * 3000


@pytest.mark.parametrize("seed", range(4))
def test_the_level_count_is_the_recursions_own_count(seed):
    from varimp_core.exact.binary import _count_rf_nodes, PreparedBinary, exact_binary_depth_profile
    rng = np.random.default_rng(seed)
    N, p, K = [(50, 3, 1), (150, 3, 2), (200, 2, 1), (60, 4, 2)][seed]
    X = rng.normal(size=(N, p)).round(2)
    y = rng.integers(0, 2 + seed % 2, size=N)
    L = 1 + 2 * (seed % 2)
    crit = ("entropy", "gini")[seed % 2]
    _, info = exact_binary_depth_profile(X, y, method="exact-rf", max_features=K,
                                         min_samples_leaf=L, criterion=crit)
    d = PreparedBinary(X, y, None, crit)
    assert _count_rf_nodes(d, K, None, L, 10 ** 9) == info["n_nodes"]


@pytest.mark.parametrize("levels, depth", [
    ([2, 2, 2], 7),      # 6 children a node: 1 + 6 + ... + 6^6 = 55,987; with 6^7 335,923
    ([3], 9),            # 4 children: (4^9 - 1) / 3 = 87,381; (4^10 - 1) / 3 = 349,525
    ([32] * 60, 2),      # 3,720 children: 1 + 3,720; then 13,842,121
    ([344] * 4, 2),      # penguins' 4 numbers, 344 rows: 1 + 2,744; then 7,532,281
])
def test_sure_depth_is_the_largest_depth_whose_node_bound_fits(levels, depth):
    from varimp_core.exact.binary import sure_depth
    assert sure_depth(levels) == depth


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("method", sorted(METHODS))
def test_both_methods_run_at_the_sure_depth_of_a_table_they_refuse_fully_grown(method, seed):
    """The depth the refusal names (and the pages' hint shows) runs, at every K, within the
    limit, counted by the recursion itself; fully grown trees are refused (exact-et) or
    run within the limit (exact-rf, whose one best split per input visits fewer nodes)."""
    from varimp_core.exact.binary import (PreparedBinary, binary_size_hint,
                                          exact_binary_depth_profile, sure_depth)
    rng = np.random.default_rng(seed)
    N, p, cap = [(60, 2, 400), (40, 3, 2_000), (80, 2, 1_000)][seed]
    X = rng.normal(size=(N, p)).round(2)
    y = rng.integers(0, 2, size=N)
    depth = sure_depth(PreparedBinary(X, y, None, "entropy").n_distinct, cap)
    hint = binary_size_hint(X, y, max_nodes=cap)
    assert hint["depth"] == depth >= 2 and not hint["full"] and hint["nodes"] > cap
    assert (hint["rows"], hint["inputs"]) == (N, p)
    try:   # exact-et's nodes are the estimate's boxes; exact-rf visits fewer, and may fit
        _, info = exact_binary_depth_profile(X, y, method=method, max_features=1, max_nodes=cap)
        assert method == "exact-rf" and info["n_nodes"] <= cap
    except ValueError as refused:
        assert f"max depth of at most {depth} (sure to fit here)" in str(refused)
    for K in range(1, p + 1):
        _, info = exact_binary_depth_profile(X, y, method=method, max_features=K,
                                             max_depth=depth, max_nodes=cap)
        assert 0 < info["n_nodes"] <= cap


def test_the_size_hint_says_full_depth_fits_where_the_methods_run_fully_grown():
    from varimp_core.exact.binary import binary_size_hint, exact_binary_depth_profile
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, size=(40, 3)).astype(float)
    y = (X[:, 0] + rng.integers(0, 2, size=40) > 1).astype(int)
    hint = binary_size_hint(X, y)
    assert hint["full"] and hint["nodes"] <= 300_000
    for method in METHODS:
        _, info = exact_binary_depth_profile(X, y, method=method, max_features=1)
        assert info["n_nodes"] <= hint["nodes"]   # the bound on all boxes holds them all
    with pytest.raises(ValueError, match="missing"):
        binary_size_hint(np.where(X == 0, np.nan, X), y)
