"""Local variable importance (Ciss 2015) and what it says: positions per observation for
scikit-learn forests (``importance``) and for varimp's multiway forest (``multiway``),
interactions and partial importance (``interactions``), Friedman's partial dependence and ICE
(``partial_dependence``), Ciss's dependence over responses (``response_dependence``), the
feature lookup they share (``features``) and a forest fitted on some rows and assessed on
others (``heldout``)."""
