"""Exact infinite forests of scikit-learn's binary trees, on a finite training table.

A forest of ``RandomForestClassifier(bootstrap=False, max_features=K)`` (method
``exact-rf``) or ``ExtraTreesClassifier(bootstrap=False, max_features=K)``
(method ``exact-et``) grown on a fixed table of N rows is an average of
i.i.d. random trees; as the number of trees grows its unnormalised MDI
converges to the expectation over one random tree.  This module computes that
expectation exactly (see ``docs/exact-binary.md`` for the derivation).

**Nodes.**  A node of a binary tree with axis-aligned splits holds the rows
of the table inside a box; it is determined by that row set.  Nodes reached by
different split sequences are merged (memoised on the row set and on how many
levels the depth limit still allows), and

.. math::

    E[\\mathrm{Imp} \\mid t] = \\sum_{(j, g)} P_t(j, g)\\,\\Big(
        \\tfrac{G_t(j, g)}{W}\\, e_j + E[\\mathrm{Imp} \\mid t_L(j,g)]
        + E[\\mathrm{Imp} \\mid t_R(j,g)]\\Big),

where (j, g) runs over the candidate splits of node t (feature j, gap g
between consecutive distinct values of j in t), :math:`P_t(j, g)` is the
probability that the randomized splitter chooses it,
:math:`G_t = W_t i(t) - W_{t_L} i(t_L) - W_{t_R} i(t_R)` its weighted
impurity decrease and W the total weight (so :math:`G_t / W = p(t)\\Delta i`,
scikit-learn's ``compute_feature_importances(normalize=False)`` term).
:math:`1 - \\sum P_t` is the probability that t is a leaf.

**Split law.**  Let m be the number of non-constant features in t (of p).
scikit-learn reads features in a uniformly random order until K were read and
at least one was non-constant; the number h of non-constant features
evaluated has the law :func:`~varimp_core.splitting.sklearn_draw_law`
(hypergeometric, mass at 0 moved to 1) and, given h, the evaluated set is
uniform among the :math:`\\binom{m}{h}` subsets.  Each evaluated feature l gets
a random score :math:`S_l` (the best splitter: its best gap, a constant; the
random splitter: gap g with probability
:math:`\\pi_{l,g} = (v_{g+1} - v_g)/(v_{\\max} - v_{\\min})`), or
:math:`-\\infty` when its gap leaves fewer than ``min_samples_leaf`` samples
on a side.  The best score wins; ties go to the feature read first, so each
tied one wins with probability 1/(number tied).  With
:math:`a_l = P(S_l < s)`, :math:`b_l = P(S_l = s)` for :math:`s = G_t(j,g)`
and :math:`1/(1+T) = \\int_0^1 z^T dz`,

.. math::

    P_t(j, g) = \\pi_{j,g} \\sum_{h=1}^{m} \\frac{q(h)}{\\binom{m}{h}}
        \\int_0^1 e_{h-1}\\big(\\{a_l + z\\, b_l\\}_{l \\ne j}\\big)\\, dz,

:math:`e_k` the elementary symmetric polynomial of degree k over the m-1
other non-constant features.  Without constant features and K <= m this is
:math:`\\pi_{j,g}\\binom{m}{K}^{-1}\\int_0^1 e_{K-1}(\\cdot)\\,dz`.

**scikit-learn details followed.**  Inputs are cast to float32 as
scikit-learn does; a node is a leaf when it is pure, holds fewer than
``2 * min_samples_leaf`` (or 2) samples, or sits at ``max_depth``; otherwise it
is split even when the best improvement is zero (``min_impurity_decrease=0``);
within one feature the best splitter keeps the first (lowest) of tied
thresholds; scores closer than ``1e-10 * W_t`` count as ties; rows with zero
weight are dropped; ``min_samples_leaf`` counts rows, the impurity uses weights.
The entropy criterion is in bits (scikit-learn's entropy uses log2).
"""

from __future__ import annotations

from math import comb, prod

import numpy as np

from varimp_core.measures.inputs import check_int
from varimp_core.result import ImportanceResult
from .splitting import sklearn_draw_law, validate_max_features

__all__ = ["BINARY_METHODS", "MAX_BINARY_NODES", "MAX_COMPILED_NODES", "exact_rf_importances",
           "exact_et_importances", "exact_binary_importances", "exact_binary_depth_profile",
           "estimate_binary_nodes", "binary_refusal_sentence", "binary_size_hint", "node_limit",
           "plugin_information", "split_win_probabilities", "binary_inputs"]

BINARY_METHODS = ("exact-rf", "exact-et")
#: Refuse when the estimated number of distinct nodes exceeds this.
MAX_BINARY_NODES = 300_000
#: The same for exact-et at K = 1, fully grown, on at most 64 distinct rows, which runs the
#: compiled recursion (:mod:`varimp_core.exact.binary_kernel`): at 3 to 5 us a node on one
#: core, 6 to 10 s of work, what 300,000 nodes cost the batched solver (20 to 80 us).  Its
#: node table holds at most 4 slots per node alive, twice that while it is rebuilt: 2**22
#: slots of 32 bytes and a 4-byte link (144 MB) on the largest table measured.
MAX_COMPILED_NODES = 2_000_000
#: scikit-learn's FEATURE_THRESHOLD: values closer than this are one value to its splitters.
FEATURE_THRESHOLD = 1e-7
TIE_FRACTION = 1e-10
_CRITERIA = ("entropy", "gini", "squared_error")
_NAMES = {"exact-rf": "RandomForest", "exact-et": "Extra-Trees"}


# ---------------------------------------------------------------------------
# validation and preparation
# ---------------------------------------------------------------------------


class PreparedBinary:
    """Distinct (x, y) rows of the training table with sample counts and weights."""

    def __init__(self, X, y, sample_weight, criterion, names=None):
        if criterion not in _CRITERIA:
            raise ValueError(f"criterion must be 'entropy', 'gini' or 'squared_error', got "
                             f"{criterion!r}.")
        try:
            Xa = np.asarray(X, dtype=float)
        except (TypeError, ValueError):
            raise ValueError("X must be numeric: code categorical inputs as numbers first "
                             "(scikit-learn sees them as ordinal codes).") from None
        if Xa.ndim != 2 or Xa.shape[0] < 1 or Xa.shape[1] < 1:
            raise ValueError(f"X has shape {Xa.shape}: it must be 2-D with at least one row "
                             "and one column.")
        if not np.all(np.isfinite(Xa)):
            raise ValueError(_missing_sentence(
                Xa, names if names is not None else
                _column_names(X, Xa.shape[1]) if Xa.ndim == 2 else None))
        ya = np.asarray(y)
        if ya.ndim == 2 and ya.shape[1] == 1:
            ya = ya[:, 0]
        if ya.ndim != 1 or ya.shape[0] != Xa.shape[0]:
            raise ValueError(f"y has shape {ya.shape}: it must be 1-D with one class label per "
                             f"row of X ({Xa.shape[0]} rows).")
        if _target_missing(ya).any():
            n_miss = int(_target_missing(ya).sum())
            raise ValueError(
                f"y has {n_miss:,} missing value{'s' if n_miss != 1 else ''} (NaN or None); "
                "scikit-learn refuses a missing target, so drop those rows first (loading a "
                "table does: rows without a target are left out).")
        if sample_weight is None:
            w = np.ones(Xa.shape[0])
        else:
            try:
                w = np.asarray(sample_weight, dtype=float).ravel()
            except (TypeError, ValueError):
                raise ValueError("sample_weight must be numeric.") from None
            if w.shape[0] != Xa.shape[0]:
                raise ValueError(f"sample_weight has {w.shape[0]} values for {Xa.shape[0]} rows.")
            if not np.all(np.isfinite(w)) or np.any(w < 0):
                raise ValueError("sample_weight must be finite and non-negative.")
        keep = w > 0
        if not keep.any():
            raise ValueError("Every row has zero weight: there is nothing to learn from.")
        # scikit-learn works on float32 inputs
        X32 = Xa.astype(np.float32).astype(float)
        if not np.all(np.isfinite(X32)):
            raise ValueError("X has values too large for float32, which scikit-learn uses.")
        X32, ya, w = X32[keep], ya[keep], w[keep]
        if criterion == "squared_error":
            try:
                ya = np.asarray(ya, dtype=float)
            except (TypeError, ValueError):
                raise ValueError("criterion='squared_error' needs a numeric target; use "
                                 "'entropy' or 'gini' for class labels.") from None
            if not np.all(np.isfinite(ya)):
                raise ValueError("y has infinite values, which scikit-learn refuses.")
        try:
            classes, ycode = np.unique(ya, return_inverse=True)
        except TypeError:
            raise ValueError("y mixes labels that cannot be sorted; use one type of label.") from None
        self.classes = classes
        self.n_features = X32.shape[1]
        self.criterion = criterion
        ranks, values = [], []
        for f in range(self.n_features):
            v, r = np.unique(X32[:, f], return_inverse=True)
            if v.size > 1 and np.min(np.diff(v)) <= FEATURE_THRESHOLD:
                raise ValueError(
                    f"Input column {f} has distinct values closer than {FEATURE_THRESHOLD:g}, "
                    "which scikit-learn's splitters treat as one value; round or rescale it.")
            ranks.append(r.ravel())
            values.append(v)
        R = np.stack(ranks, axis=1) if ranks else np.zeros((X32.shape[0], 0), int)
        key = np.concatenate([R, ycode.reshape(-1, 1)], axis=1)
        uniq, inv = np.unique(key, axis=0, return_inverse=True)
        inv = inv.ravel()
        self.ranks = uniq[:, :-1].astype(np.int64)          # (U, p)
        self.y = uniq[:, -1].astype(np.int64)               # (U,)
        self.count = np.bincount(inv, minlength=uniq.shape[0]).astype(float)
        self.weight = np.bincount(inv, weights=w, minlength=uniq.shape[0])
        self.values = values
        self.n_rows = int(keep.sum())
        self.n_classes = classes.size
        self.total_weight = float(self.weight.sum())
        self.n_distinct = [v.size for v in values]
        self.regression = criterion == "squared_error"
        if self.regression:     # scores tie within 1e-10 of W Var(Y), whatever Y's units
            yv = classes[self.y]
            mean = float(np.sum(self.weight * yv) / self.total_weight)
            var = float(np.sum(self.weight * (yv - mean) ** 2) / self.total_weight)
            self.tie_scale = var if var > 0 else 1.0
            self.mean = mean
        else:
            self.tie_scale = 1.0

    def stats(self) -> np.ndarray:
        """Per distinct row, what impurities are made of: class weights, or (w, w y, w y^2).

        Regression: y centred on its weighted mean, for fewer rounding errors in
        :math:`W \\mathrm{Var} = \\sum w y^2 - (\\sum w y)^2 / W`.
        """
        if self.regression:
            yc = self.classes[self.y] - self.mean
            return np.stack([self.weight, self.weight * yc, self.weight * yc * yc], axis=1)
        out = np.zeros((self.y.size, self.n_classes))
        out[np.arange(self.y.size), self.y] = self.weight
        return out


def _column_names(X, p):
    """Names of X's columns (a DataFrame's, else x1, x2, ...)."""
    if hasattr(X, "columns") and len(X.columns) == p:
        return [str(c) for c in X.columns]
    return [f"x{i + 1}" for i in range(p)]


def _missing_sentence(Xa, names=None) -> str:
    """Why the exact binary forests refuse a table with NaN or infinite inputs, naming columns."""
    p = Xa.shape[1] if Xa.ndim == 2 else 1
    names = list(names) if names is not None and len(names) == p else \
        [f"x{i + 1}" for i in range(p)]
    A = Xa.reshape(-1, p)
    nan_cols = [names[j] for j in range(p) if np.isnan(A[:, j]).any()]
    inf_cols = [names[j] for j in range(p) if np.isinf(A[:, j]).any()]
    parts = []
    if nan_cols:
        which = ", ".join(repr(c) for c in nan_cols)
        parts.append(
            f"Input column{'s' if len(nan_cols) > 1 else ''} {which} "
            f"{'have' if len(nan_cols) > 1 else 'has'} missing values (NaN); scikit-learn's "
            "forests split them natively (the missing rows go to the better side, or to a "
            "random side in Extra-Trees), which the exact binary forests do not model, so "
            "they refuse rather than compute a stand-in that disagrees with the library: "
            "drop or impute those rows or columns, or use sklearn-rf or sklearn-et")
    if inf_cols:
        which = ", ".join(repr(c) for c in inf_cols)
        parts.append(f"Input column{'s' if len(inf_cols) > 1 else ''} {which} "
                     f"{'hold' if len(inf_cols) > 1 else 'holds'} infinite values, which "
                     "scikit-learn refuses: drop or clip them")
    return ". ".join(parts) + "."


def _target_missing(ya) -> np.ndarray:
    """Which entries of a label array are missing (NaN or None)."""
    if ya.dtype.kind == "f":
        return np.isnan(ya)
    if ya.dtype.kind == "O":
        return np.array([v is None or (isinstance(v, float) and v != v) for v in ya], bool)
    return np.zeros(ya.shape, bool)


def weighted_node_impurity(c, criterion):
    """W * i(W) from class weights along the last axis (entropy in bits, or Gini).

    ``squared_error``: from (w, w y, w y^2) sums, :math:`W \\mathrm{Var}(y)`
    (not below 0: rounding).
    """
    if criterion == "squared_error":
        W, S1, S2 = c[..., 0], c[..., 1], c[..., 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(W > 0, np.maximum(S2 - S1 * S1 / np.where(W > 0, W, 1.0), 0.0), 0.0)
    W = c.sum(axis=-1)
    if criterion == "entropy":
        with np.errstate(divide="ignore", invalid="ignore"):
            cl = np.where(c > 0, c * np.log2(np.where(c > 0, c, 1.0)), 0.0)
            Wl = np.where(W > 0, W * np.log2(np.where(W > 0, W, 1.0)), 0.0)
        return Wl - cl.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(W > 0, W - (c * c).sum(axis=-1) / np.where(W > 0, W, 1.0), 0.0)


def plugin_information(X, y, *, criterion="entropy", sample_weight=None) -> float:
    """Plug-in :math:`I(X;Y)` of the training table, in the criterion's units.

    .. math::

        I = i(Y) - \\sum_x p(x)\\, i(Y \\mid X = x),

    with i the Shannon entropy in bits (``"entropy"``) or the Gini index
    (``"gini"``, the Gini analogue of the mutual information), p the weighted
    row frequencies and x the full input vector (as float32, like
    scikit-learn).  Fully grown trees (``min_samples_leaf=1``) have leaves
    that are pure or hold a single input vector, so their importances sum to it.
    """
    d = PreparedBinary(X, y, sample_weight, criterion)
    return _information(d)


def _information(d: PreparedBinary) -> float:
    onehot = d.stats()
    C = onehot.shape[1]
    root = weighted_node_impurity(onehot.sum(axis=0), d.criterion)
    _, g = np.unique(d.ranks, axis=0, return_inverse=True)
    g = g.ravel()
    groups = np.zeros((g.max() + 1, C))
    np.add.at(groups, g, onehot)
    return float((root - weighted_node_impurity(groups, d.criterion).sum()) / d.total_weight)


# ---------------------------------------------------------------------------
# the split law
# ---------------------------------------------------------------------------

def split_win_probabilities(scores, probs, n_total, max_features, tol=0.0):
    """P(candidate (j, g) is chosen) under scikit-learn's random feature order.

    Parameters
    ----------
    scores : list of ndarray
        For each of the m non-constant features l, the scores of its
        candidate gaps (``-inf`` for a gap that violates ``min_samples_leaf``).
    probs : list of ndarray
        Matching probabilities :math:`\\pi_{l,g}` (summing to 1 per feature;
        the best splitter gives one gap with probability 1).
    n_total : int
        p, constant features included (they use up draws).
    max_features : int
        K.
    tol : float
        Scores within ``tol`` are tied.

    Returns
    -------
    list of ndarray
        :math:`P(j, g)` per feature and gap:

        .. math::

            P(j, g) = \\pi_{j,g} \\sum_h \\frac{q(h)}{\\binom{m}{h}}
                \\int_0^1 e_{h-1}(\\{a_l + z b_l\\}_{l \\ne j})\\,dz

        with :math:`a_l = P(S_l < s_{j,g} - tol)`,
        :math:`b_l = P(|S_l - s_{j,g}| \\le tol)` and q the law of
        :func:`~varimp_core.splitting.sklearn_draw_law`.  Zero for ``-inf`` gaps.
    """
    m = len(scores)
    width = max(len(s) for s in scores)
    S = np.full((1, m, width), -np.inf)
    PI = np.zeros((1, m, width))
    for l, (s, pr) in enumerate(zip(scores, probs)):
        S[0, l, :len(s)] = s
        PI[0, l, :len(s)] = pr
    CW = _draw_weights(int(n_total), m, max_features)[m][None]
    P = _win_batch(S, PI, np.array([float(tol)]), CW)
    return [P[0, l, :len(s)] for l, s in enumerate(scores)]


def _draw_weights(n_total, width, max_features):
    """``cw[m, h - 1] = q_m(h) / C(m, h)`` for m = 0..width non-constant features (zero past m)."""
    cw = np.zeros((width + 1, width))
    for m in range(1, width + 1):
        q = sklearn_draw_law(n_total, m, int(min(max_features, n_total)))
        cw[m, :m] = [q[h] / comb(m, h) for h in range(1, m + 1)]
    return cw


def _mass_below(values, weights, queries, strict):
    """Per row r, :math:`\\sum_g w_{rg} [v_{rg} < q]` (``strict``) or ``<= q``, for every query q.

    One sort per row of the values together with the queries: in a stable
    sort, queries placed first stay before equal values (strict), queries
    placed last stay after them; the cumulative weight read at each query's
    place is the mass below it.  Arrays: values, weights (R, G); queries (R, Q).
    """
    R, G = values.shape
    Q = queries.shape[1]
    zero = np.zeros((R, Q))
    if strict:
        keys, w, at = np.concatenate([queries, values], 1), np.concatenate([zero, weights], 1), 0
    else:
        keys, w, at = np.concatenate([values, queries], 1), np.concatenate([weights, zero], 1), G
    order = np.argsort(keys, axis=1, kind="stable")
    cum = np.cumsum(np.take_along_axis(w, order, axis=1), axis=1)
    place = np.empty_like(order)
    np.put_along_axis(place, order, np.broadcast_to(np.arange(G + Q), order.shape), axis=1)
    return np.take_along_axis(cum, place[:, at:at + Q], axis=1)


def _win_batch(S, PI, tol, CW):
    """:func:`split_win_probabilities` for a batch of nodes at once.

    ``S``, ``PI`` of shape (B, m, G): scores and probabilities of each
    feature's candidate gaps (a constant feature has all its ``PI`` zero, so
    its factor :math:`1 + u(a_l + z b_l)` is 1 and it drops out of the
    polynomial); ``tol`` (B,); ``CW`` (B, m): ``q(h) / C(m_b, h)`` at h - 1
    for the node's number m_b of non-constant features.  Returns P (B, m, G).
    """
    B, m, G = S.shape
    if not CW[:, 1:].any():         # one feature evaluated (K=1): it wins when its gap is valid
        return np.where(np.isfinite(S), PI * CW[:, :1, None], 0.0)
    s = S.reshape(B, 1, m * G)
    rows, w = S.reshape(B * m, G), PI.reshape(B * m, G)
    queries = np.broadcast_to(s, (B, m, m * G)).reshape(B * m, m * G)
    shift = np.repeat(tol, m)[:, None]
    with np.errstate(invalid="ignore"):
        a = _mass_below(rows, w, queries - shift, strict=True)
        b = _mass_below(rows, w, queries + shift, strict=False) - a
    a = a.reshape(B, m, m * G).transpose(0, 2, 1)               # (B, mG, m): a[b, (j, g), l]
    b = b.reshape(B, m, m * G).transpose(0, 2, 1).copy()
    own = np.repeat(np.arange(m), G)
    a[:, np.arange(m * G), own] = 0.0                            # l != j
    b[:, np.arange(m * G), own] = 0.0
    # poly[..., u, k]: coefficient of u^u z^k in prod_{l != j} (1 + u (a_l + z b_l))
    poly = np.zeros((B, m * G, m, m))
    poly[..., 0, 0] = 1.0
    for l in range(m):
        al, bl = a[:, :, l, None, None], b[:, :, l, None, None]
        new = poly.copy()
        new[..., 1:, :] += al * poly[..., :-1, :]
        new[..., 1:, 1:] += bl * poly[..., :-1, :-1]
        poly = new
    integ = poly @ (1.0 / np.arange(1, m + 1))                  # (B, mG, m): over z, per u
    win = (integ * CW[:, None, :]).sum(-1).reshape(B, m, G)
    return np.where(np.isfinite(S), PI * win, 0.0)


# ---------------------------------------------------------------------------
# the recursion
# ---------------------------------------------------------------------------

class BinarySolver:
    """The memoised recursion over nodes, in batches of nodes of one size.

    A node is its tight box (per feature, the lowest and highest rank of the
    rows it holds) and its horizon h (how many more levels the depth limit
    allows, capped at its number of distinct rows minus one, so that equal
    row sets with enough room share one key).  Both children of a split hold
    fewer distinct rows than their parent, so once every node holding more
    than n distinct rows is expanded, every node holding n is known, with the
    probability of reaching it at each depth: nodes are expanded in
    decreasing size, one numpy batch per size, and forgotten after it.  Per
    batch, every gap of every feature of every node is scored at once
    (cumulative class weights along each feature's order), and the win law
    is evaluated for all of them together.

    The batch steps are public so that other recursions over the same nodes
    (the per-tree covariance of :mod:`varimp_core.exact.moments`, the local
    importances of :mod:`varimp_core.local.local_binary`) reuse them rather
    than re-walk the trees: :meth:`root_is_leaf`, :meth:`node_keys` (a node's
    key), :meth:`key_boxes` (its inverse) and :meth:`expand` (one batch of
    nodes of one size; with ``keep_outcomes`` set it also keeps each split's
    feature, probability and decrease in ``last_outcomes``).
    """

    #: Largest number of (candidate, rival gap) pairs held at once by the win law.
    CHUNK = 2_000_000

    def __init__(self, d: PreparedBinary, method, max_features, max_depth, min_samples_leaf, n_cols,
                 max_nodes, estimate=float("nan")):
        self.d = d
        self.method = method
        self.estimate = estimate
        self.max_depth = max_depth
        self.L = min_samples_leaf
        self.n_cols = n_cols
        self.max_nodes = max_nodes
        U, p = d.ranks.shape
        self.U, self.p = U, p
        self.order = np.argsort(d.ranks, axis=0, kind="stable").T.copy()  # (p, U)
        self.onehot = d.stats()
        cmax = max(d.n_distinct)
        self.vals = np.zeros((p, cmax))                                     # padded values
        for f, v in enumerate(d.values):
            self.vals[f, :v.size] = v
        self.draw = _draw_weights(p, p, max_features)
        self.n_split_nodes = 0
        self.n_found = 0            # distinct nodes found when the recursion stopped early
        self._next_check = 0
        #: When True, :meth:`expand` keeps its batch's split outcomes in ``last_outcomes``:
        #: (node, feature, probability, weighted decrease, (2, S) children that split further).
        self.keep_outcomes = False
        self.last_outcomes = None
        # keys: (lo, hi) of each feature as one pair index, and the horizon, in mixed radix
        pairs = [c * (c + 1) // 2 for c in d.n_distinct]
        self.radix = pairs + [U + 1]
        self.int_keys = prod(self.radix) < 2 ** 62

    def node_keys(self, box, hh):
        """One key per node: its tight box as a pair index per feature and its horizon.

        Integers in mixed radix when they fit in 62 bits, else rows of those columns.
        """
        lo, hi = box[..., 0], box[..., 1]
        pair = lo + hi * (hi + 1) // 2                                      # (E, p)
        if not self.int_keys:
            return np.concatenate([pair, hh[:, None]], axis=1)
        key = np.zeros(hh.shape, dtype=np.int64)
        for f in range(self.p):
            key = key * self.radix[f] + pair[:, f]
        return key * self.radix[-1] + hh

    def key_boxes(self, keys):
        """Boxes (E, p, 2) and horizons (E,) of keys made by :meth:`node_keys`."""
        if self.int_keys:
            k = keys.copy()
            hh = k % self.radix[-1]
            k //= self.radix[-1]
            pair = np.empty((k.size, self.p), dtype=np.int64)
            for f in range(self.p - 1, -1, -1):
                pair[:, f] = k % self.radix[f]
                k //= self.radix[f]
        else:
            pair, hh = keys[:, :self.p], keys[:, self.p]
        hi = np.floor((np.sqrt(8.0 * pair + 1) - 1) / 2).astype(np.int64)
        hi -= hi * (hi + 1) // 2 > pair
        hi += (hi + 1) * (hi + 2) // 2 <= pair
        return np.stack([pair - hi * (hi + 1) // 2, hi], axis=-1), hh

    # -- one batch of nodes of n distinct rows ---------------------------
    def expand(self, box, h, n):
        """Splits of B impure nodes with n distinct rows each, boxes (B, p, 2), horizons (B,).

        Returns ``own`` (B, p), each node's expected weighted decrease per
        feature (:math:`\\sum_g P(j, g) G(j, g)`), and the children that may
        split further (pure ones, those with too few samples and those at the
        depth limit are left out) as arrays: parent index in the batch,
        probability, box, horizon and size.
        """
        d, p, L, U = self.d, self.p, self.L, self.U
        B = box.shape[0]
        R = d.ranks                                                         # (U, p)
        inside = np.all((R[None] >= box[:, None, :, 0]) & (R[None] <= box[:, None, :, 1]),
                        axis=2)                                             # (B, U)
        sel = inside[:, self.order]                                         # (B, p, U)
        sub = np.broadcast_to(self.order, sel.shape)[sel].reshape(B, p, n)  # rows by feature
        Rall = R[sub]                                                       # (B, p, n, p)
        Rj = Rall[:, np.arange(p), :, np.arange(p)].transpose(1, 0, 2)      # (B, p, n)
        cw = np.cumsum(self.onehot[sub], axis=2)                            # (B, p, n, C)
        cc = np.cumsum(d.count[sub], axis=2)                                # (B, p, n)
        tot = cw[:, 0, -1]                                                  # (B, C)
        left = cw[:, :, :-1]
        G = (weighted_node_impurity(tot, d.criterion)[:, None, None] - weighted_node_impurity(left, d.criterion)
             - weighted_node_impurity(tot[:, None, None] - left, d.criterion))               # (B, p, n-1)
        gap = Rj[:, :, 1:] != Rj[:, :, :-1]
        ok = gap & (cc[:, :, :-1] >= L) & (cc[:, :, -1:] - cc[:, :, :-1] >= L)
        tol = TIE_FRACTION * d.tie_scale * (tot[:, 0] if d.regression else tot.sum(axis=1))
        nonconst = gap.any(axis=2)                                          # (B, p)
        s = np.where(ok, G, -np.inf)
        if self.method == "exact-et":
            v = self.vals[np.arange(p)[None, :, None], Rj]                  # (B, p, n)
            span = v[:, :, -1] - v[:, :, 0]
            PI = np.diff(v, axis=2) / np.where(span > 0, span, 1.0)[:, :, None]
            pos = np.broadcast_to(np.arange(n - 1), s.shape)
        else:                       # the lowest of the tied best thresholds, probability 1
            best = np.argmax(s >= s.max(axis=2, keepdims=True) - tol[:, None, None], axis=2)
            pos = best[:, :, None]
            s = np.take_along_axis(s, pos, axis=2)
            PI = nonconst[:, :, None].astype(float)
        CW = self.draw[nonconst.sum(axis=1)]
        P = np.concatenate([_win_batch(s[i:i + k], PI[i:i + k], tol[i:i + k], CW[i:i + k])
                            for i, k in index_chunks(B, self.CHUNK // max(1, (p * s.shape[2]) ** 2))])
        own = (P * np.take_along_axis(G, pos, axis=2)).sum(axis=2)
        # children of the chosen splits, both sides at once: index 0 = left, 1 = right
        bi, fi, gi = np.nonzero(P > 0)
        k = pos[bi, fi, gi]
        Psel = P[bi, fi, gi]
        cl = cw[bi, fi, k]                                                  # (S, C)
        ccl = cc[bi, fi, k]
        # several y values on a side (several classes): ranges of y codes along the order
        Yall = d.y[sub]                                                     # (B, p, n)
        ylo = np.minimum.accumulate(Yall, axis=2)[bi, fi, k]
        yhi = np.maximum.accumulate(Yall, axis=2)[bi, fi, k]
        Yrev = Yall[:, :, ::-1]
        rlo = np.minimum.accumulate(Yrev, axis=2)[:, :, ::-1][bi, fi, k + 1]
        rhi = np.maximum.accumulate(Yrev, axis=2)[:, :, ::-1][bi, fi, k + 1]
        n_cls = np.stack([1 + (yhi > ylo), 1 + (rhi > rlo)])
        n_smp = np.stack([ccl, cc[bi, fi, -1] - ccl])
        n_uni = np.stack([k + 1, n - k - 1])
        hh = np.minimum(h[bi] - 1, n_uni - 1)
        split = (n_cls > 1) & (n_smp >= max(2, 2 * L)) & (hh > 0)
        # tight boxes: running min / max of every feature's ranks along feature fi's order
        head = np.stack([np.minimum.accumulate(Rall, axis=2),
                         np.maximum.accumulate(Rall, axis=2)], axis=-1)     # (B, p, n, p, 2)
        rev = Rall[:, :, ::-1]
        tail = np.stack([np.minimum.accumulate(rev, axis=2),
                         np.maximum.accumulate(rev, axis=2)], axis=-1)[:, :, ::-1]
        lbox, rbox = head[bi, fi, k], tail[bi, fi, k + 1]                   # (S, p, 2)
        if self.keep_outcomes:      # for the per-tree covariance (exact/moments.py)
            self.last_outcomes = (bi, fi, Psel, G[bi, fi, k], split)
        kids = (np.concatenate([bi[split[0]], bi[split[1]]]),
                np.concatenate([Psel[split[0]], Psel[split[1]]]),
                np.concatenate([lbox[split[0]], rbox[split[1]]]),
                np.concatenate([hh[0][split[0]], hh[1][split[1]]]),
                np.concatenate([n_uni[0][split[0]], n_uni[1][split[1]]]))
        return own, kids

    def root_is_leaf(self):
        """True when the root cannot split: fewer than max(2, 2 L) samples, or one y value."""
        d = self.d
        return d.count.sum() < max(2, 2 * self.L) or bool(np.all(d.y == d.y[0]))

    def _too_many(self, depth_nodes=None):
        """The sentence past ``max_nodes``; the sure depth is that of ``depth_nodes`` (the
        limit of depth-limited trees; default ``max_nodes``)."""
        depth_nodes = self.max_nodes if depth_nodes is None else depth_nodes
        return ValueError(
            f"The exact {_NAMES[self.method]} value ({self.method}) needs more than "
            f"{self.max_nodes:,} distinct nodes on this table (about {self.estimate:,.3g} "
            f"were estimated); use a max depth of at most "
            f"{sure_depth(self.d.n_distinct, depth_nodes)} (sure to fit here), fewer rows "
            "or inputs, a larger min_samples_leaf, or a sampled scikit-learn forest.")

    def solve(self):
        """Expected profile (p, n_cols) / W: reach probabilities pushed down, sizes decreasing.

        A node's reach vector holds the probability that a random tree
        reaches it at depth 0, 1, ... (the last column: deeper).  All parents
        of a node hold more rows, so its reach is complete when its size comes
        up; its expected decrease per feature, times its reach, is added to
        the profile, and its children get their share of the reach one level
        deeper.  No node is kept after its batch.
        """
        U, p, nc = self.U, self.p, self.n_cols
        H0 = U - 1 if self.max_depth is None else min(self.max_depth, U - 1)
        total = np.zeros((p, nc))
        if self.root_is_leaf() or H0 <= 0:
            return total
        root = np.stack([np.zeros(p, dtype=np.int64), np.array(self.d.n_distinct) - 1], axis=1)
        start = np.zeros((1, nc))
        start[0, 0] = 1.0
        # pending[n]: (keys, reach) of the nodes of n distinct rows found so far, and a count
        pending = {U: [[(self.node_keys(root[None], np.array([H0])), start)], 1, 1]}
        for n in range(U, 1, -1):
            if n not in pending:
                continue
            keys, reach = _merge(pending.pop(n)[0], nc)
            self.n_split_nodes += keys.shape[0]
            if self.n_split_nodes > self.max_nodes:
                raise self._too_many()
            box, h = self.key_boxes(keys)
            for i, k in index_chunks(keys.shape[0], self.CHUNK // (p * U * 8)):
                own, (kp, kP, kbox, kh, kn) = self.expand(box[i:i + k], h[i:i + k], n)
                r = reach[i:i + k]
                total += own.T @ r
                deeper = np.zeros((kp.size, nc))                # one level deeper
                deeper[:, 1:] = r[kp, :-1]
                deeper[:, -1] += r[kp, -1]
                deeper *= kP[:, None]
                kkeys = self.node_keys(kbox, kh)
                for size in np.unique(kn).tolist():
                    at = kn == size
                    slot = pending.setdefault(size, [[], 0, 0])
                    slot[0].append((kkeys[at], deeper[at]))
                    slot[1] += int(at.sum())
                    if slot[1] > max(100_000, 4 * slot[2]):   # merge repeats to bound memory
                        merged = _merge(slot[0], nc)
                        slot[:] = [[merged], merged[0].shape[0], merged[0].shape[0]]
                self._check_found(pending)
        return total / self.d.total_weight

    def _check_found(self, pending):
        """Stop as soon as the distinct nodes found (solved or waiting) pass ``max_nodes``.

        Every node waiting in ``pending`` will be solved, so solved plus waiting
        distinct nodes is a lower bound on the final count: past the limit the
        answer is a refusal, and it is given now rather than after the larger
        nodes are solved one by one.  Counted with repeats first (free); only
        when that passes the limit are the waiting keys merged to count them
        distinct, and not again until the count with repeats has doubled.
        """
        found = self.n_split_nodes + sum(slot[1] for slot in pending.values())
        if found <= max(self.max_nodes, self._next_check):
            return
        for slot in pending.values():
            if slot[1] > slot[2] or len(slot[0]) > 1:
                merged = _merge(slot[0], self.n_cols)
                slot[:] = [[merged], merged[0].shape[0], merged[0].shape[0]]
        distinct = self.n_split_nodes + sum(slot[1] for slot in pending.values())
        if distinct > self.max_nodes:
            self.n_found = distinct
            raise self._too_many()
        self._next_check = 2 * max(found, self.max_nodes)


def _merge(parts, nc):
    """Distinct keys of a list of (keys, reach) and their summed reach."""
    keys = np.concatenate([k for k, _ in parts])
    reach = np.concatenate([r for _, r in parts])
    uniq, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = inv.ravel()
    summed = np.stack([np.bincount(inv, weights=reach[:, c], minlength=uniq.shape[0])
                       for c in range(nc)], axis=1)
    return uniq, summed


def index_chunks(total, size):
    """(start, length) of consecutive chunks of at most ``size`` (at least 1) items."""
    size = max(1, int(size))
    return [(i, min(size, total - i)) for i in range(0, total, size)]


def _check_method(method):
    if method not in BINARY_METHODS:
        raise ValueError(f"method must be one of {', '.join(BINARY_METHODS)}, got {method!r}.")


def estimate_binary_nodes(X, y, *, method="exact-et", max_features=None, max_depth=None,
                          min_samples_leaf=1, sample_weight=None, n_probes=4000,
                          random_state=0) -> float:
    """Estimated number of distinct split nodes of the exact recursion, before any work.

    A node holds the rows inside its tight bounding box (per feature, an
    interval of distinct-value ranks whose ends are attained by rows inside).
    It is split only if it holds two classes and at least
    ``2 * min_samples_leaf`` samples, and any such box can be reached by
    ``exact-et`` at K=1 (shrink the root one face at a time; every step is a
    possible split of an impure node).  The estimate is therefore

    .. math::

        \\#\\{\\text{tight, impure boxes}\\} \\approx
        \\prod_f \\frac{c_f (c_f + 1)}{2} \\times \\hat{f},

    with :math:`c_f` the number of distinct values of feature f and
    :math:`\\hat f` the fraction of ``n_probes`` uniformly drawn rank boxes
    that are tight and impure (more are drawn, up to 16 times as many, while
    fewer than 100 hit; under 30 hits, 3 are added: the 95% upper bound of a
    zero count).  With ``max_depth`` D it is also bounded by
    :math:`\\sum_{d<D} (2 \\sum_f (c_f - 1))^d`.  This is the exact count
    for ``exact-et`` at K=1 and full depth (up to sampling error) and an
    upper estimate for K > 1.

    ``exact-rf`` visits far fewer nodes (one best split per feature per
    node, and a single tree when K=p up to ties: about 2N), in a number that
    depends on where the best splits fall and cannot be told from the table
    beforehand; for it the estimate is :math:`\\min(2N\\,p^{\\,p-K}, \\text{ET
    estimate})`, a guide only.  Both methods refuse before any work when this
    estimate passes ``MAX_BINARY_NODES`` (:func:`binary_refusal_sentence`);
    since the ``exact-rf`` figure is a guide (25 times too low at N = 3,000, p = 2),
    ``exact-rf`` then counts its distinct nodes level by level before solving any
    (:func:`_count_rf_nodes`: each node scored once, without the win law) wherever
    the bound on all boxes passes the limit, and refuses with that count as soon as
    it passes; its recursion also stops with a sentence past that many nodes.

    Parameters
    ----------
    X, y, sample_weight
        The training table.
    method : {"exact-rf", "exact-et"}
    max_features, max_depth, min_samples_leaf
        As in :func:`exact_rf_importances`.
    n_probes : int, default=4000
    random_state : int, default=0

    Returns
    -------
    float
    """
    _check_method(method)
    d = PreparedBinary(X, y, sample_weight, "entropy")
    K = validate_max_features(max_features, d.n_features)
    return _estimate(d, method, K, max_depth, min_samples_leaf, n_probes, random_state)


class _Floor(float):
    """A node estimate known only from below: the least the sampled estimate can be (3 hits
    among all the probes) already passed the limit, so no box was drawn."""


def _estimate(d: PreparedBinary, method, K, max_depth, L, n_probes=4000, random_state=0,
              enough=0.0) -> float:
    """The estimate of :func:`estimate_binary_nodes`; its bound alone when that is <= ``enough``.

    The sampled estimate never exceeds the bound (all boxes, the depth
    bound, the ``exact-rf`` guide), so a bound within the limit decides the
    refusal without sampling; nor is it below its floor, so a floor past
    ``enough`` decides it too, and is returned as a :class:`_Floor`.
    """
    c = np.array(d.n_distinct)
    p = c.size
    R = d.ranks
    # Python floats: past 1.8e308 (60 inputs of many values) the product is inf, quietly
    boxes = prod(float(ci) * (float(ci) + 1) / 2 for ci in c.tolist())
    bound = boxes
    if max_depth is not None:
        bound = min(bound, _depth_bound(c.tolist(), max_depth))
    if method == "exact-rf":
        bound = min(bound, 2.0 * d.n_rows * float(p) ** (p - K))
    if bound <= enough:
        return bound
    chunk = max(1, min(n_probes, 2_000_000 // max(1, R.shape[0] * p)))
    max_probes = max(n_probes, 16 * n_probes if R.shape[0] * p <= 400 else 4 * n_probes)
    # Whatever the probes find, the estimate below is at least this floor (3 hits, or 30,
    # out of at most max_probes + chunk probes): past ``enough`` it decides a refusal at once
    # (on 10,000 rows and 60 binned inputs the probes took a minute to say the same).
    floor = min(bound, boxes * 3 / (max_probes + chunk))
    if enough and floor > enough:
        return _Floor(floor)
    rng = np.random.default_rng(random_state)
    big = np.iinfo(np.int64).max
    hits = probes = 0
    while probes < n_probes or (hits < 100 and probes < max_probes):
        # a uniform rank interval [lo, hi] per feature: a uniform index among the c(c+1)/2 pairs
        lo = np.empty((chunk, p), dtype=np.int64)
        hi = np.empty((chunk, p), dtype=np.int64)
        for f in range(p):
            k = rng.integers(0, c[f] * (c[f] + 1) // 2, size=chunk)
            j = np.minimum(np.floor((np.sqrt(8.0 * k + 1) - 1) / 2).astype(np.int64), c[f] - 1)
            j = np.where(j * (j + 1) // 2 > k, j - 1, j)
            lo[:, f] = k - j * (j + 1) // 2
            hi[:, f] = j
        l, h = lo[:, None, :], hi[:, None, :]
        inside = np.all((R[None] >= l) & (R[None] <= h), axis=2)            # (b, U)
        rmin = np.where(inside[:, :, None], R[None], big).min(axis=1)
        rmax = np.where(inside[:, :, None], R[None], -1).max(axis=1)
        tight = np.all(rmin == lo, axis=1) & np.all(rmax == hi, axis=1)
        ymax = np.where(inside, d.y[None], -1).max(axis=1)
        ymin = np.where(inside, d.y[None], big).min(axis=1)
        samples = (inside * d.count[None]).sum(axis=1)
        hits += int(np.sum(tight & (ymax > ymin) & (samples >= max(2, 2 * L))))
        probes += chunk
    # few hits: add 3 (the 95% upper bound of a count of zero) so rare boxes are not ignored
    est = boxes * (hits + (3 if hits < 30 else 0)) / probes
    return float(min(est, bound))


def binary_refusal_sentence(X, y, *, method, max_features=None, max_depth=None,
                            min_samples_leaf=1, sample_weight=None, max_nodes=None,
                            n_probes=4000, criterion="entropy", subject=None) -> str | None:
    """None when the exact binary forest can be afforded on this table, else why not.

    The refusal the exact methods raise before any node is solved: the
    estimate of :func:`estimate_binary_nodes` (both methods) against
    ``max_nodes``.  Pages call it with fewer ``n_probes`` to decide quickly.

    Parameters
    ----------
    X, y, sample_weight, method, max_features, max_depth, min_samples_leaf, n_probes
        As in :func:`estimate_binary_nodes`.
    max_nodes : int, optional
        Default: the limit of the run these settings get (:func:`node_limit`).
    criterion : {"entropy", "gini", "squared_error"}, default="entropy"
        Which run they get (the compiled one takes entropy and Gini).
    subject : str, optional
        What would need the nodes, for a caller whose walk of them has its own
        ``max_nodes`` (default "The exact Extra-Trees value (exact-et)", or RandomForest).

    Returns
    -------
    sentence : str or None
        Bad input gets its own sentence too.
    """
    try:
        _check_method(method)
        d = PreparedBinary(X, y, sample_weight, "entropy")
        K = validate_max_features(max_features, d.n_features)
        max_depth = check_int("max_depth", max_depth, low=1, allow_none=True)
        L = check_int("min_samples_leaf", min_samples_leaf, low=1)
        if criterion not in _CRITERIA:
            raise ValueError(f"criterion must be one of {', '.join(_CRITERIA)}, "
                             f"got {criterion!r}.")
        limit, depth_nodes = _limits(d, method, K, max_depth, criterion, max_nodes)
        est = _estimate(d, method, K, max_depth, L, n_probes, enough=limit)
        refusal = _refusal(d, method, est, limit, depth_nodes, K1_fits=_k1_fits(
            d, method, K, max_depth, criterion, est, max_nodes, L), subject=subject)
        if refusal is None and method == "exact-rf" and _rf_may_be_too_big(d, max_depth,
                                                                             limit):
            refusal = _counted_refusal(d, K, max_depth, L, limit, subject)
    except ValueError as exc:
        return str(exc)
    return refusal


def node_limit(method, max_features, max_depth, criterion, n_distinct_rows) -> int:
    """Most distinct split nodes an exact binary run accepts: :data:`MAX_COMPILED_NODES` where
    it runs the compiled recursion (exact-et, K = 1, fully grown, entropy or Gini, at most 64
    distinct rows, numba present), else :data:`MAX_BINARY_NODES`.

    Examples
    --------
    >>> node_limit("exact-et", 2, None, "entropy", 50)
    300000
    """
    if _compiled_k1_settings(method, max_features, max_depth, criterion, n_distinct_rows):
        return MAX_COMPILED_NODES
    return MAX_BINARY_NODES


def _limits(d: PreparedBinary, method, K, max_depth, criterion, max_nodes):
    """(node limit of this run, limit of depth-limited runs): both ``max_nodes`` when given."""
    if max_nodes is not None:
        return max_nodes, max_nodes
    return node_limit(method, K, max_depth, criterion, d.ranks.shape[0]), MAX_BINARY_NODES


def _k1_fits(d: PreparedBinary, method, K, max_depth, criterion, est, max_nodes, L=1) -> bool:
    """Whether K = 1 would fit where these settings of exact-et do not (its compiled run):
    exact-et's estimate does not depend on K (``est``, sampled again when it is a floor)."""
    if max_nodes is not None or method != "exact-et" or K == 1 or max_depth is not None or \
            est <= MAX_BINARY_NODES:
        return False
    if node_limit(method, 1, None, criterion, d.ranks.shape[0]) != MAX_COMPILED_NODES:
        return False
    if isinstance(est, _Floor):
        est = _estimate(d, method, 1, None, L, enough=MAX_COMPILED_NODES)
    return est <= MAX_COMPILED_NODES


def _count_rf_nodes(d: PreparedBinary, K, max_depth, L, max_nodes):
    """Distinct split nodes of ``exact-rf``'s recursion, counted level by level before the work.

    Breadth first from the root, each node a set of distinct rows (a batch of
    nodes is one array of (node, row) entries).  Per node and feature the best
    gap is found as the recursion finds it (the lowest of the gaps within the
    tie tolerance of the best score, ``-inf`` when no gap leaves
    ``min_samples_leaf`` samples a side); feature j's split is a possible
    choice when at most :math:`m - h_{\\min}` non-constant features score
    strictly better, :math:`h_{\\min} = \\max(1, K - (p - m))` the fewest
    non-constant features scikit-learn evaluates.  Children are told apart by
    a 64-bit hash of their rows; those that split further form the next
    level.  Counting stops as soon as ``max_nodes`` is passed.  This is the
    recursion's own count without a depth limit (with one, the recursion
    keys nodes by their depth room too, so it is a lower bound), at the cost
    of scoring each distinct node once without the win law or the boxes.

    Returns
    -------
    int
        The count, or the first count past ``max_nodes``.
    """
    U, p = d.ranks.shape
    onehot = d.stats()
    C = onehot.shape[1]
    h = np.random.default_rng(2 ** 31 - 1).integers(0, 2 ** 62, size=U, dtype=np.int64)
    h = h.view(np.uint64)
    cmax = max(d.n_distinct) + 1
    tol_scale = TIE_FRACTION * d.tie_scale
    whole = d.criterion == "entropy" and np.all(d.weight == np.round(d.weight))
    if whole:       # whole-number weights: W log2 W from a table, no logarithm per gap
        top = int(round(d.total_weight)) + 1
        xs = np.arange(top, dtype=float)
        table = np.where(xs > 0, xs * np.log2(np.where(xs > 0, xs, 1.0)), 0.0)

    def wimp(c):
        if not whole:
            return weighted_node_impurity(c, d.criterion)
        ci = np.rint(c).astype(np.int64)
        out = table[ci[:, 0]]
        W = ci[:, 0].copy()
        for k in range(1, C):
            out += table[ci[:, k]]
            W += ci[:, k]
        return table[W] - out

    def splits(rows_seg, seg, n_seg):
        """Per node (n_seg, p): best score, its split position, and the sort of each feature."""
        score = np.full((n_seg, p), -np.inf)
        nonconst = np.zeros((n_seg, p), bool)
        cut = np.zeros((n_seg, p), dtype=np.int64)
        orders = []
        starts = np.searchsorted(seg, np.arange(n_seg))                 # seg is sorted
        W = np.add.reduceat(d.weight[rows_seg], starts) if rows_seg.size else np.zeros(0)
        for f in range(p):
            rf = d.ranks[rows_seg, f]
            o = np.argsort(seg * cmax + rf, kind="stable")
            orders.append(o)
            r, sg = rf[o], seg[o]
            cw = np.cumsum(onehot[rows_seg[o]], axis=0)
            cc = np.cumsum(d.count[rows_seg[o]])
            base_w = np.where(starts[:, None] > 0, cw[np.maximum(starts - 1, 0)], 0.0)
            base_c = np.where(starts > 0, cc[np.maximum(starts - 1, 0)], 0.0)
            ends = np.append(starts[1:], sg.size) - 1
            tot = cw[ends] - base_w
            totc = cc[ends] - base_c
            i = np.flatnonzero((sg[:-1] == sg[1:]) & (r[:-1] != r[1:]))
            if i.size == 0:
                orders[-1] = (o, i, np.zeros(0))
                continue
            s_i = sg[i]
            nonconst[s_i, f] = True
            left = cw[i] - base_w[s_i]
            lc = cc[i] - base_c[s_i]
            G = wimp(tot[s_i]) - wimp(left) - wimp(tot[s_i] - left)
            ok = (lc >= L) & (totc[s_i] - lc >= L)
            G = np.where(ok, G, -np.inf)
            best = np.full(n_seg, -np.inf)
            np.maximum.at(best, s_i, G)
            tol = tol_scale * W
            good = np.isfinite(G) & (G >= best[s_i] - tol[s_i])
            first = np.full(n_seg, np.iinfo(np.int64).max)
            np.minimum.at(first, s_i[good], i[good])
            has = np.isfinite(best)
            score[has, f] = best[has]
            cut[has, f] = first[has]
            orders[-1] = (o, i, G)
        return score, nonconst, cut, orders, W

    def _kids(rows_seg, seg, n_seg):
        """Rows, kid index (sorted) and hash of the splittable children of a chunk of nodes."""
        score, nonconst, cut, orders, W = splits(rows_seg, seg, n_seg)
        m = nonconst.sum(axis=1)
        hmin = np.maximum(1, K - (p - m))
        tol = tol_scale * W
        better = (score[:, None, :] > score[:, :, None] + tol[:, None, None]).sum(axis=2)
        win = np.isfinite(score) & (hmin[:, None] <= m[:, None] - better)
        kid_rows, kid_seg, n_kids = [], [], 0
        for f in range(p):
            nodes = np.flatnonzero(win[:, f])
            if nodes.size == 0:
                continue
            o = orders[f][0]
            sg = seg[o]
            sel = np.flatnonzero(win[sg, f])
            side = (sel > cut[sg[sel], f]).astype(np.int64)          # 0 left, 1 right
            rank_of = np.full(n_seg, -1)
            rank_of[nodes] = np.arange(nodes.size)
            kid_rows.append(rows_seg[o][sel])
            kid_seg.append(n_kids + 2 * rank_of[sg[sel]] + side)
            n_kids += 2 * nodes.size
        if not n_kids:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint64)
        kr = np.concatenate(kid_rows)
        ks = np.concatenate(kid_seg)
        o = np.argsort(ks, kind="stable")
        kr, ks = kr[o], ks[o]
        hs = np.zeros(n_kids, dtype=np.uint64)
        np.add.at(hs, ks, h[kr])
        smp = np.bincount(ks, weights=d.count[kr], minlength=n_kids)
        ymin = np.full(n_kids, np.iinfo(np.int64).max)
        ymax = np.full(n_kids, -1)
        np.minimum.at(ymin, ks, d.y[kr])
        np.maximum.at(ymax, ks, d.y[kr])
        splittable = (ymax > ymin) & (smp >= max(2, 2 * L))
        # drop the kids that will not split, renumbering the others
        keep = splittable[ks]
        renum = np.cumsum(splittable) - 1
        return kr[keep], renum[ks[keep]], hs[splittable]

    root_split = d.count.sum() >= max(2, 2 * L) and np.unique(d.y).size > 1
    if not root_split or (max_depth is not None and max_depth < 1):
        return 0
    seen = np.zeros(0, dtype=np.uint64)             # sorted hashes of the nodes found
    count, depth = 1, 0
    frontier = (np.arange(U), np.zeros(U, dtype=np.int64), 1)   # rows, node of each, nodes
    while frontier[2] and (max_depth is None or depth + 1 < max_depth):
        rows_all, seg_all, n_all = frontier
        bounds = np.searchsorted(seg_all, np.arange(0, n_all + 1))
        nxt_rows, nxt_seg, n_next = [], [], 0
        for a in range(0, n_all, 2048):             # a chunk of nodes: stop as soon as past
            b = min(n_all, a + 2048)
            rows_seg = rows_all[bounds[a]:bounds[b]]
            seg = seg_all[bounds[a]:bounds[b]] - a
            kr, ks, hs = _kids(rows_seg, seg, b - a)
            if hs.size == 0:
                continue
            uh, first = np.unique(hs, return_index=True)
            at = np.searchsorted(seen, uh)
            new = (at >= seen.size) | (seen[np.minimum(at, max(seen.size - 1, 0))] != uh) \
                if seen.size else np.ones(uh.size, bool)
            count += int(new.sum())
            if count > max_nodes:
                return count
            seen = np.sort(np.concatenate([seen, uh[new]]))
            mask = np.zeros(hs.size, bool)
            mask[first[new]] = True
            sel = mask[ks]
            renum = np.cumsum(mask) - 1
            nxt_rows.append(kr[sel])
            nxt_seg.append(renum[ks[sel]] + n_next)
            n_next += int(mask.sum())
        if not n_next:
            break
        frontier = (np.concatenate(nxt_rows), np.concatenate(nxt_seg), n_next)
        depth += 1
    return count


def _counted_refusal(d: PreparedBinary, K, max_depth, L, max_nodes,
                     subject=None) -> str | None:
    """exact-rf's refusal from :func:`_count_rf_nodes`, None when the count is within the limit."""
    n = _count_rf_nodes(d, K, max_depth, L, max_nodes)
    if n <= max_nodes:
        return None
    inputs = f"{d.n_features} input" + ("s" if d.n_features > 1 else "")
    who = subject or "The exact RandomForest value (exact-rf)"
    return (f"{who} needs more than {max_nodes:,} distinct "
            f"nodes on these {d.n_rows:,} rows and {inputs}: counting them level by level "
            f"found {n:,} before any was solved; use a max depth of at most "
            f"{sure_depth(d.n_distinct, max_nodes)} (sure to fit here), fewer rows or inputs, "
            "a larger min_samples_leaf, or a sampled scikit-learn forest.")


def _depth_bound(n_distinct, max_depth: int) -> float:
    """Most distinct split nodes of trees stopped at ``max_depth``, whatever the data:
    :math:`\\sum_{k<D} (2 \\sum_f (c_f - 1))^k` (each node has at most
    :math:`\\sum_f (c_f - 1)` cut points, each with two children)."""
    branch = 2.0 * float(sum(int(c) - 1 for c in n_distinct))
    return float(sum(branch ** k for k in range(max_depth)))


def sure_depth(n_distinct, max_nodes: int = MAX_BINARY_NODES) -> int:
    """The largest max_depth D at which both exact binary methods are sure to run, whatever
    K and min_samples_leaf: the bound :math:`\\sum_{k<D} (2 \\sum_f (c_f - 1))^k` on the
    nodes of depth below D is within ``max_nodes`` (at least 1: a stump's root alone).

    Examples
    --------
    >>> sure_depth([32] * 60)          # 3,720 cut children per node: 1 + 3,720 nodes
    2
    >>> sure_depth([2, 2, 2])          # 6 children per node: 1 + 6 + 36 + ... + 6^6
    7
    """
    depth = 1
    while depth < 64 and _depth_bound(n_distinct, depth + 1) <= max_nodes:
        depth += 1
    return depth


def binary_size_hint(X, y, *, sample_weight=None, max_nodes=None, n_probes=None) -> dict:
    """What the exact binary methods can afford on a table, known before any is chosen.

    Parameters
    ----------
    X, y, sample_weight
        The training table (class labels).
    max_nodes : int, optional
        One limit for every run; default: each run's own (:func:`node_limit`).
    n_probes : int, optional
        Boxes drawn; default 4,000 (the methods' own) on at most 10,000 cells (distinct
        rows x inputs: 0.2 s at most), 400 above.

    Returns
    -------
    hint : dict
        ``full``: whether fully grown trees are within the limit of
        :data:`MAX_BINARY_NODES` at every K, by the estimate the methods refuse with
        (:func:`estimate_binary_nodes` at K = 1 and ``min_samples_leaf`` 1, the largest
        case: a larger K or leaf size visits fewer nodes; ``exact-rf``, whose estimate
        is a guide, still counts its nodes as it starts); ``full_k1``: the same for
        exact-et at K = 1, whose compiled run may take more
        (:data:`MAX_COMPILED_NODES`); ``nodes``: that estimate (the bound on all boxes
        when within the limit; ``at_least``: only its floor, when that passed the
        limit); ``depth``: :func:`sure_depth`, the depth at which both
        are sure to run; ``rows``, ``inputs``: distinct rows and inputs.

    Raises
    ------
    ValueError
        Input the methods refuse (NaN, a one-class target, ...), with their sentence.
    """
    d = PreparedBinary(X, y, sample_weight, "entropy")
    if n_probes is None:
        n_probes = 4000 if d.ranks.size <= 10_000 else 400
    limit, depth_nodes = _limits(d, "exact-et", 1, None, "entropy", max_nodes)
    est = _estimate(d, "exact-et", 1, None, 1, n_probes, enough=depth_nodes)
    if isinstance(est, _Floor) and limit > depth_nodes:    # past 300,000: within the other?
        est = _estimate(d, "exact-et", 1, None, 1, n_probes, enough=limit)
    return {"full": bool(est <= depth_nodes), "full_k1": bool(est <= limit),
            "nodes": float(est), "at_least": isinstance(est, _Floor),
            "depth": sure_depth(d.n_distinct, depth_nodes), "rows": int(d.n_rows),
            "inputs": int(d.n_features)}


def _rf_may_be_too_big(d: PreparedBinary, max_depth, max_nodes) -> bool:
    """Whether exact-rf's nodes could pass ``max_nodes``: the bound on all tight boxes does."""
    boxes = prod(float(c) * (float(c) + 1) / 2 for c in d.n_distinct)
    if max_depth is not None:
        boxes = min(boxes, _depth_bound(d.n_distinct, max_depth))
    return boxes > max_nodes


def _refusal(d: PreparedBinary, method, est, max_nodes, depth_nodes=None,
             K1_fits=False, subject=None) -> str | None:
    """The sentence when ``est`` passes ``max_nodes``: the sure depth is that of
    ``depth_nodes`` (default ``max_nodes``); ``K1_fits`` adds that K = 1 fits; ``subject``
    is what would need the nodes (default: the method's exact value)."""
    if est <= max_nodes:
        return None
    depth_nodes = max_nodes if depth_nodes is None else depth_nodes
    inputs = f"{d.n_features} input" + ("s" if d.n_features > 1 else "")
    about = ("more than 10^308" if not np.isfinite(est) else
             f"at least {est:,.3g}" if isinstance(est, _Floor) else f"about {est:,.3g}")
    k1 = ("K = 1 (max_features=1), which fits fully grown here (its compiled run takes up "
          f"to {MAX_COMPILED_NODES:,}), " if K1_fits else "")
    who = subject or f"The exact {_NAMES[method]} value ({method})"
    return (f"{who} would need {about} distinct "
            f"nodes on these {d.n_rows:,} rows and {inputs}, beyond the limit of "
            f"{max_nodes:,}; use {k1}a max depth of at most "
            f"{sure_depth(d.n_distinct, depth_nodes)} (sure to fit here), fewer rows or "
            "inputs, fewer distinct values, or a sampled scikit-learn forest.")


def exact_binary_depth_profile(X, y, *, method, max_features=None, max_depth=None,
                               min_samples_leaf=1, criterion="entropy", sample_weight=None,
                               n_cols=None, max_nodes=None, variables=None):
    """Expected unnormalised MDI of one random binary tree, by feature and node depth.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric inputs (categorical ones as ordinal codes).
    y : array-like of shape (n_samples,)
        Class labels.
    method : {"exact-rf", "exact-et"}
    max_features, max_depth, min_samples_leaf, criterion, sample_weight
        As in :func:`exact_rf_importances`.
    n_cols : int, optional
        Number of depth columns (default p); deeper nodes fold into the last.
    max_nodes : int, optional
        Refuse (by the estimate) and stop, with a sentence, past this many distinct
        split nodes.  Default: :func:`node_limit` (300,000; 2,000,000 for the compiled
        recursion of exact-et at K = 1, fully grown, on at most 64 distinct rows).
    variables : sequence of str, optional
        Column names for the sentences (default: a DataFrame's, else x1, x2, ...).

    Returns
    -------
    profile : ndarray of shape (n_features, n_cols)
        Column d: importance taken at nodes of depth d (the last column: depth
        >= n_cols - 1).
    info : dict
        ``n_nodes`` (distinct split nodes), ``information`` (plug-in, criterion units).
    """
    _check_method(method)
    d = PreparedBinary(X, y, sample_weight, criterion, names=variables)
    p = d.n_features
    K = validate_max_features(max_features, p)
    max_depth = check_int("max_depth", max_depth, low=1, allow_none=True)
    L = check_int("min_samples_leaf", min_samples_leaf, low=1)
    n_cols = p if n_cols is None else check_int("n_cols", n_cols, low=1)
    limit, depth_nodes = _limits(d, method, K, max_depth, criterion, max_nodes)
    est = _estimate(d, method, K, max_depth, L, enough=limit)
    refusal = _refusal(d, method, est, limit, depth_nodes,
                       K1_fits=_k1_fits(d, method, K, max_depth, criterion, est, max_nodes, L))
    if refusal is None and method == "exact-rf" and _rf_may_be_too_big(d, max_depth, limit):
        refusal = _counted_refusal(d, K, max_depth, L, limit)
    if refusal is not None:
        raise ValueError(refusal)
    solver = BinarySolver(d, method, K, max_depth, L, n_cols, limit, est)
    if _compiled_k1(d, method, K, max_depth):
        from varimp_core.exact.binary_kernel import et_k1_profile

        prof, n_nodes = et_k1_profile(d, solver.draw[:, 0], L, n_cols, limit)
        if n_nodes < 0:
            raise solver._too_many(depth_nodes)
        solver.n_split_nodes = n_nodes
    else:
        prof = solver.solve()
    return prof, {"n_nodes": solver.n_split_nodes, "information": _information(d),
                  "estimated_nodes": est}


def _compiled_k1(d: PreparedBinary, method, K, max_depth) -> bool:
    """Whether the compiled recursion (:mod:`varimp_core.exact.binary_kernel`) gives this
    profile: exact-et at K = 1, fully grown, entropy or Gini, at most 64 distinct rows (a
    node is a 64-bit mask of its rows); 12 times faster than the batched solver where
    both were timed (N=50, p=2 and N=40, p=3: 1.4-2.0 us a node against 17-23), with
    the same nodes and the same values (tested against it)."""
    return _compiled_k1_settings(method, K, max_depth, d.criterion, d.ranks.shape[0])


def _compiled_k1_settings(method, K, max_depth, criterion, n_distinct_rows) -> bool:
    """:func:`_compiled_k1` from the settings and the number of distinct rows."""
    if method != "exact-et" or K != 1 or max_depth is not None or \
            criterion not in ("entropy", "gini") or n_distinct_rows > 64:
        return False        # 64: a node is a 64-bit mask of its rows (binary_kernel.MAX_ROWS)
    from varimp_core.compiled import HAVE_NUMBA

    return HAVE_NUMBA


def binary_inputs(data, *, regression=False):
    """(X, y, sample_weight) of prepared data or a DiscreteTable, as the exact binary methods see it.

    Prepared data with numeric inputs (``X_numeric``; a text column of more
    than two levels as the out-of-fold target statistic of its level, as
    ``sklearn-rf`` / ``sklearn-et`` get it, see ``docs/categories.md``; two
    levels as codes): those rows, unweighted, as scikit-learn gets them.
    Otherwise the table's distinct rows with their codes as floats, and their weights as sample weights when they differ (an exact
    distribution), none when they are equal.  Regression targets are refused
    unless ``regression`` (for ``criterion="squared_error"``).
    """
    from varimp_core.data.prepare import PreparedData
    from varimp_core.data.table import DiscreteTable

    if isinstance(data, PreparedData):
        if data.task != "classification" and not regression:
            raise ValueError("The exact binary forests handle a numeric target with "
                             "criterion='squared_error' only; use it, or sklearn-rf or "
                             "sklearn-et.")
        if data.X_numeric is not None:
            from varimp_core.forests.sklearn_mdi import encode_nominal, nominal_columns

            X = data.native_X()         # missing numbers as NaN, as scikit-learn gets them
            if not np.all(np.isfinite(X)):
                raise ValueError(_missing_sentence(X, data.variables))
            nominal = nominal_columns(data)     # as sklearn-rf / sklearn-et get them
            if nominal:
                X = encode_nominal(X, data.y, nominal, task=data.task)
            return X, data.y, None
        table = data.table
    elif isinstance(data, DiscreteTable):
        table = data
    else:
        raise ValueError(f"Expected prepared data or a DiscreteTable, got {type(data).__name__}.")
    w = table.weight
    sw = None if np.allclose(w, w[0]) else w
    return table.X.astype(float), table.y, sw


def exact_binary_importances(X, y, *, method, max_features=None, max_depth=None,
                             min_samples_leaf=1, criterion="entropy", sample_weight=None,
                             variables=None, problem=None) -> ImportanceResult:
    """Exact infinite-forest MDI of scikit-learn's binary trees (``method`` picks RF or ET).

    See :func:`exact_rf_importances`.
    """
    prof, info = exact_binary_depth_profile(
        X, y, method=method, max_features=max_features, max_depth=max_depth,
        min_samples_leaf=min_samples_leaf, criterion=criterion, sample_weight=sample_weight,
        variables=variables)
    p = prof.shape[0]
    if variables is None:
        variables = [str(c) for c in X.columns] if hasattr(X, "columns") else \
            [f"x{i + 1}" for i in range(p)]
    if len(variables) != p:
        raise ValueError(f"variables has {len(variables)} names but X has {p} columns.")
    return ImportanceResult(
        variables=tuple(variables),
        importances=prof.sum(axis=1),
        by_degree=prof,
        method=method,
        parameters={"max_features": p if max_features is None else int(max_features),
                    "max_depth": max_depth, "min_samples_leaf": int(min_samples_leaf),
                    "criterion": criterion, "k_semantics": "sklearn",
                    "n_nodes": int(info["n_nodes"])},
        problem=problem,
        information=info["information"] if criterion == "entropy" else None,
        units={"entropy": "bits", "gini": "gini"}.get(criterion, "variance"),
        exact=True,
    )


def exact_rf_importances(X, y, *, max_features, max_depth=None, min_samples_leaf=1,
                         criterion="entropy", sample_weight=None, variables=None,
                         problem=None) -> ImportanceResult:
    """What ``RandomForestClassifier(bootstrap=False, ...)`` converges to with infinitely many trees.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric inputs used as they are (cast to float32 like scikit-learn);
        categorical inputs as ordinal codes (sorted order of the labels).
    y : array-like of shape (n_samples,)
        Class labels.
    max_features : int or None
        K (None: p).
    max_depth : int, optional
    min_samples_leaf : int, default=1
    criterion : {"entropy", "gini"}, default="entropy"
    sample_weight : array-like, optional
        Row weights (rows may also simply repeat).
    variables : sequence of str, optional
    problem : str, optional

    Returns
    -------
    ImportanceResult
        ``importances[j]`` = :math:`E\\big[\\sum_t p(t)\\Delta i(t)\\big]` over
        nodes split on j (bits or Gini units); ``by_degree[:, d]`` the part
        taken at depth d (depth >= p-1 folded into the last column);
        ``information`` the plug-in I(X;Y) in bits (entropy only).

    Notes
    -----
    Best splitter: each evaluated feature proposes its best midpoint
    threshold (the lowest of tied ones); the law of which feature wins is
    :func:`split_win_probabilities` with point masses.
    """
    return exact_binary_importances(X, y, method="exact-rf", max_features=max_features,
                                    max_depth=max_depth, min_samples_leaf=min_samples_leaf,
                                    criterion=criterion, sample_weight=sample_weight,
                                    variables=variables, problem=problem)


def exact_et_importances(X, y, *, max_features, max_depth=None, min_samples_leaf=1,
                         criterion="entropy", sample_weight=None, variables=None,
                         problem=None) -> ImportanceResult:
    """What ``ExtraTreesClassifier(bootstrap=False, ...)`` converges to with infinitely many trees.

    Parameters are those of :func:`exact_rf_importances`.

    Notes
    -----
    Random splitter: an evaluated feature l with node range
    :math:`[v_{\\min}, v_{\\max}]` gets a uniform threshold, which falls in gap
    g (between consecutive distinct values) with probability
    :math:`\\pi_{l,g} = (v_{g+1} - v_g) / (v_{\\max} - v_{\\min})`; a gap leaving
    fewer than ``min_samples_leaf`` samples on a side disqualifies the
    feature for this node.  The winner law is :func:`split_win_probabilities`.
    """
    return exact_binary_importances(X, y, method="exact-et", max_features=max_features,
                                    max_depth=max_depth, min_samples_leaf=min_samples_leaf,
                                    criterion=criterion, sample_weight=sample_weight,
                                    variables=variables, problem=problem)
