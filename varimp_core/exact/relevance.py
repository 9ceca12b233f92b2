"""Relevance classes, degrees and Markov boundaries (Kohavi and John, 1997).

As in the slides of Geurts (2016), for inputs V and output Y, a variable X is

* relevant iff :math:`I(X; Y \\mid B) > 0` for some :math:`B \\subseteq V^{-X}`;
* strongly relevant iff :math:`I(X; Y \\mid V^{-X}) > 0`;
* weakly relevant iff relevant and not strongly relevant;
* irrelevant otherwise.

The degree of a relevant X is the smallest :math:`|B|` with
:math:`I(X;Y \\mid B) > 0`.  A Markov blanket is a set M with
:math:`Y \\perp V \\setminus M \\mid M`, i.e. :math:`H(Y \\mid X_M) = H(Y \\mid X_V)`,
and a Markov boundary a blanket none of whose proper subsets is one.  Blankets
are closed upwards (conditioning on more never raises :math:`H(Y \\mid \\cdot)`),
so M is a boundary iff removing any single variable breaks it, and the
boundary is unique iff exactly one such M exists.  When the input
distribution is strictly positive it is unique and equals the set of strongly
relevant variables (Pearl 1988, the intersection property); otherwise it may
or may not be, and ``boundary_unique`` says which.  By Theorem 3 of Louppe et
al. (2013), X is irrelevant iff its K=1 importance is 0.

All tests use the subset-entropy table, so the cost is one look-up per term.

On an exact distribution (``table.exact``) a term counts as 0 at or below
``tol`` (1e-9 bits by default: rounding only).  On a sample, plug-in estimates
are never exactly 0, and a threshold calls noise relevant; there, unless a
``tol`` is given, every term is a *G-test* of conditional independence
(:func:`g_test`, issue 24):

* :math:`G = 2N\\ln 2\\,\\hat I(X_m;Y \\mid X_B)` (:math:`\\hat I` the plug-in
  estimate in bits, N the sample size), referred to :math:`\\chi^2_{df}` with
  :math:`df = \\sum_b (r_b-1)(c_b-1)` over the non-empty strata b of
  :math:`X_B`, :math:`r_b` and :math:`c_b` the levels of :math:`X_m` and Y
  seen in stratum b (df = 0: G = 0 and p = 1);
* a test is *adequate* when the average expected count of its table,
  :math:`N / (r\\,c\\,S_B)`, is at least 5 (Cochran), with r and c the levels
  of :math:`X_m` and Y seen in the sample and :math:`S_B` the non-empty strata
  of :math:`X_B`; then also :math:`N \\ge 5\\,df`.  A test that is not adequate
  is *sparse*: it is computed but never rejects;
* the strong test (:math:`B = V^{-m}`) is corrected by Holm across the
  variables whose strong test is adequate, at level ``alpha`` (0.05): the
  family-wise error of the "strong" calls is at most alpha;
* the weak tests (every :math:`B \\subsetneq V^{-m}`) are corrected by
  Bonferroni across the adequate ones of each variable, at level alpha.

Classes on a sample: ``"strong"`` (the strong test rejects); ``"weak"`` (the
strong test is adequate and does not reject, a weak test rejects);
``"irrelevant"`` (every test adequate, none rejects); ``"undecided"`` (no
class is supported: a weak test rejects but the strong test is sparse, or
nothing rejects and some test is sparse).  A sparse test never makes a
variable strong.  The degree is the smallest :math:`|B|` of a rejected test.

As N grows with the distribution fixed, every test becomes adequate (the
cells are finite), a test of a positive conditional information rejects with
probability tending to 1 (G grows like N while the corrected critical values
stay fixed), and a test of a zero one rejects with probability at most its
corrected level.  So the probability that the classes equal the exact classes
tends to at least 1 - 2 alpha, and to 1 with a level that shrinks with N.
Each irrelevant variable is called strong or weak with probability at most
about 2 alpha (alpha for each family; in practice far less, Bonferroni being
conservative).

The Markov boundary on a sample is tested too (:func:`_sample_boundary`): a set M
is accepted as a blanket when the G-test of :math:`Y \\perp X_{V \\setminus M} \\mid X_M`
(:math:`G = 2N\\ln 2\\,[\\hat H(Y \\mid X_M) - \\hat H(Y \\mid X_V)]`,
:math:`df = \\sum_b (r_b - 1)(c_b - 1)` over the strata b of :math:`X_M`, with
:math:`r_b` the values of :math:`X_{V \\setminus M}` seen in b) is adequate and does
not reject at ``alpha``; the boundary is the accepted M of least size (the largest
p-value among them).  It is *decided* only when every test of a smaller M was adequate
(and rejected): a sparse smaller M might be a blanket the rows cannot show.  Otherwise
the boundary "cannot be decided from N rows" (``minimal_boundary`` empty,
``test["boundary"]["decided"]`` False), never a set that a plug-in threshold let noise
into.  See ``docs/relevance-on-samples.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from varimp_core.exact.information import SubsetEntropies, members, popcount, subset_entropies
from varimp_core.data.table import DiscreteTable

__all__ = ["RelevanceResult", "relevance", "relevance_with_importances", "default_tolerances",
           "g_test", "CLASSES", "SAMPLE_CLASSES", "DEFAULT_ALPHA"]

CLASSES = ("strong", "weak", "irrelevant")
#: Classes on a sample (G-tests): :data:`CLASSES` and ``"undecided"``.
SAMPLE_CLASSES = CLASSES + ("undecided",)
#: Default level of the G-tests on a sample.
DEFAULT_ALPHA = 0.05
#: Least average expected count per cell of an adequate test (Cochran 1954).
MIN_EXPECTED = 5.0
#: Most G-tests :func:`relevance` runs on a sample (about 0.3 ms each): beyond, the weak
#: tests stop at the largest |B| that fits, and a variable none of them shows relevant is
#: "undecided" (its irrelevance needs every B).
MAX_TESTS = 50_000


@dataclass(frozen=True)
class RelevanceResult:
    """Relevance class and degree of each variable, and a Markov boundary.

    Attributes
    ----------
    variables : tuple of str
    relevance : tuple of str
        ``"strong"``, ``"weak"`` or ``"irrelevant"`` per variable.
    degree : tuple of (int or None)
        Smallest conditioning-set size with positive information; None if irrelevant.
    markov_boundary : tuple of str or None
        A minimal Markov boundary. None when the distribution is not strictly
        positive (then boundaries need not be unique); see ``minimal_boundary``.
    minimal_boundary : tuple of str
        A minimal-size set M with :math:`H(Y|X_M) = H(Y|X_V)` (always reported).
    strictly_positive : bool
        Every combination of input values has positive probability.
    tol : float
        Threshold of the terms :math:`I(X_m;Y \\mid B)`, in bits.
    boundary_unique : bool or None
        True when ``minimal_boundary`` is the only Markov boundary (the only
        blanket from which no variable can be removed, at threshold ``tol``),
        False when there are others; None when not known (a result stored
        before this field existed).
    test : dict or None
        None when the classes come from the threshold ``tol`` (exact
        distributions, or a ``tol`` given).  On a sample classed by G-tests:
        ``name`` ("G-test"), ``level``, ``correction``, ``df`` and ``sparse``
        (the rules, in words), and per variable, for its strong test
        (:math:`B = V^{-m}`): ``statistic`` (G), ``df_values``, ``p_value``
        (uncorrected) and ``adequate``; ``relevant`` (True: some test rejects,
        False: every test adequate and none rejects, None: not known); ``n`` the
        sample size; ``max_subset_size`` (None, or the largest |B| of the weak
        tests when the inputs are too many for all 2^(p-1), :data:`MAX_TESTS`).
    """

    variables: tuple
    relevance: tuple
    degree: tuple
    markov_boundary: tuple | None
    minimal_boundary: tuple
    strictly_positive: bool
    tol: float
    boundary_unique: bool | None = None
    test: dict | None = None

    def to_dict(self) -> dict:
        """The ``relevance --format json`` object of the command line."""
        d = {
            "variables": list(self.variables),
            "relevance": list(self.relevance),
            "degree": list(self.degree),
            "markov_boundary": None if self.markov_boundary is None else list(self.markov_boundary),
            "minimal_boundary": list(self.minimal_boundary),
            "strictly_positive": self.strictly_positive,
            "tol": self.tol,
            "boundary_unique": self.boundary_unique,
        }
        if self.test is not None:   # a sample classed by G-tests
            d["test"] = dict(self.test)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "RelevanceResult":
        """The RelevanceResult that :meth:`to_dict` wrote."""
        boundary = d["markov_boundary"]
        return cls(variables=tuple(d["variables"]), relevance=tuple(d["relevance"]),
                   degree=tuple(d["degree"]),
                   markov_boundary=None if boundary is None else tuple(boundary),
                   minimal_boundary=tuple(d["minimal_boundary"]),
                   strictly_positive=bool(d["strictly_positive"]), tol=float(d["tol"]),
                   boundary_unique=None if d.get("boundary_unique") is None
                   else bool(d["boundary_unique"]),
                   test=None if d.get("test") is None else dict(d["test"]))

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame({"variable": list(self.variables), "relevance": list(self.relevance),
                             "degree": list(self.degree),
                             "in_markov_boundary": [v in self.minimal_boundary for v in self.variables]})


#: Largest default threshold for a sample, in bits.
MAX_DEFAULT_TOL = 0.05


def default_tolerances(table: DiscreteTable) -> tuple[float, float]:
    """Default thresholds (bits) of :func:`relevance` for a sample: (terms, boundary).

    Under independence, :math:`2N\\ln 2\\,\\hat I(X;Y \\mid Z)` of the plug-in
    estimate from N draws is asymptotically :math:`\\chi^2` with
    :math:`(|\\mathcal Y|-1)(|\\mathcal X|-1)|\\mathcal Z|` degrees of freedom, so
    its mean (the bias, Miller 1955; ``plugin_bias`` for :math:`Z=\\emptyset`)
    is that number over :math:`2N\\ln 2`.  Each threshold is the bias of the
    largest statistic of its kind that :func:`relevance` tests:

    * the terms :math:`I(X_m;Y \\mid B)` are largest at :math:`B = V^{-m}`:
      :math:`\\max_m (|\\mathcal Y|-1)(c_m-1)\\prod_{j \\ne m} c_j / (2N\\ln 2)`;
    * the boundary test :math:`H(Y \\mid X_M) - H(Y \\mid X_V) = I(Y; X_{V \\setminus M}
      \\mid X_M)` has :math:`(|\\mathcal Y|-1)(\\prod_{V \\setminus M} c - 1)\\prod_M c`
      degrees of freedom, largest at :math:`M = \\emptyset`:
      :math:`(|\\mathcal Y|-1)(\\prod_j c_j - 1) / (2N\\ln 2)`.

    Both are capped at ``MAX_DEFAULT_TOL``.  Heuristics (a mean, not a
    quantile): pass your own ``tol`` for real analyses.

    Parameters
    ----------
    table : DiscreteTable
        A sample (N = its total weight); :math:`c_j` are its declared levels.

    Returns
    -------
    (float, float)
    """
    n = table.total_weight
    scale = (table.n_classes - 1) / (2 * n * np.log(2))
    log_c = np.log(table.n_levels.astype(float))
    with np.errstate(divide="ignore"):   # c_m = 1: a constant input, no degree of freedom
        log_terms = np.log(table.n_levels.astype(float) - 1) + (log_c.sum() - log_c)
    log_all = float(log_c.sum())
    terms = np.exp(min(float(log_terms.max()), 700.0)) if log_terms.size else 0.0
    boundary = np.expm1(min(log_all, 700.0))   # prod c - 1, without overflow for many inputs
    return (float(min(MAX_DEFAULT_TOL, scale * terms)),
            float(min(MAX_DEFAULT_TOL, scale * boundary)))


def _stratum_codes(table: DiscreteTable, mask: int) -> np.ndarray:
    """Code 0 .. S-1 of each row's stratum of :math:`X_B` (B the bit mask)."""
    cols = members(int(mask))
    n = table.X.shape[0]
    if not cols:
        return np.zeros(n, dtype=np.int64)
    sub = table.X[:, cols]
    span = sub.max(axis=0).astype(float) + 1
    if float(np.prod(span)) < 2.0 ** 62:
        strides = np.concatenate([np.cumprod(span[::-1])[::-1][1:], [1]]).astype(np.int64)
        return np.unique(sub @ strides, return_inverse=True)[1].ravel()
    return np.unique(sub, axis=0, return_inverse=True)[1].ravel()


def _levels_per_stratum(strata: np.ndarray, codes: np.ndarray, n_strata: int) -> np.ndarray:
    """Number of distinct ``codes`` seen in each stratum (rows all have positive weight)."""
    pairs = np.unique(strata * (int(codes.max()) + 1) + codes)
    return np.bincount(pairs // (int(codes.max()) + 1), minlength=n_strata)


def g_test(table: DiscreteTable, m: int, cond_mask: int, cmi_bits: float | None = None
           ) -> dict:
    """G-test of :math:`X_m \\perp Y \\mid X_B` on a sample (``table`` holds counts).

    .. math::

        G = 2N\\ln 2\\,\\hat I(X_m; Y \\mid X_B), \\qquad
        df = \\sum_{b:\\,n_b > 0} (r_b - 1)(c_b - 1),

    with :math:`\\hat I` the plug-in conditional mutual information in bits,
    N the total weight, and :math:`r_b`, :math:`c_b` the levels of
    :math:`X_m` and Y seen in stratum b of :math:`X_B`.  The p-value is
    :math:`P(\\chi^2_{df} \\ge G)` (1 when df = 0, where G = 0 too).  The
    test is adequate when the average expected count :math:`N/(r c S_B)` is
    at least 5 (r, c: levels of :math:`X_m` and Y seen in the sample,
    :math:`S_B` the non-empty strata of :math:`X_B`).

    Parameters
    ----------
    table : DiscreteTable
    m : int
        The tested input.
    cond_mask : int
        Bit mask of B (without m).
    cmi_bits : float, optional
        :math:`\\hat I` if already known (else computed from the table).

    Returns
    -------
    dict
        ``statistic``, ``df``, ``p_value``, ``adequate``, ``cmi`` (bits),
        ``n``, ``strata``, ``expected`` (the average expected count).
    """
    from scipy.stats import chi2

    if cond_mask >> m & 1:
        raise ValueError(f"The conditioning set must not contain the tested input {m}.")
    n = float(table.total_weight)
    if cmi_bits is None:
        from varimp_core.exact.information import conditional_mutual_information
        cmi_bits = conditional_mutual_information(table, m, members(int(cond_mask)))
    cmi_bits = max(float(cmi_bits), 0.0)
    strata = _stratum_codes(table, cond_mask)
    n_strata = int(strata.max()) + 1 if strata.size else 0
    xm, y = table.X[:, m], table.y
    r_b = _levels_per_stratum(strata, xm, n_strata) if n_strata else np.zeros(0, int)
    c_b = _levels_per_stratum(strata, y, n_strata) if n_strata else np.zeros(0, int)
    df = int(np.sum((r_b - 1) * (c_b - 1)))
    g = 2.0 * n * np.log(2.0) * cmi_bits
    if df == 0:
        g, pval = 0.0, 1.0   # one level of X_m or Y in every stratum: the plug-in is 0
    else:
        pval = float(chi2.sf(g, df))
    cells = len(np.unique(xm)) * len(np.unique(y)) * n_strata if n_strata else 0
    expected = n / cells if cells else 0.0
    return {"statistic": float(g), "df": df, "p_value": pval,
            "adequate": bool(cells and expected >= MIN_EXPECTED), "cmi": cmi_bits,
            "n": n, "strata": n_strata, "expected": float(expected)}


#: Most blanket tests of :func:`_sample_boundary` (beyond: the boundary is undecided).
MAX_BOUNDARY_TESTS = 20_000


def _sample_boundary(table: DiscreteTable, ent: SubsetEntropies, alpha: float
                     ) -> tuple[int | None, dict]:
    """The Markov boundary of a sample by G-tests of blankets, smallest sets first.

    For each M, by increasing size, :math:`Y \\perp X_{V \\setminus M} \\mid X_M` is
    tested as in :func:`g_test`, with :math:`X_{V \\setminus M}` as one variable:
    :math:`G = 2N\\ln 2\\,[\\hat H(Y \\mid X_M) - \\hat H(Y \\mid X_V)]`,
    :math:`df = \\sum_b (r_b - 1)(c_b - 1)`; adequate when
    :math:`N/(r\\,c\\,S_M) \\ge 5` (r: values of :math:`X_{V \\setminus M}`, c: classes,
    :math:`S_M`: strata of :math:`X_M`).  M = V is a blanket by definition.

    Returns
    -------
    (mask or None, dict)
        The accepted M of least size (ties: the largest p-value), or None when it
        cannot be decided (a smaller M's test was sparse, or more than
        :data:`MAX_BOUNDARY_TESTS` tests were needed); the record: ``decided``,
        ``size``, ``unique`` (one accepted M of that size), ``tests``, ``sparse``
        (sparse tests of sizes below the boundary's), ``level``, ``rule``.
    """
    from itertools import combinations

    from scipy.stats import chi2

    p = table.n_features
    full = (1 << p) - 1
    n = float(table.total_weight)
    keep = table.weight > 0
    sub = DiscreteTable(table.X[keep], table.y[keep], table.weight[keep], table.variables,
                        table.target, exact=False) if not keep.all() else table
    h_full = ent.conditional_entropy(full)
    y = sub.y
    classes = len(np.unique(y))
    rule = (f"M is a blanket when the G-test of Y independent of the other inputs given X_M "
            f"is adequate (at least {MIN_EXPECTED:g} expected rows per cell) and does not "
            f"reject at {alpha:g}; the boundary is the accepted M of least size, decided only "
            "when every smaller M's test was adequate")
    record = {"level": float(alpha), "rule": rule, "tests": 0, "sparse": 0, "decided": False,
              "size": None, "unique": None}
    for k in range(p + 1):
        accepted = []
        for cols in combinations(range(p), k):
            mask = sum(1 << j for j in cols)
            if mask == full:
                accepted.append((1.0, mask))
                continue
            record["tests"] += 1
            if record["tests"] > MAX_BOUNDARY_TESTS:
                record["rule"] += f"; more than {MAX_BOUNDARY_TESTS:,} tests: not decided"
                return None, record
            strata = _stratum_codes(sub, mask)
            rest = _stratum_codes(sub, full & ~mask)
            n_strata = int(strata.max()) + 1
            r_b = _levels_per_stratum(strata, rest, n_strata)
            c_b = _levels_per_stratum(strata, y, n_strata)
            df = int(np.sum((r_b - 1) * (c_b - 1)))
            g = 2.0 * n * np.log(2.0) * max(float(ent.conditional_entropy(mask)) - h_full, 0.0)
            pval = 1.0 if df == 0 else float(chi2.sf(g, df))
            cells = (int(rest.max()) + 1) * classes * n_strata
            if n / cells < MIN_EXPECTED:
                record["sparse"] += 1
            elif pval >= alpha:
                accepted.append((pval, mask))
        if accepted:
            record["size"] = k
            record["unique"] = len(accepted) == 1
            record["decided"] = record["sparse"] == 0
            if not record["decided"]:
                record["size"] = record["unique"] = None
                return None, record
            return max(accepted)[1], record
    return None, record   # unreachable: M = V is always accepted


def _holm(pvals: list, alpha: float) -> list:
    """Holm's step-down rejections of the non-None p-values at family-wise level alpha."""
    idx = [i for i, q in enumerate(pvals) if q is not None]
    order = sorted(idx, key=lambda i: pvals[i])
    out = [False] * len(pvals)
    for k, i in enumerate(order):
        if pvals[i] > alpha / (len(order) - k):
            break
        out[i] = True
    return out


def _refine(inv: np.ndarray, col: np.ndarray) -> tuple[np.ndarray, int]:
    """Cells of (cells ``inv``, ``col``): each row's code, and their number."""
    key = inv * (int(col.max()) + 1) + col
    u, out = np.unique(key, return_inverse=True)
    return out.ravel(), int(u.size)


def _all_tests(table: DiscreteTable, ent: SubsetEntropies, max_size: int | None = None) -> dict:
    """:func:`g_test` of every (m, B), B not containing m, keyed ``(m, mask)``
    (only :math:`|B| \\le` ``max_size`` when given).

    The same numbers as :func:`g_test`, found level by level: the strata of each B
    are refined into those of :math:`B \\cup \\{m\\}` and of :math:`(X_B, Y)`, and
    :math:`r_b`, :math:`c_b` are counts of the refined cells in each stratum.
    """
    from scipy.stats import chi2

    p = table.n_features
    n = float(table.total_weight)
    X, y = table.X, table.y
    r_all = [int(np.unique(X[:, m]).size) for m in range(p)]
    c_all = int(np.unique(y).size)
    keys, stats, dfs = [], [], []
    level = {0: (np.zeros(table.n_rows, dtype=np.int64), 1)}
    for _ in range(p if max_size is None else min(p, max_size + 1)):
        nxt = {}
        for mask, (inv_b, n_b) in level.items():
            inv_by, n_by = _refine(inv_b, y)
            par = np.zeros(n_by, dtype=np.int64)
            par[inv_by] = inv_b
            c_b = np.bincount(par, minlength=n_b)
            for m in range(p):
                if mask >> m & 1:
                    continue
                child = mask | 1 << m
                if child not in nxt:
                    nxt[child] = _refine(inv_b, X[:, m])
                inv_c, n_c = nxt[child]
                par = np.zeros(n_c, dtype=np.int64)
                par[inv_c] = inv_b
                r_b = np.bincount(par, minlength=n_b)
                df = int(np.sum((r_b - 1) * (c_b - 1)))
                g = 2.0 * n * np.log(2.0) * float(ent.cmi(m, [mask])[0]) if df else 0.0
                cells = r_all[m] * c_all * n_b
                keys.append((m, mask, n_b, cells))
                stats.append(g)
                dfs.append(df)
        level = nxt
    dfs_a = np.asarray(dfs, dtype=float)
    pv = np.ones(len(dfs))
    pos = dfs_a > 0
    pv[pos] = chi2.sf(np.asarray(stats)[pos], dfs_a[pos])
    out = {}
    for (m, mask, n_b, cells), g, df, q in zip(keys, stats, dfs, pv):
        expected = n / cells
        out[m, mask] = {"statistic": float(g), "df": df, "p_value": float(q),
                        "adequate": bool(expected >= MIN_EXPECTED), "strata": n_b,
                        "expected": float(expected)}
    return out


def _sample_classes(table: DiscreteTable, ent: SubsetEntropies, alpha: float
                    ) -> tuple[list, list, dict]:
    """Classes, degrees and the ``test`` record of :func:`relevance` on a sample."""
    from math import comb

    p = table.n_features
    full = (1 << p) - 1
    max_size, count = None, 0   # the largest |B| within MAX_TESTS, when not all fit
    for k in range(p):
        count += p * comb(p - 1, k)
        if count > MAX_TESTS:
            max_size = max(k - 1, 0)
            break
    tests = _all_tests(table, ent, max_size)   # (m, mask) -> the g_test numbers
    for m in range(p):   # the strong tests, when beyond max_size
        if (m, full & ~(1 << m)) not in tests:
            tests[m, full & ~(1 << m)] = g_test(table, m, full & ~(1 << m),
                                               float(ent.cmi(m, [full & ~(1 << m)])[0]))
    strong_t = [tests[m, full & ~(1 << m)] for m in range(p)]
    strong_rej = _holm([t["p_value"] if t["adequate"] else None for t in strong_t], alpha)
    by_var = [[] for _ in range(p)]   # (mask, test) of every B strictly inside V^{-m}
    for (m, mask), t in tests.items():
        if mask != full & ~(1 << m):
            by_var[m].append((mask, t))
    classes, degrees, relevant = [], [], []
    for m in range(p):
        n_smaller = (1 << (p - 1)) - 1   # every B strictly inside V^{-m}
        smaller = by_var[m]
        tried = [(mask, t) for mask, t in smaller if t["adequate"]]
        level = alpha / len(tried) if tried else 0.0
        rejected = [mask for mask, t in tried if t["p_value"] <= level]
        sizes = [bin(mask).count("1") for mask in rejected]
        if strong_rej[m]:
            sizes.append(p - 1)
        degrees.append(min(sizes) if sizes else None)
        relevant.append(True if sizes else False if (strong_t[m]["adequate"]
                                                       and len(tried) == n_smaller) else None)
        if strong_rej[m]:
            classes.append("strong")
        elif rejected:
            classes.append("weak" if strong_t[m]["adequate"] else "undecided")
        elif strong_t[m]["adequate"] and len(tried) == n_smaller:
            classes.append("irrelevant")
        else:
            classes.append("undecided")
    record = {
        "name": "G-test", "level": float(alpha),
        "correction": "Holm across variables (strong test, B = all other inputs); Bonferroni "
                      "across the adequate smaller sets B of each variable (weak tests)",
        "df": "sum over non-empty strata b of X_B of (r_b - 1)(c_b - 1), r_b and c_b the "
              "levels of X_m and Y seen in b",
        "sparse": f"a test is sparse (never rejects) when N / (r c S_B) < {MIN_EXPECTED:g}, "
                  "r and c the levels of X_m and Y seen, S_B the non-empty strata of X_B",
        "n": float(table.total_weight),
        "statistic": [t["statistic"] for t in strong_t],
        "df_values": [t["df"] for t in strong_t],
        "p_value": [t["p_value"] for t in strong_t],
        "adequate": [t["adequate"] for t in strong_t],
        "relevant": relevant,
        "max_subset_size": max_size,
    }
    return classes, degrees, record


def relevance(table: DiscreteTable, *, tol: float | None = None,
              entropies: SubsetEntropies | None = None,
              alpha: float = DEFAULT_ALPHA) -> RelevanceResult:
    """Classify every variable as strongly, weakly or not relevant.

    Parameters
    ----------
    table : DiscreteTable
    tol : float, optional
        Information (bits) at or below which a term counts as zero, in the
        relevance classes and in the Markov boundary test. Defaults to 1e-9
        for exact tables and, for samples, to the plug-in bias of the largest
        term tested, :math:`I(X_m;Y \\mid V^{-m})`:
        :math:`\\max_m (|Y|-1)(c_m-1)\\prod_{B=V^{-m}} c / (2N\\ln 2)`, capped at
        0.05 bits; the boundary test then uses the bias of its own largest
        statistic, :math:`(|Y|-1)(\\prod_j c_j - 1)/(2N\\ln 2)`, capped alike
        (:func:`default_tolerances`). Heuristics; pass your own for real
        analyses.  On a sample without ``tol`` the classes come from G-tests
        (module docstring) and the default thresholds serve the Markov
        boundary only; a ``tol`` given on a sample restores the threshold
        classes.
    entropies : SubsetEntropies, optional
    alpha : float, default 0.05
        Level of the G-tests on a sample (unused otherwise).

    Returns
    -------
    RelevanceResult
        ``tol`` is the threshold of the terms; ``test`` describes the G-tests
        (None when the classes come from the threshold).
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be a level between 0 and 1, got {alpha!r}.")
    if tol is not None and (not np.isfinite(tol) or tol < 0):
        raise ValueError(f"tol must be a non-negative number of bits, got {tol!r}.")
    ent = entropies if entropies is not None else subset_entropies(table)
    p = table.n_features
    use_test = tol is None and not table.exact
    if tol is not None:
        boundary_tol = tol
    elif table.exact:
        tol = boundary_tol = 1e-9
    else:
        tol, boundary_tol = default_tolerances(table)
    masks = np.arange(1 << p, dtype=np.int64)
    sizes = popcount(masks)
    full = (1 << p) - 1
    classes, degrees, record = [], [], None
    if use_test:
        classes, degrees, record = _sample_classes(table, ent, alpha)
        best_mask, record["boundary"] = _sample_boundary(table, ent, alpha)
    for m in range(p if not use_test else 0):
        bit = 1 << m
        b = masks[(masks & bit) == 0]
        cmi = ent.cmi(m, b)
        positive = cmi > tol
        if not positive.any():
            classes.append("irrelevant")
            degrees.append(None)
            continue
        degrees.append(int(sizes[b][positive].min()))
        strong = ent.cmi(m, [full & ~bit])[0] > tol
        classes.append("strong" if strong else "weak")
    h_full = ent.conditional_entropy(full)
    cond = ent.hxy - ent.hx
    blanket = cond <= h_full + boundary_tol
    ok = masks[blanket]
    best = ok[np.argmin(sizes[ok])]
    boundaries = blanket.copy()   # blankets that lose the property without any one variable
    for j in range(p):
        has = (masks >> j & 1).astype(bool)
        boundaries &= ~(has & blanket[masks ^ (1 << j)])
    unique = bool(np.count_nonzero(boundaries) == 1)
    if use_test:   # the tested boundary replaces the threshold's
        best = best_mask
        unique = None if best_mask is None else record["boundary"]["unique"]
    boundary = () if best is None else tuple(table.variables[j] for j in members(int(best)))
    log_cells = float(np.log(table.n_levels.astype(float)).sum())
    seen = table.X[table.weight > 0]   # a cell is there only with positive probability
    x_rows = np.unique(seen, axis=0).shape[0] if seen.shape[0] else 0
    positive_dist = log_cells < 60 and x_rows == round(np.exp(log_cells))
    return RelevanceResult(
        variables=table.variables,
        relevance=tuple(classes),
        degree=tuple(degrees),
        markov_boundary=boundary if positive_dist and best is not None else None,
        minimal_boundary=boundary,
        strictly_positive=bool(positive_dist),
        tol=float(tol),
        boundary_unique=unique,
        test=record,
    )


def relevance_with_importances(table: DiscreteTable, *, tol: float | None = None,
                               max_features: int | None = None) -> dict:
    """Relevance classes of ``table`` beside each variable's K = 1 importance, as JSON.

    The importance of a totally randomized infinite forest (Eqn 3) is zero
    exactly for the irrelevant variables (Louppe et al. 2013, Theorem 3), so
    the two are drawn together.

    Parameters
    ----------
    table : DiscreteTable
    tol : float, optional
        As :func:`relevance`.
    max_features : int, optional
        The most inputs to test (every subset of the others is); beyond it
        ``relevance`` is None and ``message`` says why.

    Returns
    -------
    view : dict
        ``relevance`` (:meth:`RelevanceResult.to_dict` or None), ``importances``
        (list, bits), ``units``, ``exact`` and ``message`` (None, or the sentence).
    """
    from varimp_core.exact.eqn3 import eqn3_importances

    p = table.n_features
    if max_features is not None and p > max_features:
        return {"relevance": None, "exact": bool(table.exact), "message":
                f"Relevance classes test every subset of the other inputs: this data has "
                f"{p:,} inputs, more than the {max_features} this server allows "
                f"(VARIMP_MAX_EXACT_FEATURES). Choose data with fewer inputs; the p-values "
                f"below work for any number."}
    imp = eqn3_importances(table)
    return {"relevance": relevance(table, tol=tol).to_dict(), "exact": bool(table.exact),
            "importances": [float(v) for v in imp.importances], "units": imp.units,
            "message": None}
