"""Plotly figure builders: pure functions ``result -> go.Figure`` that also work in a notebook.

One module per kind of result; the ``*_captions`` modules turn results into the tables and
sentences a figure's caption reads (fit tables, AUC tables, p-values), with no word about a
job or a browser.
"""

from varimp_core.plots import (convergence, decomposition, dependence, distributions,
                               distributions_captions, importances, interactions, masking,
                               measures, measures_captions, selection, selection_captions, stability,
                               style)
from varimp_core.plots import explain

__all__ = ["convergence", "decomposition", "dependence", "distributions", "explain",
           "distributions_captions", "importances", "interactions", "masking", "measures",
           "measures_captions", "selection", "selection_captions", "stability", "style"]
