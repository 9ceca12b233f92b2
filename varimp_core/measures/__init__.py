"""Importance measures beyond in-sample MDI for scikit-learn forests: MDI, MDI-oob, naive-oob and
Saabas contributions (``mdi_oob``), permutation importances (MDA) and the shadow-corrected MDI
(``permutation``), their per-tree kernels (``tree_kernels``), input checks (``inputs``) and the
suite that fits one forest and runs several measures side by side (``suite``)."""
