"""Exact, infinite-forest importances from a discrete joint distribution: entropies of subsets
(``information``), Eqn 3 of Louppe et al. for K=1 (``eqn3``), the lattice of merged nodes
(``lattice``), the law of the best of K candidate splits (``splitting``), the any-K recursion
(``recursion``) and the relevance of each variable (``relevance``)."""

from varimp_core.exact.moments import ImportanceMoments, exact_moments, moments_from_trees  # noqa: E402,F401
from varimp_core.exact.enumerate_trees import TreeEnumeration, enumerate_trees  # noqa: E402,F401
