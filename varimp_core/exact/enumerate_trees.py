"""Every distinct tree of the infinite forest of a small problem, with its probability.

The infinite forest is a probability law over trees.  On a small table that
law has few atoms, and :func:`enumerate_trees` lists them: each tree's
probability, its importance vector (:math:`\\sum_t p(t)\\Delta i(t)` per
variable, the quantity the forest averages) and its structure, nested
splits down to leaves with their class weights, ready to be drawn.

The split law is the production one: :func:`~varimp_core.exact.recursion.win_probabilities`
(the multiway recursion's) for ``exact``, and
:func:`~varimp_core.exact.binary.split_win_probabilities` for ``exact-rf`` /
``exact-et``.  A node's trees are its split choices times the products of
its children's trees (children are grown independently given the split);
identical structures never arise from different choices, so the list has no
repeats.  Beyond ``max_trees`` distinct trees the function refuses, with the
count, before building them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["EnumeratedTree", "TreeEnumeration", "enumerate_trees", "count_trees"]


@dataclass(frozen=True)
class EnumeratedTree:
    """One tree: ``probability``, ``importances`` (p,) and ``structure`` (nested dicts).

    A structure node is ``{"leaf": True, "class_weights": {label: weight}}`` or
    ``{"leaf": False, "variable": name, "gain": p(t) Delta i(t), "children": [...]}``
    with, per child, ``"value"`` (multiway: the variable's label) or ``"side"``
    ("<=" / ">") and ``"threshold"`` (binary: the gap ``[lo, hi]`` the threshold
    falls in; scikit-learn's best splitter puts it at the midpoint).
    """

    probability: float
    importances: np.ndarray
    structure: dict

    def to_dict(self) -> dict:
        return {"probability": float(self.probability),
                "importances": np.asarray(self.importances, float).tolist(),
                "structure": self.structure}

    @classmethod
    def from_dict(cls, d: dict) -> "EnumeratedTree":
        return cls(float(d["probability"]), np.asarray(d["importances"], float), d["structure"])


@dataclass(frozen=True)
class TreeEnumeration:
    """The trees of the infinite forest, most probable first."""

    variables: tuple
    trees: tuple
    method: str
    parameters: dict = field(default_factory=dict)
    units: str = "bits"

    @property
    def probabilities(self) -> np.ndarray:
        return np.array([t.probability for t in self.trees])

    @property
    def importances(self) -> np.ndarray:
        """(n_trees, p): each tree's importance vector."""
        return np.array([t.importances for t in self.trees]).reshape(len(self.trees), -1)

    @property
    def mean(self) -> np.ndarray:
        return self.probabilities @ self.importances

    @property
    def covariance(self) -> np.ndarray:
        c = self.importances - self.mean
        return (c * self.probabilities[:, None]).T @ c

    def to_dict(self) -> dict:
        return {"variables": list(self.variables), "trees": [t.to_dict() for t in self.trees],
                "method": self.method, "parameters": dict(self.parameters),
                "units": self.units}

    @classmethod
    def from_dict(cls, d: dict) -> "TreeEnumeration":
        return cls(tuple(d["variables"]), tuple(EnumeratedTree.from_dict(t) for t in d["trees"]),
                   d["method"], dict(d.get("parameters") or {}), d.get("units", "bits"))

    def to_frame(self):
        import pandas as pd
        frame = pd.DataFrame(self.importances, columns=list(self.variables))
        frame.insert(0, "probability", self.probabilities)
        return frame


# ---------------------------------------------------------------------------
# nodes: multiway (row sets and used variables) and binary (row sets)
# ---------------------------------------------------------------------------

def _plain(v):
    return v.item() if hasattr(v, "item") else v


class _Multiway:
    def __init__(self, table, K, max_depth, k_semantics, criterion):
        from varimp_core.exact.eqn3 import validate_max_depth
        from varimp_core.exact.splitting import validate_max_features, validate_semantics
        if criterion not in ("entropy", "gini"):
            raise ValueError("enumerate_trees handles the entropy and gini criteria; "
                             f"got {criterion!r}.")
        validate_semantics(k_semantics)
        self.t = table
        self.p = table.n_features
        self.K = validate_max_features(K, self.p)
        self.depth = validate_max_depth(max_depth, self.p)
        self.sem = k_semantics
        self.criterion = criterion
        w = table.probabilities
        self.keep = np.flatnonzero(w > 0)
        self.w = w

    def root(self):
        return (tuple(self.keep.tolist()), frozenset())

    def weighted_node_impurity(self, rows):
        from varimp_core.exact.lattice import weighted_impurity
        c = np.bincount(self.t.y[list(rows)], weights=self.w[list(rows)],
                        minlength=self.t.n_classes)
        return float(weighted_impurity(c[None, :], self.criterion)[0])

    def leaf_info(self, node):
        rows = list(node[0])
        c = np.bincount(self.t.y[rows], weights=self.w[rows], minlength=self.t.n_classes)
        return {"leaf": True, "class_weights": {str(self.t.y_labels[k]) if self.t.y_labels
                                                else str(k): float(v)
                                                for k, v in enumerate(c) if v > 0}}

    def outcomes(self, node):
        """[(probability, variable, gain, [(child label, child node)])]; [] at a leaf."""
        from varimp_core.exact.lattice import NodeStats
        from varimp_core.exact.recursion import win_probabilities
        rows, used = node
        if len(used) >= self.depth or len(used) == self.p:
            return []
        y = self.t.y[list(rows)]
        if np.unique(y).size <= 1:
            return []
        prob = float(self.w[list(rows)].sum())
        imp = self.weighted_node_impurity(rows)
        cands = [v for v in range(self.p) if v not in used]
        delta, const, parts = [], [], []
        for v in cands:
            col = self.t.X[list(rows), v]
            vals = np.unique(col)
            kids = [tuple(r for r, c in zip(rows, col) if c == x) for x in vals]
            delta.append(max(imp - sum(self.weighted_node_impurity(k) for k in kids), 0.0) / prob)
            const.append(vals.size <= 1)
            parts.append([(x, k) for x, k in zip(vals.tolist(), kids)])
        ns = NodeStats(0, np.array([prob]), np.array([False]), cands,
                       np.array(delta)[:, None], np.array(const)[:, None], [])
        win = win_probabilities(ns, np.array([True]), self.K, self.sem, self.p)[:, 0]
        out = []
        for i, v in enumerate(cands):
            if win[i] > 0:
                labels = self.t.x_labels[v] if self.t.x_labels else None
                kids = [({"value": _plain(labels[x] if labels else x)}, (k, used | {v}))
                        for x, k in parts[i]]
                out.append((float(win[i]), v, prob * delta[i], kids))
        return out


class _Binary:
    def __init__(self, walker, labels):
        self.wk = walker
        self.p = walker.p
        self.labels = labels

    def root(self):
        return (self.wk.root, 0)

    def leaf_info(self, node):
        c = self.wk.class_weights(node[0])
        return {"leaf": True, "class_weights": {str(self.wk.d.classes[k]): float(v)
                                                for k, v in enumerate(c) if v > 0}}

    def outcomes(self, node):
        rows, depth = node
        if self.wk.is_leaf(rows, depth):
            return []
        out = []
        for prob, f, g, left, right, gap in self.wk.outcomes(rows):
            kids = [({"side": "<=", "threshold": list(gap)}, (left, depth + 1)),
                    ({"side": ">", "threshold": list(gap)}, (right, depth + 1))]
            out.append((prob, f, g, kids))
        return out


def _walker(data, method, max_features, max_depth, k_semantics, criterion, min_samples_leaf):
    from varimp_core.data.prepare import PreparedData
    from varimp_core.data.table import DiscreteTable
    table = data.table if isinstance(data, PreparedData) else data
    if not isinstance(table, DiscreteTable):
        raise ValueError(f"Expected prepared data or a DiscreteTable, got {type(data).__name__}.")
    if method == "exact":
        return table, _Multiway(table, max_features, max_depth, k_semantics, criterion)
    if method in ("exact-rf", "exact-et"):
        from varimp_core.exact.binary import binary_inputs
        from varimp_core.exact.moments import BinaryWalker
        X, y, sw = binary_inputs(data)
        wk = BinaryWalker(X, y, method=method, max_features=max_features, max_depth=max_depth,
                           min_samples_leaf=min_samples_leaf, criterion=criterion,
                           sample_weight=sw)
        return table, _Binary(wk, table.variables)
    raise ValueError(f"enumerate_trees supports 'exact', 'exact-rf' and 'exact-et', not "
                     f"{method!r}.")


#: Distinct nodes the enumeration visits at most (its count runs over them first).
MAX_ENUMERATION_NODES = 20_000


def _count(walk, node, memo, outs, cap):
    if node in memo:
        return memo[node]
    if len(memo) >= MAX_ENUMERATION_NODES:
        raise ValueError(f"The infinite forest has more than {MAX_ENUMERATION_NODES:,} distinct "
                         "nodes on this table: too many trees to list.")
    oc = walk.outcomes(node)
    outs[node] = oc
    total = sum(pr for pr, *_ in oc)
    n = 1 if total < 1 - 1e-12 else 0
    for _, _, _, kids in oc:
        prod = 1
        for _, kid in kids:
            prod *= _count(walk, kid, memo, outs, cap)
            prod = min(prod, cap)
        n = min(n + prod, cap)
    memo[node] = n
    return n


def count_trees(data, *, method="exact", max_features=1, max_depth=None, k_semantics="id3",
                criterion="entropy", min_samples_leaf=1, cap: int = 10 ** 18) -> int:
    """Number of distinct trees of the infinite forest (capped at ``cap``)."""
    _, walk = _walker(data, method, max_features, max_depth, k_semantics, criterion,
                      min_samples_leaf)
    return _count(walk, walk.root(), {}, {}, cap)


def enumerate_trees(data, *, method: str = "exact", max_features: int = 1, max_depth=None,
                    k_semantics: str = "id3", criterion: str = "entropy",
                    min_samples_leaf: int = 1, max_trees: int = 64) -> TreeEnumeration:
    """The distinct trees of the infinite forest, with probabilities, importances, structure.

    Parameters
    ----------
    data : PreparedData or DiscreteTable
    method : {"exact", "exact-rf", "exact-et"}
    max_features, max_depth, k_semantics, criterion, min_samples_leaf
        As in :func:`~varimp_core.api.compute_importances` (criterion entropy or gini).
    max_trees : int, default=64
        Refuse, with the count, when there are more distinct trees.

    Returns
    -------
    TreeEnumeration
        Trees sorted by decreasing probability; probabilities sum to 1, and
        ``mean`` / ``covariance`` are the exact moments of
        :func:`~varimp_core.exact.moments.exact_moments`.

    Examples
    --------
    Louppe's toy (thesis, section 7.2.3): X1 in {0, 1, 2}, X2 = Y, Y = (0, 1, 1).

    >>> import numpy as np
    >>> from varimp_core.data.table import DiscreteTable
    >>> t = DiscreteTable.from_codes(np.array([[0, 0], [1, 1], [2, 1]]), np.array([0, 1, 1]))
    >>> e = enumerate_trees(t, method="exact-et", max_features=1)
    >>> sorted(round(float(q), 3) for q in e.probabilities)
    [0.125, 0.125, 0.25, 0.5]
    """
    table, walk = _walker(data, method, max_features, max_depth, k_semantics, criterion,
                          min_samples_leaf)
    outs: dict = {}
    n = _count(walk, walk.root(), {}, outs, cap=max_trees + 1)
    if n > max_trees:
        exact = count_trees(data, method=method, max_features=max_features,
                            max_depth=max_depth, k_semantics=k_semantics, criterion=criterion,
                            min_samples_leaf=min_samples_leaf)
        raise ValueError(f"The infinite forest has {exact:,} distinct trees here, more than "
                         f"max_trees={max_trees}; raise max_trees, lower the depth, or use "
                         "exact_moments for its mean and covariance.")
    p = walk.p
    names = table.variables
    memo: dict = {}

    def trees(node):
        if node in memo:
            return memo[node]
        oc = outs[node]
        total = sum(pr for pr, *_ in oc)
        out = []
        if total < 1 - 1e-12:
            out.append((1.0 - total, np.zeros(p), walk.leaf_info(node)))
        for pr, v, g, kids in oc:
            combos = [(pr, np.zeros(p), [])]
            for info, kid in kids:
                combos = [(a * b, u + w, ch + [{**info, "node": s}])
                          for a, u, ch in combos for b, w, s in trees(kid)]
            for a, u, ch in combos:
                u = u.copy()
                u[v] += g
                out.append((a, u, {"leaf": False, "variable": names[v], "gain": float(g),
                                   "children": ch}))
        memo[node] = out
        return out

    found = sorted(trees(walk.root()), key=lambda t: -t[0])
    units = "bits" if criterion == "entropy" else "gini"
    return TreeEnumeration(
        variables=tuple(names),
        trees=tuple(EnumeratedTree(float(a), u, s) for a, u, s in found),
        method=method,
        parameters={"max_features": max_features, "max_depth": max_depth,
                    "k_semantics": k_semantics if method == "exact" else "sklearn",
                    "criterion": criterion, "min_samples_leaf": int(min_samples_leaf)},
        units=units)
