"""Forests that are grown and measured: varimp's own randomized multiway trees on a discrete table
(``multiway``) and scikit-learn random forests / extra-trees with their MDI (``sklearn_mdi``)."""
