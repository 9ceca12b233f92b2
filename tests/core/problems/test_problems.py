"""Tests of varimp_core.problems.registry: exact distributions, samplers and spec parsing.

Expected values come from the papers or from hand calculation, never from the
code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from varimp_core.problems.sampled import strobl_signal_variance
from varimp_core.problems.registry import (MAX_EXACT_ROWS, Problem, get_problem, list_problems,
                                           parse_spec)

# Louppe et al. (2013), Table 1: segment x_j for digits y = 0..9.
TABLE_1 = ("1011011111", "1000111011", "1111100111", "0011111011",
           "1010001010", "1101111111", "1011011011")


# -- a tiny plug-in entropy helper over a joint table ----------------------------
def _entropy(table, columns) -> float:
    """H of the listed columns (indices into X, or "y") in bits."""
    if not columns:
        return 0.0
    parts = [table.y if c == "y" else table.X[:, c] for c in columns]
    joint = {}
    for key, w in zip(zip(*parts), table.weight):
        joint[key] = joint.get(key, 0.0) + w
    p = np.array([v for v in joint.values() if v > 0]) / table.weight.sum()
    return float(-(p * np.log2(p)).sum())


def _mi(table, a, b, given=()) -> float:
    """I(a; b | given) = H(a,g) + H(b,g) - H(a,b,g) - H(g)."""
    a, b, g = list(a), list(b), list(given)
    return (_entropy(table, a + g) + _entropy(table, b + g)
            - _entropy(table, a + b + g) - _entropy(table, g))


# -- LED -------------------------------------------------------------------------
def test_led_exact_table_is_louppe_table_1():
    problem = get_problem("led")
    assert problem.variables == tuple(f"X{j}" for j in range(1, 8))
    assert problem.target == "Y" and problem.task == "classification"
    assert problem.has_exact and problem.spec == "led"
    table = problem.exact_table()
    assert table.exact and table.n_rows == 10
    np.testing.assert_allclose(table.weight, 0.1)
    expected = {y: tuple(int(s[y]) for s in TABLE_1) for y in range(10)}
    got = {int(y): tuple(int(v) for v in x) for x, y in zip(table.X, table.y)}
    assert got == expected
    # H(Y) = -10 * 0.1 log2 0.1 = log2 10 (hand), and X determines Y.
    assert _entropy(table, ["y"]) == pytest.approx(math.log2(10))
    assert _mi(table, range(7), ["y"]) == pytest.approx(math.log2(10))


def test_led_noise_flips_segments():
    table = get_problem("led:noise=0.1").exact_table()
    assert table.n_rows == 10 * 2**7
    assert table.weight.sum() == pytest.approx(1.0)
    p_y0 = table.weight[table.y == 0].sum()
    assert p_y0 == pytest.approx(0.1)
    # x1 is on for digit 0; it stays on unless flipped (prob 0.1).
    assert table.weight[(table.y == 0) & (table.X[:, 0] == 1)].sum() / p_y0 \
        == pytest.approx(0.9)
    # x2 is off for digit 1; it is on only when flipped.
    p_y1 = table.weight[table.y == 1].sum()
    assert table.weight[(table.y == 1) & (table.X[:, 1] == 1)].sum() / p_y1 \
        == pytest.approx(0.1)
    # Flips are independent: P(x1 = x2 = 0 | Y=0) = 0.1 * 0.1 (both on for digit 0).
    both_off = table.weight[(table.y == 0) & (table.X[:, 0] == 0) & (table.X[:, 1] == 0)]
    assert both_off.sum() / p_y0 == pytest.approx(0.01)


@pytest.mark.parametrize("noise", [0.0, 0.1])
def test_led_copies_are_identical_columns(noise):
    problem = get_problem(f"led:copies=X5:2,noise={noise}")
    # Named as the Masking page names a copy (issue #26: the copy was X8 there, X5' here).
    assert problem.variables == (*(f"X{j}" for j in range(1, 8)), "X5'", "X5''")
    assert problem.relevant == problem.variables
    assert problem.details["copy_of"] == {"X5'": "X5", "X5''": "X5"}
    table = problem.exact_table()
    np.testing.assert_array_equal(table.X[:, 7], table.X[:, 4])
    np.testing.assert_array_equal(table.X[:, 8], table.X[:, 4])
    # Copies add columns, not rows.
    assert table.n_rows == (10 if noise == 0 else 1280)
    sample = problem.sample(200, random_state=3)
    assert (sample["X5'"] == sample["X5"]).all() and (sample["X5''"] == sample["X5"]).all()


def test_led_several_copies_and_irrelevant():
    problem = get_problem("led:irrelevant=3,copies=X5:2+X2:1")
    assert problem.spec == "led:copies=X2:1+X5:2,irrelevant=3"
    assert len(problem.variables) == 7 + 3 + 3
    assert problem.relevant == (*(f"X{j}" for j in range(1, 8)), "X2'", "X5'", "X5''")
    assert problem.variables[10:] == ("X8", "X9", "X10")   # the bits, as without copies
    assert problem.details["copy_of"] == {"X2'": "X2", "X5'": "X5", "X5''": "X5"}
    assert "X8..X10: 3 irrelevant fair bits" in problem.description
    table = problem.exact_table()
    assert table.n_rows == 10 * 2**3
    np.testing.assert_allclose(table.weight, 0.1 / 8)
    np.testing.assert_array_equal(table.X[:, 7], table.X[:, 1])
    for j in (10, 11, 12):           # X8..X10 are fair bits independent of Y
        assert _entropy(table, [j]) == pytest.approx(1.0)
        assert _mi(table, [j], ["y"]) == pytest.approx(0.0, abs=1e-12)


def test_led_copy_is_named_as_the_masking_page_names_it():
    """led:copies=X5:1 and the Masking page's exact copy of X5 (flip 0) are one table, with
    one name for the copy (issue #26: X8 against X5')."""
    from varimp_core.studies.masking_copy import masking_table

    spec = get_problem("led:copies=X5:1,irrelevant=2")
    page = masking_table("led", 2, copy="X5", flip=0.0)
    assert spec.variables == page.variables == (*(f"X{j}" for j in range(1, 8)), "X5'",
                                                 "X8", "X9")
    assert spec.description.count("X5' copies X5") == 1


def test_led_seven_plus_seventeen_exceeds_the_exact_limit():
    problem = get_problem("led:irrelevant=17")
    assert len(problem.variables) == 24
    assert problem.exact_rows == 10 * 2**17 and not problem.has_exact
    with pytest.raises(ValueError) as err:
        problem.exact_table()
    assert "1,310,720" in str(err.value) and f"{MAX_EXACT_ROWS:,}" in str(err.value)
    frame = problem.sample(50)
    assert list(frame.columns) == [*problem.variables, "Y"]


# -- XOR and SYM -------------------------------------------------------------------
@pytest.mark.parametrize("spec, rows", [("xor", 4), ("xor:relevant=3", 8),
                                        ("xor:relevant=3,irrelevant=2", 32),
                                        ("xor:noise=0.1", 8), ("sym", 6),
                                        ("sym:irrelevant=2", 24), ("sym:noise=0.1", 8)])
def test_exact_table_sizes(spec, rows):
    table = get_problem(spec).exact_table()
    assert table.n_rows == rows
    assert table.weight.sum() == pytest.approx(1.0)


def test_xor_information():
    table = get_problem("xor:irrelevant=1").exact_table()
    # Each bit alone says nothing; both together give the whole bit of Y.
    assert _mi(table, [0], ["y"]) == pytest.approx(0.0, abs=1e-12)
    assert _mi(table, [0, 1], ["y"]) == pytest.approx(1.0)
    assert _mi(table, [0], ["y"], given=[1]) == pytest.approx(1.0)
    assert _mi(table, [2], ["y"], given=[0, 1]) == pytest.approx(0.0, abs=1e-12)


def test_xor_noise():
    table = get_problem("xor:noise=0.1").exact_table()
    parity = table.X[:, :2].sum(axis=1) % 2
    assert table.weight[table.y == parity].sum() == pytest.approx(0.9)
    # I(X1,X2;Y) = 1 - H2(0.1) by hand.
    h = -(0.1 * math.log2(0.1) + 0.9 * math.log2(0.9))
    assert _mi(table, [0, 1], ["y"]) == pytest.approx(1 - h)


def test_sym_information_matches_sutera():
    table = get_problem("sym").exact_table()
    # Sutera Tables 3.27-3.28: P(Y=X1) = 0.75, so I(X1;Y) = 1 - H2(0.75) = 0.1887
    # and I(X1;Y|X2) = H2(0.75) - 0.5 = 0.3113.
    assert _mi(table, [0], ["y"]) == pytest.approx(0.1887, abs=1e-4)
    assert _mi(table, [0], ["y"], given=[1]) == pytest.approx(0.3113, abs=1e-4)
    assert _mi(table, [1], ["y"]) == pytest.approx(0.1887, abs=1e-4)


def test_sym_noise_flips_only_the_determined_cells():
    table = get_problem("sym:noise=0.2").exact_table()
    cell = (table.X[:, 0] == 0) & (table.X[:, 1] == 0)
    assert table.weight[cell & (table.y == 1)].sum() == pytest.approx(0.25 * 0.2)
    cell = (table.X[:, 0] == 0) & (table.X[:, 1] == 1)
    assert table.weight[cell & (table.y == 1)].sum() == pytest.approx(0.25 * 0.5)


# -- samplers ----------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["led", "led:noise=0.1,irrelevant=2", "xor:irrelevant=2",
                                  "sym:noise=0.1", "strobl", "strobl:task=regression",
                                  "madelon:irrelevant=5,samples=60", "iris", "diabetes"])
def test_samplers_are_reproducible(spec):
    problem = get_problem(spec)
    a = problem.sample(40, random_state=7)
    b = problem.sample(40, random_state=7)
    c = problem.sample(40, random_state=8)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    assert list(a.columns) == [*problem.variables, problem.target]
    assert len(a) == 40


@pytest.mark.parametrize("spec", ["led:noise=0.1", "sym:noise=0.1", "xor:relevant=3,noise=0.2"])
def test_sample_frequencies_match_exact_table(spec):
    problem = get_problem(spec)
    table = problem.exact_table()
    n = 20_000
    frame = problem.sample(n, random_state=1)
    assert all(pd.api.types.is_integer_dtype(t) for t in frame.dtypes)
    counts = frame.value_counts(sort=False)
    observed = np.array([counts.get(tuple(int(v) for v in x) + (int(y),), 0)
                         for x, y in zip(table.X, table.y)]) / n
    assert observed.sum() == pytest.approx(1.0)      # no row outside the support
    p = table.weight
    common = n * p >= 10                              # normal approximation holds
    se = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(observed - p)[common] <= 5 * se[common])
    rare_p = p[~common].sum()                         # rare rows, taken together
    rare_se = math.sqrt(rare_p * (1 - rare_p) / n)
    assert abs(observed[~common].sum() - rare_p) <= 5 * rare_se + 1e-12


def test_sample_default_size_and_bad_size():
    problem = get_problem("xor")
    assert len(problem.sample()) == problem.default_samples
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="n_samples"):
            problem.sample(bad)


# -- strobl -------------------------------------------------------------------------
def test_strobl_layout_and_levels():
    problem = get_problem("strobl")
    assert len(problem.variables) == 50 and problem.relevant == ("X1", "X2", "X3", "X4", "X5")
    assert not problem.has_exact and problem.default_samples == 1000
    with pytest.raises(ValueError, match="50 features.*n_samples"):
        problem.exact_table()
    details = problem.details
    original = [details["original_index"][v] for v in problem.variables]
    assert sorted(original) == list(range(1, 51))
    relevant = details["relevant_original"]
    assert len(set(relevant)) == 5 and all(1 <= j <= 10 for j in relevant)
    assert tuple(original[:5]) == tuple(relevant)
    frame = problem.sample(5000, random_state=0)
    for v in problem.variables:
        j = details["original_index"][v]
        assert details["n_levels"][v] == j + 1
        assert sorted(frame[v].unique()) == list(range(j + 1))   # uniform on 0..j


def test_strobl_relevant_first_and_others_independent():
    problem = get_problem("strobl:samples=20000")
    frame = problem.sample(random_state=2)
    n = len(frame)
    assert n == 20000 and set(frame["Y"].unique()) == {0, 1}
    r = frame.corr()["Y"]
    # Each X_j / j enters the logit with weight 2/5; near the mean logit (0) the
    # slope of P(Y=1) is 0.25, so corr ~ 0.25 * 0.4 * sd(X_j/j) / 0.5 ~ 0.065-0.08
    # for j = 1..10 (hand), well above 4 standard errors (0.028).
    assert (r[list(problem.variables[:5])] > 4 / math.sqrt(n)).all()
    assert (r[list(problem.variables[5:])].abs() < 4.5 / math.sqrt(n)).all()


def test_strobl_regression_noise_variance():
    # Var(X_j / j) = (j + 2) / (12 j) for X_j uniform on 0..j; for S = {1..5}:
    # (3/12 + 4/24 + 5/36 + 6/48 + 7/60) / 25 = 0.79722 / 25 = 0.031889.
    assert strobl_signal_variance((1, 2, 3, 4, 5)) == pytest.approx(0.7972222 / 25)
    problem = get_problem("strobl:task=regression")
    assert problem.task == "regression"
    frame = problem.sample(20_000, random_state=0)
    assert pd.api.types.is_float_dtype(frame["Y"])
    var_signal = strobl_signal_variance(tuple(problem.details["relevant_original"]))
    # Var(Y) = Var(signal) + 100 Var(signal).
    assert frame["Y"].var() == pytest.approx(101 * var_signal, rel=0.05)


def test_strobl_seed_changes_the_relevant_set():
    sets = {tuple(get_problem(f"strobl:seed={s}").details["relevant_original"])
            for s in range(5)}
    assert len(sets) > 1


# -- madelon --------------------------------------------------------------------
def test_madelon_shape_and_no_identical_columns():
    problem = get_problem("madelon:irrelevant=30,samples=400")
    assert problem.relevant == tuple(f"X{j}" for j in range(1, 21))
    assert not problem.has_exact
    with pytest.raises(ValueError, match="no exact distribution"):
        problem.exact_table()
    frame = problem.sample(random_state=0)
    assert frame.shape == (400, 20 + 30 + 1)
    X = frame[list(problem.variables)].to_numpy()
    assert np.unique(X.T, axis=0).shape[0] == X.shape[1]
    corr = np.corrcoef(X, rowvar=False)
    np.fill_diagonal(corr, 0)
    assert np.abs(corr).max() < 0.99
    # A copy with noise 0.5 sd correlates 1 / sqrt(1 + 0.5**2) = 0.894 with its source.
    for j in range(10):
        assert np.corrcoef(X[:, j], X[:, 10 + j])[0, 1] == pytest.approx(0.894, abs=0.05)
    # X6..X10 are exact linear combinations of X1..X5.
    coef, *_ = np.linalg.lstsq(X[:, :5], X[:, 5:10], rcond=None)
    np.testing.assert_allclose(X[:, :5] @ coef, X[:, 5:10], atol=1e-8)
    assert set(frame["Y"].unique()) == {0, 1}


@pytest.mark.parametrize("n_classes", [2, 3])
def test_madelon_labels_the_32_vertices_at_random(n_classes):
    # Guyon's design: 32 clusters on the vertices of a 5-cube, randomly labelled.  With a
    # separation far above the clusters' spread the signs of X1..X5 name the vertex, so
    # each vertex shows one label (up to the 1% of labels redrawn), the labels are
    # balanced over the classes (32 // k or 32 // k + 1 vertices each), and no single
    # informative input decides Y: each sign of X_j holds vertices of every class.
    labellings = set()
    for seed in range(4):
        problem = get_problem(f"madelon:irrelevant=0,separation=50,n_classes={n_classes}")
        frame = problem.sample(6400, random_state=seed)
        bits = (frame[[f"X{j}" for j in range(1, 6)]].to_numpy() > 0).astype(int)
        vertex = bits @ (1 << np.arange(4, -1, -1))
        assert np.bincount(vertex, minlength=32).min() >= 190       # 200 rows a vertex
        labels = []
        for v in range(32):
            counts = np.bincount(frame["Y"].to_numpy()[vertex == v], minlength=n_classes)
            assert counts.max() >= 0.95 * counts.sum()
            labels.append(int(counts.argmax()))
        per_class = np.bincount(labels, minlength=n_classes)
        assert per_class.min() >= 32 // n_classes and per_class.max() <= 32 // n_classes + 1
        for j in range(5):
            for side in (0, 1):
                assert len({labels[v] for v in range(32) if (v >> (4 - j)) & 1 == side}) \
                    == n_classes
        labellings.add(tuple(labels))
    assert len(labellings) == 4                                      # a new labelling per seed


def test_madelon_defaults_follow_geurts():
    problem = get_problem("madelon")
    assert len(problem.variables) == 500 and problem.default_samples == 1500


# -- real datasets ------------------------------------------------------------------
@pytest.mark.parametrize("name, rows, p, task", [
    ("iris", 150, 4, "classification"), ("wine", 178, 13, "classification"),
    ("breast_cancer", 569, 30, "classification"), ("digits", 1797, 64, "classification"),
    ("diabetes", 442, 10, "regression")])
def test_real_datasets(name, rows, p, task):
    problem = get_problem(name)
    assert problem.task == task and problem.target == "target"
    assert problem.relevant is None and not problem.has_exact
    assert len(problem.variables) == p and problem.default_samples == rows
    with pytest.raises(ValueError, match="no exact distribution"):
        problem.exact_table()
    assert problem.sample().shape == (rows, p + 1)
    assert problem.sample(10 * rows).shape == (rows, p + 1)
    sub = problem.sample(20, random_state=4)
    assert sub.shape == (20, p + 1)
    assert "sepal length (cm)" in get_problem("iris").variables


# -- specs --------------------------------------------------------------------------
@pytest.mark.parametrize("spec, canonical", [
    ("led", "led"),
    ("LED: noise = 0.10 , irrelevant=017", "led:irrelevant=17,noise=0.1"),
    ("led:noise=0", "led"),
    ("led:copies=x5:1+X5:1", "led:copies=X5:2"),
    ("xor:relevant=2,irrelevant=0", "xor"),
    ("xor:noise=0.05,relevant=4", "xor:noise=0.05,relevant=4"),
    ("strobl:task=Regression,seed=3", "strobl:seed=3,task=regression"),
    ("madelon:samples=1500", "madelon"),
    ("iris", "iris"),
])
def test_canonical_spec_round_trip(spec, canonical):
    problem = get_problem(spec)
    assert problem.spec == canonical
    again = get_problem(problem.spec)
    assert again.spec == canonical and again.options == problem.options
    assert again.variables == problem.variables


def test_parse_spec_fills_defaults():
    assert parse_spec("xor:relevant=3") == ("xor", {"relevant": 3, "irrelevant": 0,
                                                    "noise": 0.0})
    assert parse_spec("iris") == ("iris", {})
    name, options = parse_spec("led:noise=0.1")
    assert name == "led" and options == {"irrelevant": 0, "noise": 0.1, "copies": ""}


@pytest.mark.parametrize("spec, must_contain", [
    ("lde", ["'lde'", "led, xor, sym, toy, madelon, strobl, gauss, iris, wine, "
                      "breast_cancer, digits, diabetes"]),
    ("", ["empty", "led"]),
    ("led:foo=1", ["'foo'", "irrelevant", "noise", "copies"]),
    ("led:noise=2", ["'2'", "0 to 0.5"]),
    ("led:noise=abc", ["'abc'", "0 to 0.5"]),
    ("led:irrelevant=-1", ["'-1'", "whole number"]),
    ("led:irrelevant=1.5", ["'1.5'", "whole number"]),
    ("led:copies=X9:1", ["'X9:1'", "X1..X7"]),
    ("led:copies=X5", ["'X5'", "X5:2"]),
    ("led:noise", ["key=value", "irrelevant, noise, copies"]),
    ("led:noise=0.1,noise=0.2", ["'noise'", "once"]),
    ("xor:relevant=0", ["'0'", "from 1"]),
    ("strobl:task=ranking", ["'ranking'", "classification, regression"]),
    ("madelon:copy_noise=0", ["'0'", "greater than 0"]),
    ("madelon:n_classes=1", ["'1'", "from 2"]),
    ("iris:x=1", ["'x=1'", "'iris'"]),
])
def test_bad_specs_name_the_value_and_the_choices(spec, must_contain):
    with pytest.raises(ValueError) as err:
        get_problem(spec)
    message = str(err.value)
    for fragment in must_contain:
        assert fragment in message
    assert message.endswith(".") and "\n" not in message


def test_non_string_spec():
    with pytest.raises(ValueError, match="must be a string"):
        parse_spec(None)


def test_list_problems_describes_every_option():
    problems = list_problems()
    assert [p["name"] for p in problems] == ["led", "xor", "sym", "toy", "madelon", "strobl",
                                             "gauss", "iris", "wine", "breast_cancer", "digits",
                                             "diabetes"]
    for entry in problems:
        assert entry["description"]
        for option in entry["options"]:
            assert set(option) >= {"key", "default", "type", "help"}
            # The default is a valid value and leaves the canonical spec unchanged.
            text = str(option["default"])
            spec = f"{entry['name']}:{option['key']}={text}" if text else entry["name"]
            assert get_problem(spec).spec == entry["name"]


def test_problem_is_frozen():
    problem = get_problem("sym")
    assert isinstance(problem, Problem)
    with pytest.raises(AttributeError):
        problem.name = "xor"


def test_xor_with_thirty_bits_samples_without_its_table():
    """xor:relevant=30 tried to build its 2^30-row table to sample from it (240 GiB, a
    MemoryError); its bits are drawn directly: fair, independent, and Y is their parity."""
    df = get_problem("xor:relevant=30,irrelevant=2").sample(4000, random_state=3)
    bits = df.drop(columns="Y").to_numpy()
    assert bits.shape == (4000, 32) and set(np.unique(bits)) == {0, 1}
    np.testing.assert_array_equal(df["Y"], bits[:, :30].sum(axis=1) % 2)
    assert np.all(np.abs(bits.mean(axis=0) - 0.5) < 4 * 0.5 / np.sqrt(4000))
    noisy = get_problem("xor:relevant=20,noise=0.25").sample(4000, random_state=3)
    flipped = (noisy["Y"] != noisy.drop(columns="Y").sum(axis=1) % 2).mean()
    assert abs(flipped - 0.25) < 4 * np.sqrt(0.25 * 0.75 / 4000)


def test_gauss_is_the_stated_threshold_of_two_normal_inputs():
    """Without noise Y is exactly [X1 + X2/2 > 0]; the inputs are continuous (no ties)."""
    problem = get_problem("gauss:noise=0,samples=200")
    assert problem.variables == ("X1", "X2") and problem.default_samples == 200
    frame = problem.sample(random_state=4)
    assert list(frame.columns) == ["X1", "X2", "Y"] and len(frame) == 200
    np.testing.assert_array_equal(frame["Y"], (frame["X1"] + frame["X2"] / 2 > 0).astype(int))
    assert frame["X1"].nunique() == 200 and frame["X2"].nunique() == 200
    assert abs(frame["X1"].mean()) < 4.5 / np.sqrt(200)          # standard normal mean 0
    noisy = get_problem("gauss").sample(random_state=4)
    assert len(noisy) == 30 and set(noisy["Y"]) <= {0, 1}


def test_bundled_classification_sets_name_their_classes():
    """Issue #26: iris showed "class 0/1/2"; its classes are scikit-learn's species names."""
    import sklearn.datasets

    from varimp_core.data.prepare import prepare_problem

    want = tuple(str(v) for v in sklearn.datasets.load_iris().target_names)
    d = prepare_problem(get_problem("iris"))
    assert d.table.y_labels == want and d.task == "classification"
    counts = np.bincount(sklearn.datasets.load_iris().target)
    assert np.bincount(d.y.astype(int)).tolist() == counts.tolist()
