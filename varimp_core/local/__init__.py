"""Local variable importance (Ciss 2015) and what it says: positions per observation for
scikit-learn forests (``importance``) and for varimp's multiway forest (``multiway``),
interactions and partial importance (``interactions``), Friedman's partial dependence and ICE
(``partial_dependence``), Ciss's dependence over responses (``response_dependence``), the
feature lookup they share (``features``) and a forest fitted on some rows and assessed on
others (``heldout``).

Local MDI (Sutera et al. 2021), exact (``local_mdi``; binary forests: ``local_binary``) and of fitted forests, with Saabas,
TreeSHAP and one row's comparison (``explain``)."""

from varimp_core.local.explain import (Contributions, RowExplanation, explain_row,  # noqa: E402
                                       multiway_local_mdi, multiway_saabas, sklearn_local_mdi,
                                       sklearn_saabas, sklearn_treeshap)
from varimp_core.local.local_binary import exact_binary_local_mdi  # noqa: E402
from varimp_core.local.local_mdi import LocalMDI, exact_local_mdi  # noqa: E402

