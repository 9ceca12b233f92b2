"""Importance measures beyond in-sample MDI for scikit-learn forests: MDI, MDI-oob, naive-oob and
Saabas contributions (``mdi_oob``), permutation importances (MDA) and the shadow-corrected MDI
(``permutation``), their per-tree kernels (``tree_kernels``), input checks (``inputs``) and the
suite that fits one forest and runs several measures side by side (``suite``)."""

__all__ = ["UndefinedMeasure"]


class UndefinedMeasure(ValueError):
    """A measure asked of a forest for which it has no finite value.

    Raised, with a sentence saying what to change, instead of returning a
    value that is infinite or in another measure's units: e.g.
    :func:`~varimp_core.measures.mdi_oob.mdi_oob` of an entropy forest whose
    out-of-bag log score is :math:`-\\infty` (grow it with
    ``criterion='gini'``).  A subclass of ValueError, so code that catches
    ValueError for bad inputs catches it too.

    Examples
    --------
    >>> issubclass(UndefinedMeasure, ValueError)
    True
    """
