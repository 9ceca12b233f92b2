"""Logic behind the Importances page, as plain functions tests can call.

The page wires these to components; every number comes from the core
(:func:`varimp_core.api.compute_importances`) through the shared cache, and
every figure from :mod:`varimp_core.plots.importances`.

The page's constants, URL parameters, data choice and settings live in
:mod:`pages._ui.importances_state`, computing and caching in
:mod:`pages._ui.importances_compute`, figures, texts, table and CSV export in
:mod:`pages._ui.importances_render`; this module re-exports all of them (the
page, the tests and the other pages' logic use ``importances_logic``).
"""

from __future__ import annotations

from . import datasource  # noqa: F401  (tests read importances_logic.datasource)
from .common import neutralise_cell
from .importances_compute import (CacheMiss, cached_render, cached_result, compute_view,
                                  exact_settings_for, make_loader)
from .importances_render import (csv_filename, csv_text, exact_note, render, table_columns,
                                 table_rows, theorem2_text)
from .importances_state import (DEFAULT_BOOTSTRAP, MAX_TREES_UI, METHOD_OPTIONS, PARAMS, PREFIX,
                                SAMPLED, SEMANTICS_OPTIONS, data_feature_count,
                                data_params_for_page, default_method, field_classes,
                                initial_state, method_options, page_query,
                                settings_from_controls, whole_number)

__all__ = [
    "PREFIX", "PARAMS", "SAMPLED", "METHOD_OPTIONS", "SEMANTICS_OPTIONS", "MAX_TREES_UI",
    "DEFAULT_BOOTSTRAP", "data_params_for_page", "data_feature_count", "initial_state",
    "default_method", "method_options", "whole_number", "settings_from_controls", "page_query",
    "field_classes", "exact_settings_for", "make_loader", "CacheMiss", "cached_result",
    "compute_view", "cached_render", "theorem2_text", "exact_note", "table_columns", "table_rows",
    "csv_text", "csv_filename", "neutralise_cell", "render",
]
