"""Exact local MDI of the infinite binary forests ``exact-rf`` and ``exact-et``.

:mod:`varimp_core.exact.binary` computes what the unnormalised MDI of
``RandomForestClassifier(bootstrap=False)`` / ``ExtraTreesClassifier(bootstrap=False)``
converges to, by a recursion over nodes (tight boxes of the table's rows) in
decreasing size, each node with its reach :math:`r_t` (the probability that a
random tree has it) and the law :math:`P_t(j, g)` of its split.  The local MDI
of a row x (Sutera et al. 2021) credits x, in every node t that holds it, with

.. math::

    \\mathrm{Imp}_j(x) \\mathrel{+}= r_t\\, P_t(j, g)\\, \\big[i(t) - i(t_x(j, g))\\big],

:math:`t_x(j, g)` the side of split (j, g) that x falls on.  Weighted by the rows'
weights and divided by the total weight it is the global value
(:math:`\\sum_{x \\in t} w_x [i(t) - i(t_x)] = G_t(j, g)`), and fully grown the
values of x sum to :math:`i(\\mathrm{root}) - i(Y \\mid X = x)`.

The solver's walk is re-implemented here (a subclass that keeps, per batch, the
rows of each chosen split's sides), reading the data structures of
:mod:`varimp_core.exact.binary` without changing that module.
"""

from __future__ import annotations

import numpy as np

from varimp_core.exact import binary as _b
from varimp_core.exact.splitting import validate_max_features
from varimp_core.local.local_mdi import LocalMDI
from varimp_core.measures.inputs import check_int

__all__ = ["exact_binary_local_mdi"]


class _LocalSolver(_b.BinarySolver):
    """:class:`varimp_core.exact.binary.BinarySolver` that also credits every row of a node."""

    def expand(self, box, h, n):
        d, p, L = self.d, self.p, self.L
        B = box.shape[0]
        R = d.ranks
        inside = np.all((R[None] >= box[:, None, :, 0]) & (R[None] <= box[:, None, :, 1]),
                        axis=2)
        sel = inside[:, self.order]
        sub = np.broadcast_to(self.order, sel.shape)[sel].reshape(B, p, n)
        Rall = R[sub]
        Rj = Rall[:, np.arange(p), :, np.arange(p)].transpose(1, 0, 2)
        cw = np.cumsum(self.onehot[sub], axis=2)
        cc = np.cumsum(d.count[sub], axis=2)
        tot = cw[:, 0, -1]
        left = cw[:, :, :-1]
        G = (_b.weighted_node_impurity(tot, d.criterion)[:, None, None] - _b.weighted_node_impurity(left, d.criterion)
             - _b.weighted_node_impurity(tot[:, None, None] - left, d.criterion))
        gap = Rj[:, :, 1:] != Rj[:, :, :-1]
        ok = gap & (cc[:, :, :-1] >= L) & (cc[:, :, -1:] - cc[:, :, :-1] >= L)
        tol = _b.TIE_FRACTION * tot.sum(axis=1)
        nonconst = gap.any(axis=2)
        s = np.where(ok, G, -np.inf)
        if self.method == "exact-et":
            v = self.vals[np.arange(p)[None, :, None], Rj]
            span = v[:, :, -1] - v[:, :, 0]
            PI = np.diff(v, axis=2) / np.where(span > 0, span, 1.0)[:, :, None]
            pos = np.broadcast_to(np.arange(n - 1), s.shape)
        else:
            best = np.argmax(s >= s.max(axis=2, keepdims=True) - tol[:, None, None], axis=2)
            pos = best[:, :, None]
            s = np.take_along_axis(s, pos, axis=2)
            PI = nonconst[:, :, None].astype(float)
        CW = self.draw[nonconst.sum(axis=1)]
        P = np.concatenate([_b._win_batch(s[i:i + k], PI[i:i + k], tol[i:i + k], CW[i:i + k])
                            for i, k in _b.index_chunks(B, self.CHUNK // max(1, (p * s.shape[2]) ** 2))])
        own = (P * np.take_along_axis(G, pos, axis=2)).sum(axis=2)
        bi, fi, gi = np.nonzero(P > 0)
        k = pos[bi, fi, gi]
        Psel = P[bi, fi, gi]
        cl = cw[bi, fi, k]
        ccl = cc[bi, fi, k]
        # the rows' credit: P (i(t) - i(side)), per position along feature fi's order
        Wt = tot[bi].sum(-1)
        Wl = cl.sum(-1)
        it = _b.weighted_node_impurity(tot[bi], d.criterion) / Wt
        il = _b.weighted_node_impurity(cl, d.criterion) / np.where(Wl > 0, Wl, 1.0)
        ir = _b.weighted_node_impurity(tot[bi] - cl, d.criterion) / np.where(Wt - Wl > 0, Wt - Wl, 1.0)
        on_left = np.arange(n)[None, :] <= k[:, None]
        credit = Psel[:, None] * (it[:, None] - np.where(on_left, il[:, None], ir[:, None]))
        self._credit = (bi, fi, sub[bi, fi], credit)
        n_cls = np.stack([(cl > 0).sum(-1), ((tot[bi] - cl) > 0).sum(-1)])
        n_smp = np.stack([ccl, cc[bi, fi, -1] - ccl])
        n_uni = np.stack([k + 1, n - k - 1])
        hh = np.minimum(h[bi] - 1, n_uni - 1)
        split = (n_cls > 1) & (n_smp >= max(2, 2 * L)) & (hh > 0)
        head = np.stack([np.minimum.accumulate(Rall, axis=2),
                         np.maximum.accumulate(Rall, axis=2)], axis=-1)
        rev = Rall[:, :, ::-1]
        tail = np.stack([np.minimum.accumulate(rev, axis=2),
                         np.maximum.accumulate(rev, axis=2)], axis=-1)[:, :, ::-1]
        lbox, rbox = head[bi, fi, k], tail[bi, fi, k + 1]
        kids = (np.concatenate([bi[split[0]], bi[split[1]]]),
                np.concatenate([Psel[split[0]], Psel[split[1]]]),
                np.concatenate([lbox[split[0]], rbox[split[1]]]),
                np.concatenate([hh[0][split[0]], hh[1][split[1]]]),
                np.concatenate([n_uni[0][split[0]], n_uni[1][split[1]]]))
        return own, kids

    def solve_local(self):
        """(global profile (p, n_cols), local (U, p)): the solver's walk, crediting rows."""
        U, p, nc = self.U, self.p, self.n_cols
        H0 = U - 1 if self.max_depth is None else min(self.max_depth, U - 1)
        total = np.zeros((p, nc))
        local = np.zeros((U, p))
        if self.root_is_leaf() or H0 <= 0:
            return total, local
        root = np.stack([np.zeros(p, dtype=np.int64), np.array(self.d.n_distinct) - 1], axis=1)
        start = np.zeros((1, nc))
        start[0, 0] = 1.0
        pending = {U: [[(self.node_keys(root[None], np.array([H0])), start)], 1, 1]}
        for n in range(U, 1, -1):
            if n not in pending:
                continue
            keys, reach = _b._merge(pending.pop(n)[0], nc)
            self.n_split_nodes += keys.shape[0]
            if self.n_split_nodes > self.max_nodes:
                raise self._too_many()
            box, h = self.key_boxes(keys)
            for i, k in _b.index_chunks(keys.shape[0], self.CHUNK // (p * U * 8)):
                own, (kp, kP, kbox, kh, kn) = self.expand(box[i:i + k], h[i:i + k], n)
                r = reach[i:i + k]
                total += own.T @ r
                bi, fi, rows, credit = self._credit
                weight = r.sum(axis=1)[bi]
                np.add.at(local, (rows.ravel(), np.repeat(fi, rows.shape[1])),
                          (credit * weight[:, None]).ravel())
                deeper = np.zeros((kp.size, nc))
                deeper[:, 1:] = r[kp, :-1]
                deeper[:, -1] += r[kp, -1]
                deeper *= kP[:, None]
                kkeys = self.node_keys(kbox, kh)
                for size in np.unique(kn).tolist():
                    at = kn == size
                    slot = pending.setdefault(size, [[], 0, 0])
                    slot[0].append((kkeys[at], deeper[at]))
                    slot[1] += int(at.sum())
                    if slot[1] > max(100_000, 4 * slot[2]):
                        merged = _b._merge(slot[0], nc)
                        slot[:] = [[merged], merged[0].shape[0], merged[0].shape[0]]
        return total / self.d.total_weight, local


def exact_binary_local_mdi(X, y, *, method: str, max_features=None, max_depth=None,
                           min_samples_leaf: int = 1, criterion: str = "entropy",
                           sample_weight=None, variables=None,
                           max_nodes: int = _b.MAX_BINARY_NODES) -> LocalMDI:
    """Exact local MDI of every distinct input row for ``exact-rf`` / ``exact-et``.

    The limit, as the number of trees grows, of :func:`~varimp_core.local.explain.sklearn_local_mdi`
    for ``RandomForestClassifier(bootstrap=False, max_features=K, ...)`` (``"exact-rf"``)
    or ``ExtraTreesClassifier(bootstrap=False, ...)`` (``"exact-et"``) fitted on
    ``(X, y)``:

    .. math::

        \\mathrm{Imp}_j(x) = \\sum_{t \\ni x} r_t \\sum_g P_t(j, g)\\,
            \\big[i(t) - i(t_x(j, g))\\big],

    over the nodes t holding x (reach :math:`r_t`, split law :math:`P_t`, see
    ``docs/exact-binary.md``).

    Parameters
    ----------
    X, y, max_features, max_depth, min_samples_leaf, criterion, sample_weight
        As in :func:`~varimp_core.exact.binary.exact_rf_importances` (small numeric
        tables; the same refusals).
    method : {"exact-rf", "exact-et"}
    variables : sequence of str, optional
    max_nodes : int
        Stop with a sentence past this many distinct split nodes.

    Returns
    -------
    LocalMDI
        One row per distinct input row (``X`` as float32 values, as scikit-learn sees
        them; ``weight`` the summed sample weights), ``global_importances`` the exact
        MDI (equal to ``exact_rf_importances(...).importances``).
    """
    _b._check_method(method)
    d = _b.PreparedBinary(X, y, sample_weight, criterion)
    p = d.n_features
    K = validate_max_features(max_features, p)
    max_depth = check_int("max_depth", max_depth, low=1, allow_none=True)
    L = check_int("min_samples_leaf", min_samples_leaf, low=1)
    est = _b._estimate(d, method, K, max_depth, L, enough=max_nodes)
    refusal = _b._refusal(d, method, est, max_nodes)
    if refusal is not None:
        raise ValueError(refusal)
    solver = _LocalSolver(d, method, K, max_depth, L, p, max_nodes, est)
    prof, local = solver.solve_local()
    # distinct inputs: rows of d with equal ranks share every node, hence every value
    xr, inv = np.unique(d.ranks, axis=0, return_inverse=True)
    inv = inv.ravel()
    first = np.zeros(xr.shape[0], dtype=np.intp)
    first[inv[::-1]] = np.arange(inv.size)[::-1]
    values = local[first]
    w = np.bincount(inv, weights=d.weight, minlength=xr.shape[0])
    Xv = np.stack([d.values[f][xr[:, f]] for f in range(p)], axis=1) if p else xr.astype(float)
    onehot = np.zeros((d.y.size, d.n_classes))
    onehot[np.arange(d.y.size), d.y] = d.weight
    root_counts = onehot.sum(axis=0)
    root = float(_b.weighted_node_impurity(root_counts, criterion) / root_counts.sum())
    if variables is None:
        variables = [str(c) for c in X.columns] if hasattr(X, "columns") else \
            [f"x{i + 1}" for i in range(p)]
    if len(variables) != p:
        raise ValueError(f"variables has {len(variables)} names but X has {p} columns.")
    return LocalMDI(
        variables=tuple(variables), X=Xv, weight=w, values=values,
        global_importances=prof.sum(axis=1), method=method,
        units="bits" if criterion == "entropy" else "gini", root_impurity=root,
        leaf_impurity=root - values.sum(axis=1), standard_errors=None,
        parameters={"max_features": K, "max_depth": max_depth,
                    "min_samples_leaf": int(L), "criterion": criterion,
                    "k_semantics": "sklearn", "n_nodes": int(solver.n_split_nodes)})
