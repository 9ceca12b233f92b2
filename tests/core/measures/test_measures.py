"""Tests of varimp_core.measures (MDI-oob, naive-oob, MDA, shadow-corrected MDI).

Expected values come from hand calculations (a four-row tree), identities of
the theory (Li et al. 2019, Prop. 1; the telescoping sum of Saabas
contributions; exchangeability of a noisy feature and its shadow), brute-force
oracles written here with explicit loops, and scikit-learn's public
``feature_importances_`` and ``permutation_importance``.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier,
                              RandomForestRegressor)
from sklearn.inspection import permutation_importance
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from varimp_core.measures import tree_kernels as _oob
from varimp_core.measures.suite import DEFAULT_MEASURES, MEASURES, compute_measures, measures_frame
from varimp_core.measures.permutation import impurity_corrected, mda_holdout, mda_oob
from varimp_core.measures.mdi_oob import mdi, mdi_oob, naive_oob, saabas_contributions
from varimp_core.result import ImportanceResult
from varimp_core.forests.sklearn_mdi import forest_mdi

FORESTS = {("rf", "classification"): RandomForestClassifier,
           ("et", "classification"): ExtraTreesClassifier,
           ("rf", "regression"): RandomForestRegressor,
           ("et", "regression"): ExtraTreesRegressor}


def _data(task, n=150, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 4, n), rng.integers(0, 3, n), rng.normal(size=(n, p - 2))])
    signal = X[:, 0] + X[:, 1] * (X[:, 2] > 0)
    if task == "classification":
        y = (signal + rng.integers(0, 3, n)) % 3
    else:
        y = signal + rng.normal(0, 0.5, n)
    return X, y


def _forest(kind, task, *, bootstrap=True, criterion=None, n=150, seed=0, **kw):
    X, y = _data(task, n=n, seed=seed)
    options = dict(n_estimators=8, bootstrap=bootstrap, random_state=seed, max_features=2, **kw)
    if criterion is not None:
        options["criterion"] = criterion
    return FORESTS[(kind, task)](**options).fit(X, y), X, y


# -- Saabas contributions: a four-row tree by hand --------------------------------
# X = (x1, x2) in {0,1}^2, y = 0, 1, 2, 7.  Root mean 2.5; the root splits on x1
# (between-group sum of squares 16 > 9 for x2), giving means 0.5 and 4.5; each
# child splits on x2 into the single rows.
HAND_X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=float)
HAND_Y = np.array([0.0, 1.0, 2.0, 7.0])
HAND_CONTRIB = np.array([[-2.0, -0.5],    # 0.5 - 2.5, 0 - 0.5
                         [-2.0, 0.5],     # 0.5 - 2.5, 1 - 0.5
                         [2.0, -2.5],     # 4.5 - 2.5, 2 - 4.5
                         [2.0, 2.5]])     # 4.5 - 2.5, 7 - 4.5


def test_saabas_contributions_by_hand():
    tree = DecisionTreeRegressor(random_state=0).fit(HAND_X, HAND_Y)
    bias, contrib = saabas_contributions(tree, HAND_X)
    np.testing.assert_allclose(bias, 2.5)
    np.testing.assert_allclose(contrib, HAND_CONTRIB, atol=1e-12)
    # Identity: the contributions telescope to the leaf value.
    np.testing.assert_allclose(bias + contrib.sum(axis=1), tree.predict(HAND_X), atol=1e-12)


def test_mdi_in_sample_by_hand():
    # (1/4) sum_i f_k(x_i) y_i = (0*-2 + 1*-2 + 2*2 + 7*2)/4 = 4 for x1 and
    # (0*-0.5 + 1*0.5 + 2*-2.5 + 7*2.5)/4 = 3.25 for x2; the impurity decreases
    # are 7.25 - (0.25 + 6.25)/2 = 4 and (0.25 + 6.25)/2 = 3.25.
    rf = RandomForestRegressor(n_estimators=2, bootstrap=False, max_features=None,
                               random_state=0).fit(HAND_X, HAND_Y)
    res = mdi_oob(rf, HAND_X, HAND_Y, samples="in_bag")
    np.testing.assert_allclose(res.importances, [4.0, 3.25], atol=1e-12)
    np.testing.assert_allclose(forest_mdi(rf).importances, [4.0, 3.25], atol=1e-12)


@pytest.mark.parametrize("kind", ["rf", "et"])
def test_saabas_contributions_telescope_to_class_probabilities(kind):
    est, X, _ = _forest(kind, "classification", max_depth=4)
    for tree in est.estimators_[:3]:
        bias, contrib = saabas_contributions(tree, X)
        assert contrib.shape == (X.shape[0], X.shape[1], 3)
        np.testing.assert_allclose(bias + contrib.sum(axis=1), tree.predict_proba(X), atol=1e-12)


# -- Prop. 1: in-sample MDI-oob is MDI, exactly, for Gini and variance --------------
@pytest.mark.parametrize("kind,task", list(FORESTS))
@pytest.mark.parametrize("bootstrap", [True, False])
def test_prop1_in_sample_equals_mdi(kind, task, bootstrap):
    est, X, y = _forest(kind, task, bootstrap=bootstrap,
                        criterion="gini" if task == "classification" else "squared_error")
    got = mdi_oob(est, X, y, samples="in_bag")
    want = forest_mdi(est)
    np.testing.assert_allclose(got.per_tree, want.per_tree, rtol=0, atol=1e-10)
    assert got.parameters["measure"] == "mdi_in_sample" and got.by_degree is None


@pytest.mark.parametrize("kind", ["rf", "et"])
@pytest.mark.parametrize("criterion", ["entropy", "log_loss"])
@pytest.mark.parametrize("bootstrap", [True, False])
def test_prop1_in_sample_equals_mdi_for_entropy_forests_in_bits(kind, criterion, bootstrap):
    # N(t) H(t) = -sum_{i in t} log2 mu_{y_i}(t): eq. 12 with the log score is the entropy MDI,
    # checked against scikit-learn's own node impurities (forest_mdi reads tree_.impurity).
    # Before issue 14 the Gini-unit sum was returned: 0.27 off on this forest.
    est, X, y = _forest(kind, "classification", bootstrap=bootstrap, criterion=criterion)
    got = mdi_oob(est, X, y, samples="in_bag")
    want = forest_mdi(est)
    assert want.units == got.units == "bits" and got.parameters["impurity"] == "entropy"
    np.testing.assert_allclose(got.per_tree, want.per_tree, rtol=0, atol=1e-10)


def _oracle_mdi_oob_log(est, X, y):
    """Eq. 14 with the log score, walking each out-of-bag row down each tree (bits)."""
    out = []
    for tree, oob in zip(est.estimators_, _oob_rows(est, len(X))):
        t, total = tree.tree_, np.zeros(X.shape[1])
        for i in oob:
            c = int(np.flatnonzero(est.classes_ == y[i])[0])
            node = 0
            while t.children_left[node] != -1:
                k = t.feature[node]
                child = (t.children_left[node] if np.float32(X[i, k]) <= t.threshold[node]
                         else t.children_right[node])
                total[k] += (np.log2(_node_value(t, child, True)[c])
                             - np.log2(_node_value(t, node, True)[c]))
                node = child
        out.append(total / len(oob))
    return np.array(out)


@pytest.mark.parametrize("kind", ["rf", "et"])
def test_mdi_oob_of_an_entropy_forest_is_the_log_score_oracle_in_bits(kind):
    # leaves of at least 25 rows on noisy labels: every node holds every class in and out of
    # the bag, so the log score is finite (even stumps can cut off a pure tail, giving -inf)
    est, X, y = _forest(kind, "classification", criterion="entropy", min_samples_leaf=25)
    with np.errstate(divide="raise"):
        want = _oracle_mdi_oob_log(est, X, y)
    got = mdi_oob(est, X, y)
    np.testing.assert_allclose(got.per_tree, want, rtol=0, atol=1e-12)
    assert got.units == "bits" and got.parameters["measure"] == "mdi_oob"


def test_mdi_oob_of_a_fully_grown_entropy_forest_is_refused_with_a_sentence():
    # pure leaves: an out-of-bag row of another class gets log2(0) = -inf
    est, X, y = _forest("rf", "classification", criterion="entropy")
    with np.errstate(divide="ignore", invalid="ignore"):
        assert np.isneginf(_oracle_mdi_oob_log(est, X, y)).any()
    with pytest.raises(ValueError, match="criterion='gini'") as e:
        mdi_oob(est, X, y)
    assert "\n" not in str(e.value) and str(e.value).endswith(".")
    gini, Xg, yg = _forest("rf", "classification", criterion="gini")
    r = mdi_oob(gini, Xg, yg)
    assert r.units == "gini" and r.parameters["impurity"] == "gini"


def test_the_refused_entropy_forest_raises_undefined_measure_naming_gini():
    # its own class, still a ValueError; exported by the measures package and the package
    import varimp_core
    from varimp_core.measures import UndefinedMeasure
    assert varimp_core.UndefinedMeasure is UndefinedMeasure and issubclass(UndefinedMeasure,
                                                                            ValueError)
    assert "UndefinedMeasure" in varimp_core.__all__
    est, X, y = _forest("rf", "classification", criterion="entropy")      # fully grown: -inf
    with pytest.raises(UndefinedMeasure, match="criterion='gini'") as e:
        mdi_oob(est, X, y)
    assert type(e.value) is UndefinedMeasure and str(e.value).endswith(".")
    # the in-bag rows give MDI itself, finite: not refused
    assert np.isfinite(mdi_oob(est, X, y, samples="in_bag").importances).all()
    # a plain bad input stays a plain ValueError, not an undefined measure
    with pytest.raises(ValueError) as bad:
        mdi_oob(est, X[:, :2], y)
    assert not isinstance(bad.value, UndefinedMeasure)


@pytest.mark.parametrize("criterion", ["gini", "entropy", "squared_error"])
def test_naive_in_bag_equals_mdi(criterion):
    # Impurities recomputed on the in-bag rows with their multiplicities are the
    # tree's own impurities, so the recomputed decreases are MDI for any criterion.
    task = "regression" if criterion == "squared_error" else "classification"
    est, X, y = _forest("rf", task, criterion=criterion)
    np.testing.assert_allclose(naive_oob(est, X, y, samples="in_bag").per_tree,
                               forest_mdi(est).per_tree, rtol=0, atol=1e-10)


def test_mdi_normalised_is_feature_importances():
    est, X, y = _forest("rf", "classification")
    np.testing.assert_allclose(mdi(est, normalised=True).importances, est.feature_importances_,
                               atol=1e-12)
    assert mdi(est).units == "gini"


# -- brute-force oracles ---------------------------------------------------------------
def _oob_rows(est, n):
    return [np.setdiff1d(np.arange(n), s) for s in est.estimators_samples_]


def _node_value(t, node, classification):
    v = t.value[node, 0].astype(float)
    return v / v.sum() if classification else v


def _oracle_mdi_oob(est, X, y):
    """Walk every out-of-bag row down every tree, one node at a time."""
    classification = hasattr(est, "classes_")
    p = X.shape[1]
    out = []
    for tree, oob in zip(est.estimators_, _oob_rows(est, len(X))):
        t, total = tree.tree_, np.zeros(p)
        for i in oob:
            yi = (est.classes_ == y[i]).astype(float) if classification else np.array([y[i]])
            node = 0
            while t.children_left[node] != -1:
                k = t.feature[node]
                child = (t.children_left[node] if np.float32(X[i, k]) <= t.threshold[node]
                         else t.children_right[node])
                delta = _node_value(t, child, classification) - _node_value(t, node, classification)
                total[k] += float(delta @ yi)
                node = child
        out.append(total / len(oob))
    return np.array(out)


def _impurity(ys, criterion):
    if len(ys) == 0:
        return 0.0
    if criterion == "squared_error":
        return float(np.var(ys))
    _, counts = np.unique(ys, return_counts=True)
    f = counts / counts.sum()
    return float(1 - (f ** 2).sum()) if criterion == "gini" else float(-(f * np.log2(f)).sum())


def _oracle_naive_oob(est, X, y):
    out = []
    for tree, oob in zip(est.estimators_, _oob_rows(est, len(X))):
        t, total = tree.tree_, np.zeros(X.shape[1])
        reach = tree.decision_path(X[oob]).toarray().astype(bool)
        for node in range(t.node_count):
            left, right = t.children_left[node], t.children_right[node]
            if left == -1:
                continue
            dec = sum(sign * reach[:, c].sum() * _impurity(y[oob][reach[:, c]], est.criterion)
                      for sign, c in ((1, node), (-1, left), (-1, right)))
            total[t.feature[node]] += dec / len(oob)
        out.append(total)
    return np.array(out)


@pytest.mark.parametrize("kind,task", list(FORESTS))
def test_mdi_oob_matches_brute_force(kind, task):
    est, X, y = _forest(kind, task, n=80)
    np.testing.assert_allclose(mdi_oob(est, X, y).per_tree, _oracle_mdi_oob(est, X, y),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("task,criterion", [("classification", "gini"),
                                            ("classification", "entropy"),
                                            ("regression", "squared_error")])
def test_naive_oob_matches_brute_force(task, criterion):
    est, X, y = _forest("rf", task, criterion=criterion, n=80)
    np.testing.assert_allclose(naive_oob(est, X, y).per_tree, _oracle_naive_oob(est, X, y),
                               rtol=0, atol=1e-10)


def test_permuted_descent_matches_apply():
    est, X, _ = _forest("rf", "classification", n=120)
    X32 = X.astype(np.float32)
    rng = np.random.default_rng(3)
    for tree in est.estimators_[:3]:
        np.testing.assert_array_equal(_oob.traverse(tree.tree_, X32)[0], tree.apply(X32))
        feats = np.array([0, 2, 4])
        perms = np.array([rng.permutation(len(X)) for _ in feats])
        want = []
        for k, perm in zip(feats, perms):
            Xp = X32.copy()
            Xp[:, k] = X32[perm, k]
            want.append(tree.apply(Xp))
        np.testing.assert_array_equal(_oob.traverse(tree.tree_, X32, feats, perms), want)
        np.testing.assert_array_equal(_oob._apply_permuted(tree, X32, feats, perms), want)


def test_mda_oob_matches_brute_force():
    est, X, y = _forest("rf", "regression", n=100)
    res = mda_oob(est, X, y, random_state=5)
    rng = np.random.default_rng(5)   # same stream: one permutation per used feature, in order
    for s, (tree, oob) in enumerate(zip(est.estimators_, _oob_rows(est, len(X)))):
        Xo, yo = X[oob], y[oob]
        used = np.unique(tree.tree_.feature[tree.tree_.children_left >= 0])
        perms = rng.permuted(np.tile(np.arange(len(oob)), (used.size, 1)), axis=1)
        base = np.mean((tree.predict(Xo) - yo) ** 2)
        want = np.zeros(X.shape[1])
        for k, perm in zip(used, perms):
            Xp = Xo.copy()
            Xp[:, k] = Xo[perm, k]
            want[k] = np.mean((tree.predict(Xp) - yo) ** 2) - base
        np.testing.assert_allclose(res.per_tree[s], want, rtol=1e-6, atol=1e-9)


def test_mda_holdout_is_sklearn_permutation_importance():
    for task in ("classification", "regression"):
        est, X, y = _forest("rf", task, n=200)
        Xt, yt = _data(task, n=80, seed=9)
        got = mda_holdout(est, Xt, yt, n_repeats=3, random_state=2)
        want = permutation_importance(est, Xt, yt, n_repeats=3, random_state=2)
        np.testing.assert_array_equal(got.per_tree, want.importances.T)
        np.testing.assert_array_equal(got.importances, want.importances_mean)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_mda_ranks_the_signal_first(task):
    # y = x1 (or its sign) and x2 is noise: permuting x1 destroys the prediction.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    y = X[:, 0] if task == "regression" else (X[:, 0] > 0).astype(int)
    res = compute_measures(X, y, task=task, measures=("mda_holdout", "mda_oob"), n_estimators=30,
                           max_features=None)
    for r in res.values():
        assert np.argmax(r.importances) == 0
        assert r.importances[0] > 10 * abs(r.importances[1])


def test_ranger_noise_feature_is_zero_on_average():
    # A noisy feature and its shadow are exchangeable (both independent of
    # everything else, same marginal), so E[MDI(x2) - MDI(shadow x2)] = 0.
    # Repetitions on fresh data are independent: compare the mean to its
    # Monte Carlo standard error.
    values, signal = [], []
    for seed in range(24):
        rng = np.random.default_rng(100 + seed)
        X = rng.normal(size=(120, 2))
        y = X[:, 0] + rng.normal(size=120)
        r = impurity_corrected(X, y, task="regression", n_estimators=20, max_features=2,
                               min_samples_leaf=3, random_state=seed)
        values.append(r.importances[1])
        signal.append(r.importances[0])
    values = np.array(values)
    sem = values.std(ddof=1) / np.sqrt(values.size)
    assert abs(values.mean()) < 3.5 * sem
    assert np.mean(signal) > 10 * sem


# -- compute_measures and the tidy frame ------------------------------------------------
def test_compute_measures_all_and_frame():
    X, y = _data("classification", n=120)
    frame_in = pd.DataFrame(X, columns=[f"v{j}" for j in range(5)])
    calls = []
    res = compute_measures(frame_in, y, measures=MEASURES, n_estimators=6,
                           progress=lambda d, t: calls.append((d, t)))
    assert list(res) == list(MEASURES)
    assert calls[-1][0] == calls[-1][1] and len(calls) == calls[-1][1]
    for name, r in res.items():
        assert isinstance(r, ImportanceResult)
        assert r.variables == tuple(frame_in.columns) and r.parameters["measure"] == name
        assert r.per_tree is not None and r.importances_std is not None
        assert ImportanceResult.from_json(r.to_json()).parameters["measure"] == name
    np.testing.assert_allclose(res["mdi_in_sample"].importances, res["mdi"].importances, atol=1e-10)
    df = measures_frame(res)
    assert list(df.columns) == ["measure", "variable", "importance", "importance_std",
                                "importance_sem", "rank", "units"]
    assert len(df) == len(MEASURES) * 5
    assert set(df.groupby("measure")["rank"].min()) == {1}
    assert set(DEFAULT_MEASURES) <= set(MEASURES)


# -- bad input: always a ValueError with a sentence --------------------------------------
def _sentence(msg):
    return msg.endswith(".") and len(msg.split()) >= 5


def _unfitted():
    return RandomForestClassifier()


def _bad_cases():
    X, y = _data("classification", n=60)
    yr = _data("regression", n=60)[1]
    est = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    no_boot = RandomForestClassifier(n_estimators=3, bootstrap=False).fit(X, y)
    mae = RandomForestRegressor(n_estimators=2, criterion="absolute_error").fit(X, yr)
    Xnan = X.copy()
    Xnan[3, 1] = np.nan
    Xconst = X.copy()
    Xconst[:, 2] = 1.0
    return [
        (lambda: compute_measures(X, yr + 0.5), "looks like a regression target"),
        (lambda: compute_measures(Xconst, y), "'x3' is constant"),
        (lambda: compute_measures(X, y, n_estimators=1), "at least 2 trees"),
        (lambda: compute_measures(X, y, bootstrap=False, measures=("mdi_oob",)),
         "MDI-oob needs out-of-bag samples; turn bootstrap on"),
        (lambda: mdi_oob(no_boot, X, y), "MDI-oob needs out-of-bag samples; turn bootstrap on"),
        (lambda: naive_oob(no_boot, X, y), "needs out-of-bag samples"),
        (lambda: mda_oob(no_boot, X, y), "needs out-of-bag samples"),
        (lambda: compute_measures(Xnan, y), "NaN"),
        (lambda: compute_measures(X, np.where(np.arange(60) == 4, np.nan, yr), task="regression"),
         "NaN"),
        (lambda: compute_measures(X, y, measures=("shap",)), "Unknown measure"),
        (lambda: compute_measures(X, y, kind="gbm"), "kind="),
        (lambda: compute_measures(X, y, test_size=1.5), "test_size"),
        (lambda: compute_measures(X, y, max_features="half"), "max_features"),
        (lambda: mdi_oob(est, X[:50], y[:50]), "fitted on"),
        (lambda: mdi_oob(est, X[:, :3], y), "columns"),
        (lambda: mdi_oob(est, X, y + 10), "not fitted on"),
        (lambda: mdi_oob(est, X, y, samples="all"), "samples="),
        (lambda: mdi_oob(object(), X, y), "RandomForest or ExtraTrees"),
        (lambda: mdi_oob(_unfitted(), X, y), "fit"),
        (lambda: naive_oob(mae, X, yr), "supports the criteria"),
        (lambda: saabas_contributions(DecisionTreeClassifier(), X), "fitted"),
        (lambda: measures_frame({}), "non-empty"),
    ]


def test_bad_inputs_raise_sentences():
    for call, fragment in _bad_cases():
        with pytest.raises(ValueError) as info:
            call()
        msg = str(info.value)
        assert fragment in msg, msg
        assert _sentence(msg), msg
