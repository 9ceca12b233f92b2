"""Masking: how importances move with K (and with the depth), as tidy tables.

At K=1 (totally randomized trees) the infinite-forest importance of every
variable is Eqn 3 of Louppe et al. (2013): every conditioning set B counts,
irrelevant variables get zero and do not change the others (Theorems 3 and 5).
For K > 1 the best of K drawn variables wins each node, so the strong
variables are pulled to the top of the trees and the others only appear under
them: a variable can be *masked* by a better one (section 5.3), and the
importances start to depend on the number of irrelevant variables (which
dilute the K draws and so damp the masking).  Theorem 2 (the importances of
fully grown trees sum to :math:`I(X_1,\\dots,X_p;Y)`) holds at every K.

The functions here return long tables ready for plotting and for CSV export:

* :func:`importance_vs_k` -- exact importances for each K, one lattice for all;
* :func:`importance_vs_depth` -- exact importances for each depth limit D;
* :func:`sampled_vs_k` -- finite forests (mean and standard error over trees);
* :func:`importance_change` -- ``Imp - Imp_ref`` against the first K or depth;
* :func:`masking_curves` -- the exact table along K or depth as a
  :class:`MaskingCurves` result (``to_dict``/``from_dict``), what the Masking page caches;
* :func:`~varimp_core.studies.masking_copy.add_noisy_copy` -- a table transform adding a
  noisy copy of a variable, the textbook way to watch one variable mask another.

The table checks, ranks and table builder live in :mod:`varimp_core.studies.masking_tables`
(:func:`~varimp_core.studies.masking_tables.rank_importances`) and the noisy copy in
:mod:`varimp_core.studies.masking_copy`.

References
----------
.. [1] G. Louppe, L. Wehenkel, A. Sutera and P. Geurts, "Understanding variable
   importances in forests of randomized trees", NIPS 2013: Table 2, section 5.3.
.. [2] P. Geurts, "Random forests variable importances", slides 2016: masking,
   K > 1 and irrelevant variables, pruning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from varimp_core.studies.masking_tables import check_depths, check_ks, check_table, long_frame
from varimp_core.exact.recursion import exact_importances_path
from varimp_core.forests.multiway import grow_forest
from varimp_core.exact.splitting import validate_max_features, validate_semantics
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.eqn3 import validate_max_depth
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = [
    "MaskingCurves",
    "masking_curves",
    "importance_vs_k",
    "importance_vs_depth",
    "binary_vs_k",
    "BINARY_CHOICES",
    "sampled_vs_k",
    "importance_change",
    "grid_column",
]


#: The methods of :func:`masking_curves`: the multiway lattice, then scikit-learn's binary forests.
BINARY_CHOICES = ("exact", "exact-et", "exact-rf")


# -- changes ---------------------------------------------------------------------
def importance_change(df: pd.DataFrame, *, x: str | None = None, reference=None) -> pd.DataFrame:
    """Add the change of each importance from a reference K (or depth).

    Parameters
    ----------
    df : DataFrame
        Output of :func:`importance_vs_k` or :func:`importance_vs_depth`.
    x : {"K", "depth"}, optional
        The varying column; default: whichever of the two ``df`` has.
    reference : int, optional
        Value of ``x`` to compare against; default its smallest value (K=1:
        the Eqn 3 importances of totally randomized trees).

    Returns
    -------
    DataFrame
        ``df`` with ``reference_importance`` (the importance at ``reference``)
        and ``change = importance - reference_importance``, in bits.
    """
    x = grid_column(df, x)
    ref = df[x].min() if reference is None else reference
    base = df.loc[df[x] == ref].set_index("variable")["importance"]
    if base.empty:
        raise ValueError(f"There is no {x} = {reference} in the table to compare against.")
    out = df.copy()
    out["reference_importance"] = out["variable"].map(base).astype(float)
    out["change"] = out["importance"] - out["reference_importance"]
    out.attrs = dict(df.attrs, reference=int(ref))
    return out


def grid_column(df: pd.DataFrame, x: str | None) -> str:
    """The varying column (``x``, else ``"K"`` or ``"depth"``) of a masking table, checked."""
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"Expected a DataFrame from importance_vs_k, importance_vs_depth or "
                         f"sampled_vs_k, got {type(df).__name__}.")
    missing = [c for c in ("variable", "importance") if c not in df.columns]
    if missing:
        raise ValueError(f"The table has no column {missing[0]!r}; pass a table from "
                         "importance_vs_k, importance_vs_depth or sampled_vs_k.")
    if x is not None:
        if x not in df.columns:
            raise ValueError(f"The table has no column {x!r}; its columns are {list(df.columns)}.")
        return x
    for name in ("K", "depth"):
        if name in df.columns:
            return name
    raise ValueError("The table needs a 'K' or a 'depth' column.")


# -- exact -----------------------------------------------------------------------
def importance_vs_k(table: DiscreteTable, ks: Iterable[int] | None = None, *,
                    max_depth: int | None = None, k_semantics: str = "id3",
                    criterion: str = "entropy") -> pd.DataFrame:
    """Exact infinite-forest importances of every variable for several K.

    Parameters
    ----------
    table : DiscreteTable
        Exact distribution (or a sample: then the infinite forest grown on it).
    ks : iterable of int, optional
        Values of K (``max_features``), each in 1..p; default 1..p.
    max_depth : int, optional
        Depth limit D of every tree; None grows them fully.
    k_semantics : {"id3", "sklearn"}, default="id3"
        How the K candidates are drawn (see :mod:`varimp_core.exact.splitting`):
        ``"id3"`` reproduces Table 2 of Louppe et al. (2013).
    criterion : {"entropy", "gini"}, default="entropy"

    Returns
    -------
    DataFrame
        One row per (variable, K), variables in table order within each K:
        ``variable`` (str), ``K`` (int), ``importance`` (float, bits for
        entropy) and ``rank`` (float, 1 = most important within that K, ties
        averaged).  ``attrs`` holds ``information`` (:math:`I(X;Y)`),
        ``exact``, ``variables``, ``k_semantics``, ``max_depth``.

    See Also
    --------
    varimp_core.exact.recursion.exact_importances_path : the recursion; one lattice for all K.
    sampled_vs_k : the same with finite forests.

    Notes
    -----
    At K=1 this is Eqn 3 (Theorem 1),

    .. math::

        \\mathrm{Imp}(X_m) = \\sum_{k=0}^{p-1} \\frac{1}{C_p^k (p-k)}
            \\sum_{B \\in \\mathcal{P}_k(V^{-m})} I(X_m; Y \\mid B),

    and for fully grown trees :math:`\\sum_m \\mathrm{Imp}(X_m) = I(X;Y)` at
    every K (Theorem 2).

    Examples
    --------
    >>> from varimp_core.problems.registry import get_problem
    >>> df = importance_vs_k(get_problem("led").exact_table(), ks=[1, 7])
    >>> df[df.K == 7].sort_values("rank").variable.tolist()[:2]
    ['X5', 'X2']
    """
    table = check_table(table)
    validate_semantics(k_semantics)
    ks = check_ks(ks, table.n_features)
    validate_max_depth(max_depth, table.n_features)
    results = exact_importances_path(table, max_features=ks, max_depth=max_depth,
                                     k_semantics=k_semantics, criterion=criterion)
    df = long_frame(table.variables, ks, np.vstack([r.importances for r in results]), "K")
    df.attrs = {"information": results[0].information, "exact": bool(table.exact),
                "variables": list(table.variables), "k_semantics": k_semantics,
                "max_depth": max_depth, "units": results[0].units}
    return df


def importance_vs_depth(table: DiscreteTable, depths: Iterable[int] | None = None, *,
                        max_features: int = 1, k_semantics: str = "id3",
                        criterion: str = "entropy") -> pd.DataFrame:
    """Exact infinite-forest importances of every variable for several depth limits.

    Parameters
    ----------
    table : DiscreteTable
    depths : iterable of int, optional
        Depth limits D, each at least 1 (values above p mean fully grown);
        default 1..p.
    max_features : int, default=1
        K of every tree.
    k_semantics : {"id3", "sklearn"}, default="id3"
    criterion : {"entropy", "gini"}, default="entropy"

    Returns
    -------
    DataFrame
        One row per (variable, depth): ``variable``, ``depth`` (int),
        ``importance``, ``rank`` (1 = most important within that depth).
        ``attrs`` as in :func:`importance_vs_k`, with ``max_features``.

    Notes
    -----
    A depth limit only stops the recursion: the nodes above depth D, and
    which variable wins each of them, are the same as in the fully grown
    trees.  So the importance at depth D is the part of the full-depth
    importance that comes from nodes at depths 0..D-1,

    .. math::

        \\mathrm{Imp}^{D}(X_m) = \\sum_{k=0}^{D-1} \\mathrm{Imp}_k(X_m),

    computed here from one run of the exact recursion (its ``by_degree``
    columns) instead of one run per depth.  At K=1 this is Proposition 6 of
    Louppe et al. (2013): pruned totally randomized trees keep the first D
    terms of Eqn 3.  Below full depth Theorem 2 no longer holds, and the
    importances depend on irrelevant variables even at K=1 (Geurts 2016).

    Examples
    --------
    >>> from varimp_core.problems.registry import get_problem
    >>> df = importance_vs_depth(get_problem("xor").exact_table())
    >>> df.importance.round(3).tolist()  # depth 1: XOR bits are useless alone
    [0.0, 0.0, 0.5, 0.5]
    """
    table = check_table(table)
    validate_semantics(k_semantics)
    p = table.n_features
    k = validate_max_features(max_features, p)
    depths = check_depths(depths, p)
    result = exact_importances_path(table, max_features=[k], max_depth=max(depths),
                                    k_semantics=k_semantics, criterion=criterion)[0]
    cumulative = np.cumsum(result.by_degree, axis=1)          # (p, p): depth d -> column d-1
    values = np.vstack([cumulative[:, d - 1] for d in depths])
    df = long_frame(table.variables, depths, values, "depth")
    df.attrs = {"information": result.information, "exact": bool(table.exact),
                "variables": list(table.variables), "k_semantics": k_semantics,
                "max_features": k, "units": result.units}
    return df


# -- sampled ---------------------------------------------------------------------
def sampled_vs_k(table: DiscreteTable, ks: Iterable[int] | None = None, *,
                 n_estimators: int = 100, random_state: int = 0,
                 max_depth: int | None = None, k_semantics: str = "id3",
                 bootstrap: bool = False, criterion: str = "entropy",
                 progress: Callable | None = None) -> pd.DataFrame:
    """Importances of finite forests for several K: mean and standard error over trees.

    Parameters
    ----------
    table : DiscreteTable
        The trees are grown on its rows with their weights (for an exact
        table: on the distribution itself, as in Table 2 of Louppe et al.).
    ks : iterable of int, optional
        Values of K; default 1..p.
    n_estimators : int, default=100
        Trees per K.
    random_state : int, default=0
        Seed; the forest of each K gets its own stream derived from
        ``(random_state, K)``, so adding a K does not change the others.
    max_depth : int, optional
    k_semantics : {"id3", "sklearn"}, default="id3"
    bootstrap : bool, default=False
    criterion : {"entropy", "gini"}, default="entropy"
    progress : callable, optional
        ``progress(done, total, text)`` with ``total = n_estimators * len(ks)``.

    Returns
    -------
    DataFrame
        One row per (variable, K): ``variable``, ``K``, ``importance`` (mean
        over trees), ``std`` (over trees), ``se`` (``std / sqrt(n_estimators)``,
        0 for a single tree), ``n_estimators`` and ``rank`` (of the means).

    See Also
    --------
    varimp_core.forests.multiway.grow_forest : one forest.
    importance_vs_k : the infinite-forest values these converge to.
    """
    table = check_table(table)
    validate_semantics(k_semantics)
    ks = check_ks(ks, table.n_features)
    if isinstance(n_estimators, bool) or not isinstance(n_estimators, (int, np.integer)) \
            or n_estimators < 1:
        raise ValueError(f"The number of trees must be a positive whole number, got "
                         f"{n_estimators!r}.")
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)) \
            or random_state < 0:
        raise ValueError(f"The seed must be a non-negative whole number, got {random_state!r}.")
    n = int(n_estimators)
    total = n * len(ks)
    means, stds = [], []
    for i, k in enumerate(ks):
        seed = int(np.random.SeedSequence([int(random_state), int(k)]).generate_state(1)[0])
        inner = None
        if progress is not None:
            def inner(done, _total, _i=i, _k=k):
                progress(_i * n + done, total, f"K = {_k}: {int(done)} of {n} trees")
        r = grow_forest(table, n_estimators=n, max_features=k, max_depth=max_depth,
                        bootstrap=bootstrap, k_semantics=k_semantics, criterion=criterion,
                        random_state=seed, progress=inner)
        means.append(r.importances)
        stds.append(r.importances_std if r.importances_std is not None
                    else np.zeros(table.n_features))
    std = np.vstack(stds)
    df = long_frame(table.variables, ks, np.vstack(means), "K",
                extra={"std": std, "se": std / math.sqrt(n)})
    df.insert(df.columns.get_loc("se") + 1, "n_estimators", n)
    df.attrs = {"exact": False, "variables": list(table.variables), "k_semantics": k_semantics,
                "max_depth": max_depth, "random_state": int(random_state)}
    return df


# -- the exact curves as one result ------------------------------------------------------------
@dataclass(frozen=True)
class MaskingCurves:
    """Exact importances of every variable along K or along the depth limit.

    Attributes
    ----------
    frame : DataFrame
        :func:`importance_vs_k` or :func:`importance_vs_depth` of the table.
    x : {"K", "depth"}
        The axis: the column of ``frame`` that varies.
    variables : tuple of str
        The table's inputs, in order.
    information : float
        :math:`I(X_1,\\dots,X_p;Y)` in bits, what fully grown trees' importances sum to
        (Theorem 2 of Louppe et al. 2013).
    copy_name : str or None
        The name of a noisy copy among the variables (``"X5'"``), else None.
    """

    frame: pd.DataFrame
    x: str
    variables: tuple[str, ...]
    information: float
    copy_name: str | None = None

    def to_dict(self) -> dict:
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "MaskingCurves":
        return dataclass_from_dict(cls, d)


def binary_vs_k(data, ks: Iterable[int] | None = None, *, method: str = "exact-et",
                max_depth: int | None = None, criterion: str = "entropy",
                progress: Callable | None = None) -> pd.DataFrame:
    """Exact infinite-forest importances of scikit-learn's binary forests for several K.

    One run of :func:`~varimp_core.exact.binary.exact_binary_importances` per K
    (``RandomForestClassifier(bootstrap=False)`` for ``exact-rf``,
    ``ExtraTreesClassifier`` for ``exact-et``; K read with scikit-learn's semantics),
    on numeric rows or on a table (its codes as numbers).  Every K is checked against
    the node limit before any K is computed, and a refusal raises its sentence.

    Parameters
    ----------
    data : PreparedData or DiscreteTable
    ks : iterable of int, optional
        Values of K; default 1..p.
    method : {"exact-rf", "exact-et"}, default="exact-et"
    max_depth : int, optional
    criterion : {"entropy", "gini"}, default="entropy"
    progress : callable, optional
        ``progress(done, total, text)`` with ``total = len(ks)``.

    Returns
    -------
    DataFrame
        As :func:`importance_vs_k`; ``attrs["information"]`` is the plug-in
        :math:`I(X;Y)` of the rows, what fully grown trees sum to.
    """
    from varimp_core.exact.binary import (BINARY_METHODS, binary_inputs,
                                          binary_refusal_sentence, exact_binary_importances,
                                          plugin_information)

    if method not in BINARY_METHODS:
        raise ValueError(f"method must be one of {', '.join(BINARY_METHODS)}, got {method!r}.")
    X, y, sw = binary_inputs(data)
    variables = tuple(data.variables)
    ks = check_ks(ks, len(variables))
    for k in ks:
        refusal = binary_refusal_sentence(X, y, method=method, max_features=k,
                                          max_depth=max_depth, sample_weight=sw, n_probes=400)
        if refusal is not None:
            raise ValueError(refusal)
    values = []
    for i, k in enumerate(ks):
        if progress is not None:
            progress(i, len(ks), f"{method}: K = {k} ({i + 1} of {len(ks)})")
        values.append(exact_binary_importances(
            X, y, method=method, max_features=k, max_depth=max_depth, criterion=criterion,
            sample_weight=sw, variables=variables).importances)
    df = long_frame(variables, ks, np.vstack(values), "K")
    df.attrs = {"information": plugin_information(X, y, criterion=criterion, sample_weight=sw),
                "exact": True, "variables": list(variables), "k_semantics": "sklearn",
                "max_depth": max_depth, "units": "bits" if criterion == "entropy" else "gini",
                "method": method}
    return df


def masking_curves(table, *, x: str = "K", max_depth: int | None = None,
                   max_features: int = 1, k_semantics: str = "id3",
                   copy_name: str | None = None, method: str = "exact",
                   progress: Callable | None = None) -> MaskingCurves:
    """Exact importances of every variable for every K (at ``max_depth``) or every depth
    (at K = ``max_features``), as one result.

    ``method`` ``"exact"`` is the multiway lattice on a DiscreteTable; ``"exact-rf"`` and
    ``"exact-et"`` are scikit-learn's binary forests (:func:`binary_vs_k`, K axis only,
    on a table or on numeric prepared data), which report ``progress`` per K.

    Examples
    --------
    >>> from varimp_core.problems.registry import get_problem
    >>> c = masking_curves(get_problem("xor").exact_table())
    >>> c.x, c.variables, round(c.information, 12)
    ('K', ('X1', 'X2'), 1.0)
    """
    if progress is not None:
        progress(0, 1, f"Exact recursion over {len(table.variables)} variables\u2026")
    if method != "exact":
        if x != "K":
            raise ValueError(f"The {method} curves are drawn against K; switch the view to K.")
        df = binary_vs_k(table, method=method, max_depth=max_depth, progress=progress)
    elif not isinstance(table, DiscreteTable):
        raise ValueError("These inputs are continuous: choose exact-rf or exact-et, whose "
                         "binary splits take numbers as they are.")
    elif x == "K":
        df = importance_vs_k(table, max_depth=max_depth, k_semantics=k_semantics)
    elif x == "depth":
        df = importance_vs_depth(table, max_features=max_features, k_semantics=k_semantics)
    else:
        raise ValueError(f"The axis is 'K' or 'depth', not {x!r}.")
    if progress is not None:
        progress(1, 1, "")
    return MaskingCurves(df, x, tuple(table.variables), float(df.attrs["information"]),
                         copy_name)
