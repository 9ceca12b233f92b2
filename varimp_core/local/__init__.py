"""Local variable importance (Ciss 2015) and what it says: positions per observation for
scikit-learn forests (``importance``) and for varimp's multiway forest (``multiway``),
interactions and partial importance (``interactions``), Friedman's partial dependence and ICE
(``partial_dependence``), Ciss's dependence over responses (``response_dependence``) and the
feature lookup they share (``features``)."""
