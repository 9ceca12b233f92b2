"""Exact, infinite-forest importances from a discrete joint distribution: entropies of subsets
(``information``), Eqn 3 of Louppe et al. for K=1 (``eqn3``), the lattice of merged nodes
(``lattice``), the law of the best of K candidate splits (``splitting``), the any-K recursion
(``recursion``), the relevance of each variable (``relevance``), and the per-tree covariance
of the importances and the trees of small problems (``moments``, ``enumerate_trees``)."""

