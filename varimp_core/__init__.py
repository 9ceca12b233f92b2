"""varimp core: exact and sampled random-forest variable importances (no Dash).

The names below are the public face of the package; each is defined in one
module of a subpackage and imported here unchanged:

* :mod:`varimp_core.data` -- reading and typing data (:func:`load_data`
  resolves a problem spec or a CSV/DataFrame into :class:`PreparedData`);
* :mod:`varimp_core.problems` -- the built-in problems (:func:`get_problem`);
* :mod:`varimp_core.exact` -- infinite-forest importances and
  :func:`relevance`;
* :mod:`varimp_core.forests` -- varimp's multiway forest and scikit-learn MDI;
* :mod:`varimp_core.measures` -- MDI-oob, permutation (MDA) and the measure
  suite (:func:`compute_measures`);
* :mod:`varimp_core.local` -- local importance, interactions and partial
  dependence, also of a forest assessed on held-out rows;
* :mod:`varimp_core.studies` -- Monte Carlo replicates, permutation nulls,
  the chance levels of importances on a sample (:func:`chance_levels`), one
  verdict per variable (:func:`importance_verdicts`: relevant, chance or
  undecided, by a permutation maxT test) and leaks (:func:`find_leaks`),
  Li et al.'s protocol and random-subspace selection (RS/SRS);
* :mod:`varimp_core.plots` -- figure builders that draw these results
  (``result -> go.Figure``) and the tables their captions read; imported on first
  use of ``varimp_core.plots``, so the science imports no plotting library.

Every result type has ``to_dict()`` (plain JSON types) and ``from_dict()``.

Examples
--------
Exact infinite-forest importances of XOR with one irrelevant bit (Louppe et
al. 2013, Theorem 2: they sum to I(X;Y) = 1 bit):

>>> import varimp_core as vc
>>> data = vc.load_data(problem="xor:relevant=2,irrelevant=1")
>>> r = vc.compute_importances(data, method="exact", max_features=1)
>>> [round(float(v), 3) for v in r.importances]
[0.5, 0.5, 0.0]
>>> vc.relevance(data.table).relevance
('strong', 'strong', 'irrelevant')

Results survive a JSON round trip:

>>> import json
>>> back = vc.ImportanceResult.from_dict(json.loads(json.dumps(r.to_dict())))
>>> bool((back.importances == r.importances).all())
True
"""

__version__ = "0.1.0"

from varimp_core.api import METHODS, compute_importances, default_method, load_data, summarize
from varimp_core.data.csvfile import DataError
from varimp_core.data.leaks import find_leaks
from varimp_core.data.prepare import PreparedData
from varimp_core.data.summary import describe
from varimp_core.data.table import DiscreteTable
from varimp_core.data.tablejson import table_from_json, table_to_json
from varimp_core.exact.eqn3 import eqn3_importances
from varimp_core.exact.recursion import exact_importances
from varimp_core.exact.relevance import RelevanceResult, relevance
from varimp_core.forests.multiway import grow_forest
from varimp_core.forests.sklearn_mdi import forest_mdi, sklearn_importances
from varimp_core.local.heldout import (fit_local_forest, heldout_local_importance,
                                       heldout_partial_dependences, split_rows)
from varimp_core.local.importance import LocalImportance, fit_uniform_forest, local_importance
from varimp_core.local.interactions import (ImportanceOverLabels, Interactions, PartialImportance,
                                            importance_over_labels, interaction_importance,
                                            interactions, partial_importance)
from varimp_core.local.multiway import forest_local_importance
from varimp_core.local.explain import (Contributions, RowExplanation, explain_row,
                                       multiway_local_mdi, multiway_saabas, sklearn_local_mdi,
                                       sklearn_saabas, sklearn_treeshap)
from varimp_core.local.local_binary import exact_binary_local_mdi
from varimp_core.local.local_mdi import LocalMDI, exact_local_mdi
from varimp_core.local.partial_dependence import (PartialDependence, PartialDependenceSet,
                                                  partial_dependence, partial_dependences)
from varimp_core.local.response_dependence import (DependenceOverResponses,
                                                   dependence_over_responses)
from varimp_core.measures import UndefinedMeasure
from varimp_core.measures.mdi_oob import mdi, mdi_oob, naive_oob, saabas_contributions
from varimp_core.measures.permutation import impurity_corrected, mda_holdout, mda_oob
from varimp_core.measures.suite import MEASURES, compute_measures, measures_frame
from varimp_core.problems.registry import Problem, get_problem, list_problems
from varimp_core.result import ImportanceResult
from varimp_core.studies.chance import ChanceLevels, chance_levels
from varimp_core.studies.convergence import convergence_curve
from varimp_core.studies.distributions import ImportanceDistribution, importance_distribution
from varimp_core.studies.fits import DistributionFit, fit_null_distributions
from varimp_core.studies.masking import MaskingCurves, masking_curves
from varimp_core.studies.masking_report import importance_table
from varimp_core.studies.montecarlo import MonteCarloResult, monte_carlo, sweep, sweep_statistics
from varimp_core.studies.noisy_protocol import StudyResult, mdi_bias_curves, noisy_feature_auc
from varimp_core.studies.nulls import PermutationNull, permutation_null, plugin_bias_overlay
from varimp_core.studies.rs_srs import SubspaceComparison, compare_subspace_methods
from varimp_core.studies.selection import SubspaceSelection, madelon_curves, subspace_selection
from varimp_core.studies.verdicts import VerdictResult, importance_verdicts

__all__ = [
    # entry points and data
    "load_data", "compute_importances", "default_method", "summarize", "METHODS",
    "PreparedData", "DiscreteTable", "DataError", "Problem", "get_problem", "list_problems",
    "describe", "table_to_json", "table_from_json",
    # exact importances and relevance
    "exact_importances", "eqn3_importances", "relevance", "RelevanceResult",
    # forests
    "grow_forest", "sklearn_importances", "forest_mdi",
    # measures
    "mdi", "mdi_oob", "naive_oob", "saabas_contributions", "mda_oob", "mda_holdout",
    "impurity_corrected", "compute_measures", "measures_frame", "MEASURES", "UndefinedMeasure",
    # local importance and dependence
    "local_importance", "fit_uniform_forest", "forest_local_importance", "LocalImportance",
    "interactions", "interaction_importance", "partial_importance", "importance_over_labels",
    "Interactions", "PartialImportance", "ImportanceOverLabels",
    "partial_dependence", "partial_dependences", "PartialDependence", "PartialDependenceSet",
    "dependence_over_responses", "DependenceOverResponses",
    "split_rows", "fit_local_forest", "heldout_local_importance", "heldout_partial_dependences",
    # studies
    "monte_carlo", "sweep", "sweep_statistics", "MonteCarloResult",
    "permutation_null", "plugin_bias_overlay", "PermutationNull",
    "chance_levels", "ChanceLevels",
    "importance_verdicts", "VerdictResult", "find_leaks",
    "fit_null_distributions", "DistributionFit",
    "importance_distribution", "ImportanceDistribution",
    "noisy_feature_auc", "mdi_bias_curves", "StudyResult",
    "subspace_selection", "madelon_curves", "SubspaceSelection",
    "compare_subspace_methods", "SubspaceComparison", "convergence_curve",
    "masking_curves", "MaskingCurves", "importance_table",
    # results
    "ImportanceResult",
    "__version__",
    # local MDI (Sutera et al. 2021), Saabas, TreeSHAP and one row's comparison
    "exact_local_mdi", "exact_binary_local_mdi", "sklearn_local_mdi", "multiway_local_mdi", "LocalMDI",
    "sklearn_saabas", "multiway_saabas", "sklearn_treeshap", "Contributions",
    "explain_row", "RowExplanation",
]

from varimp_core.exact.moments import ImportanceMoments, exact_moments, moments_from_trees  # noqa: E402
__all__ += ["exact_moments", "moments_from_trees", "ImportanceMoments"]
from varimp_core.exact.enumerate_trees import TreeEnumeration, enumerate_trees  # noqa: E402
__all__ += ["enumerate_trees", "TreeEnumeration"]

def __getattr__(name: str):
    """``varimp_core.plots``, imported on first use (PEP 562): plotly only for who draws."""
    if name == "plots":
        import varimp_core.plots as plots

        return plots
    raise AttributeError(f"module 'varimp_core' has no attribute {name!r}")
