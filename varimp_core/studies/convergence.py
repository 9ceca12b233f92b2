"""How many trees do I need?  A sampled forest against the exact value it converges to.

With bootstrap off, the trees of a forest are i.i.d. given the training table,
so the forest's mean of per-tree MDI converges to the expected MDI of one
random tree: the multiway ``exact`` method for varimp's ``forest``, and the
binary exact methods of :mod:`varimp_core.exact.binary` for scikit-learn's
forests (``sklearn-rf`` without bootstrap converges to ``exact-rf``,
``sklearn-et`` without bootstrap to ``exact-et``).  This module picks that
reference, says in a sentence when it cannot be afforded, and gives the
distance from the first T trees' mean to it for every T.

The curve costs no extra trees: the forest of T trees is the first T trees of
the forest of ``n_estimators`` trees (each tree gets its own seed), so the
cumulative means of ``per_tree`` are the importances of every smaller forest.
"""

from __future__ import annotations

from math import pi, sqrt
from typing import Any, Mapping

import numpy as np
import pandas as pd

from varimp_core.exact.binary import binary_inputs, binary_refusal_sentence, binary_size_hint
from varimp_core.result import ImportanceResult

__all__ = ["CURVE_CAPTION", "BINARY_LIMITS", "binary_limit", "binary_refusal", "binary_size",
           "exact_reference",
           "convergence_curve", "convergence_note", "expected_error_curve"]

#: What the Importances page's convergence card shows, in one paragraph.
CURVE_CAPTION = (
    "For a sampled forest without bootstrap, and data where the exact value it converges to "
    "can be afforded: the distance from the mean of its first T trees to that exact value, "
    "for every T up to the number of trees. The forest of T trees is the first T trees of this "
    "one, so the curve costs no extra trees (cumulative means of the per-tree importances). "
    "The dashed line is the 1/\u221aT law of the central limit theorem: "
    "\u221a(2/\u03c0) \u03a3\u2c7c \u03c3\u2c7c / \u221aT, with \u03c3\u2c7c the "
    "per-tree spread of variable j around its exact value. For the exact methods, and under "
    "a sampled forest whose exact limit is drawn, the solid green lines are that law with the "
    "exact per-tree spread (the exact covariance of one tree's importances), and the dotted "
    "vertical line the number of trees from which the forest ranks the variables in the "
    "exact order with probability at least 95%.")

#: The exact method each scikit-learn forest converges to when it does not bootstrap.
BINARY_LIMITS = {"sklearn-rf": "exact-rf", "sklearn-et": "exact-et"}


def binary_limit(method: str, bootstrap: bool | None) -> str | None:
    """``"exact-rf"`` / ``"exact-et"`` for scikit-learn's forests without bootstrap, else None.

    A bootstrap sample changes the table every tree learns from, so a forest
    that bootstraps does not converge to the exact value on the table.
    ``sklearn-et`` does not bootstrap by default, ``sklearn-rf`` does.
    """
    if method not in BINARY_LIMITS:
        return None
    on = (method == "sklearn-rf") if bootstrap is None else bool(bootstrap)
    return None if on else BINARY_LIMITS[method]


def binary_refusal(data, *, method: str, max_features: int, max_depth: int | None = None,
                   min_samples_leaf: int = 1, max_nodes: int | None = None,
                   n_probes: int = 400) -> str | None:
    """None when ``exact-rf`` / ``exact-et`` can be afforded on ``data``, else why not.

    The sentence is the core's own refusal,
    :func:`~varimp_core.exact.binary.binary_refusal_sentence` (the estimate of
    :func:`~varimp_core.exact.binary.estimate_binary_nodes`, a sample of rank
    boxes with no node solved, against ``max_nodes``).  It is a quick one
    (``n_probes`` boxes, a tenth of the default: about a second on
    scikit-learn's digits, 1,797 rows and 64 inputs, instead of ten), to
    decide before any work: the exact methods estimate again with 4,000
    probes before they start and refuse the same way, and ``exact-rf``'s
    recursion stops past ``max_nodes`` whatever the estimate said.

    Parameters
    ----------
    data : PreparedData or DiscreteTable
    method : {"exact-rf", "exact-et"}
    max_features, max_depth, min_samples_leaf
        As in :func:`~varimp_core.exact.binary.exact_rf_importances`.
    max_nodes : int, optional
        Default: the run's own limit (:func:`~varimp_core.exact.binary.node_limit`).
    n_probes : int, default=400

    Returns
    -------
    sentence : str or None
    """
    try:
        X, y, sw = binary_inputs(data)
    except ValueError as exc:
        return str(exc)
    return binary_refusal_sentence(X, y, method=method, max_features=max_features,
                                   max_depth=max_depth, min_samples_leaf=min_samples_leaf,
                                   sample_weight=sw, max_nodes=max_nodes, n_probes=n_probes)


def binary_size(data, *, max_nodes: int | None = None) -> dict:
    """What ``exact-rf`` and ``exact-et`` can afford on ``data``, before either is chosen:
    :func:`~varimp_core.exact.binary.binary_size_hint` of its numeric inputs, or
    ``{"refused": sentence}`` when the methods refuse the data whatever the settings
    (missing values, a one-class target).

    Parameters
    ----------
    data : PreparedData or DiscreteTable
    max_nodes : int, optional
        One limit for every run; default: each run's own.
    """
    try:
        X, y, sw = binary_inputs(data)
        return binary_size_hint(X, y, sample_weight=sw, max_nodes=max_nodes)
    except ValueError as exc:
        return {"refused": str(exc)}


def exact_reference(data, kwargs: Mapping[str, Any]) -> tuple[dict, str | None]:
    """Keyword arguments of the exact values drawn over a sampled method, and a note.

    scikit-learn's forests without bootstrap get their own limit
    (``exact-rf`` / ``exact-et``, same K, depth, impurity and
    ``min_samples_leaf``) when :func:`binary_refusal` accepts the data;
    otherwise, like every other sampled method, the multiway ``exact`` method
    (scikit-learn's forests read K with ``sklearn`` semantics), which they
    need not match, with the refusal as the note.

    Parameters
    ----------
    data : PreparedData, DiscreteTable, or a function of no argument returning one
        The training data; a function is called only when the binary limit applies.
    kwargs : mapping
        Keyword arguments of :func:`varimp_core.api.compute_importances` of the
        sampled method.

    Returns
    -------
    reference : dict
        Keyword arguments of :func:`~varimp_core.api.compute_importances`.
    note : str or None
    """
    method = kwargs["method"]
    common = {"max_features": kwargs["max_features"], "max_depth": kwargs.get("max_depth"),
              "criterion": kwargs.get("criterion", "entropy")}
    limit = binary_limit(method, kwargs.get("bootstrap"))
    note = None
    if limit is not None:
        leaf = int(kwargs.get("min_samples_leaf", 1))
        note = binary_refusal(data() if callable(data) else data, method=limit,
                              max_features=common["max_features"],
                              max_depth=common["max_depth"], min_samples_leaf=leaf)
        if note is None:  # min_samples_leaf only when set: the same key as the method's own
            return {"method": limit, **common,
                    **({"min_samples_leaf": leaf} if leaf != 1 else {})}, None
        note = f"No {limit} values are drawn: {note[0].lower()}{note[1:]}"
    semantics = "sklearn" if method in BINARY_LIMITS else kwargs.get("k_semantics", "sklearn")
    return {"method": "exact", **common, "k_semantics": semantics}, note


def _is_limit(result: ImportanceResult, exact: ImportanceResult) -> bool:
    """Does ``result``'s forest converge to ``exact`` as its trees grow in number?"""
    if result.parameters.get("bootstrap"):
        return False
    if result.method in BINARY_LIMITS:
        return exact.method == BINARY_LIMITS[result.method]
    return (result.method == "forest" and exact.method in ("exact", "eqn3")
            and exact.parameters.get("k_semantics", "id3")
            == result.parameters.get("k_semantics", "id3"))


def convergence_note(result: ImportanceResult, exact: ImportanceResult | None) -> str | None:
    """None when :func:`convergence_curve` applies to the pair, else the sentence why not."""
    if result.per_tree is None or exact is None:
        return ("The curve needs a sampled forest and the exact value it converges to; "
                "choose a sampled method on data where the exact value can be afforded.")
    if result.parameters.get("bootstrap"):
        return ("A forest that bootstraps does not converge to the exact value on this table "
                "(every tree sees another sample): turn Bootstrap off to see the curve.")
    if not _is_limit(result, exact):
        return (f"The {result.method} forest does not converge to the {exact.method} values "
                "drawn here, so no curve is drawn.")
    return None


def convergence_curve(result: ImportanceResult, exact: ImportanceResult,
                      points: int | None = None) -> pd.DataFrame:
    """Distance from the mean of the first T trees to the exact value, for every T.

    .. math::

        \\bar I_j(T) = \\frac1T \\sum_{t \\le T} I_{t,j}, \\qquad
        L_1(T) = \\sum_j |\\bar I_j(T) - I_j^*|, \\qquad
        \\max(T) = \\max_j |\\bar I_j(T) - I_j^*|,

    with :math:`I_{t,j}` the per-tree importances (``result.per_tree``) and
    :math:`I^*` the exact value.  The trees are i.i.d. with mean :math:`I^*`,
    so by the central limit theorem :math:`\\bar I_j(T) - I_j^*` is about
    :math:`N(0, \\sigma_j^2 / T)` and

    .. math::

        E[L_1(T)] \\approx \\sqrt{2/\\pi}\\, \\sum_j \\sigma_j / \\sqrt{T},
        \\qquad \\sigma_j^2 = \\frac1{n} \\sum_t (I_{t,j} - I^*_j)^2,

    the ``reference`` column (the 1/sqrt(T) law; :math:`\\sigma_j` is measured
    around the exact value, which is the trees' mean).

    Parameters
    ----------
    result : ImportanceResult
        A sampled forest with ``per_tree`` of shape (n_estimators, p).
    exact : ImportanceResult
        The value the forest converges to, same variables.
    points : int, optional
        None keeps every T; otherwise at most about ``points`` values of T,
        evenly spaced on a log scale, always with T = 1 and T = n_estimators
        (a figure needs no more).

    Returns
    -------
    curve : DataFrame
        One row per T kept (every T = 1..n_estimators by default): ``n_trees``,
        ``l1``, ``max_abs`` and ``reference``.

    Raises
    ------
    ValueError
        Without per-tree values, or with other variables than ``exact``.
    """
    if result.per_tree is None:
        raise ValueError("The curve needs the per-tree importances of a sampled forest.")
    if tuple(result.variables) != tuple(exact.variables):
        raise ValueError("The exact result must have the same variables as the forest.")
    per_tree = np.asarray(result.per_tree, dtype=float)
    target = np.asarray(exact.importances, dtype=float)
    T = np.arange(1, per_tree.shape[0] + 1)
    gap = np.abs(np.cumsum(per_tree, axis=0) / T[:, None] - target[None, :])
    sigma = np.sqrt(np.mean((per_tree - target[None, :]) ** 2, axis=0))
    curve = pd.DataFrame({"n_trees": T, "l1": gap.sum(axis=1), "max_abs": gap.max(axis=1),
                          "reference": sqrt(2 / pi) * sigma.sum() / np.sqrt(T)})
    if points is not None and len(T) > points:
        keep = np.unique(np.geomspace(1, len(T), max(2, int(points))).round().astype(int))
        curve = curve.iloc[keep - 1].reset_index(drop=True)
    return curve


def expected_error_curve(moments, max_trees: int, points: int = 200) -> pd.DataFrame:
    """Expected distance of a forest of T trees to the exact value, from the exact moments.

    A forest of T trees grown without bootstrap averages T i.i.d. trees, so
    :math:`\\bar I_j(T) - \\mu_j` is about :math:`N(0, \\Sigma_{jj}/T)`, and
    :math:`E|N(0, s^2)| = \\sqrt{2/\\pi}\\, s`:

    .. math::

        E\\,|\\bar I_j(T) - \\mu_j| \\approx \\sqrt{2/\\pi}\\,\\sigma_j/\\sqrt{T},
        \\qquad E[L_1(T)] \\approx \\sqrt{2/\\pi}\\,\\sum_j \\sigma_j/\\sqrt{T},

    with :math:`\\sigma_j^2 = \\Sigma_{jj}` the exact per-tree variance
    (:class:`~varimp_core.exact.moments.ImportanceMoments`).

    Parameters
    ----------
    moments : ImportanceMoments
    max_trees : int
        The largest T of the curve (at least 2).
    points : int, default=200
        About this many values of T, evenly spaced on a log scale from 1.

    Returns
    -------
    curve : DataFrame
        ``n_trees``, ``l1`` (the expected sum over variables) and ``max_abs``
        (the largest variable's expected error,
        :math:`\\sqrt{2/\\pi}\\,\\max_j \\sigma_j/\\sqrt T`).
    """
    T = np.unique(np.geomspace(1, max(int(max_trees), 2), max(2, int(points))).round()
                  .astype(np.int64))
    sigma = np.sqrt(moments.variances)
    scale = sqrt(2 / pi) / np.sqrt(T.astype(float))
    return pd.DataFrame({"n_trees": T, "l1": scale * sigma.sum(),
                         "max_abs": scale * float(sigma.max(initial=0.0))})
