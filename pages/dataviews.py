"""The Data page's companion: its settings to data parameters, its summary, its form.

Plain functions tests call without the app; every number comes from the core
through :mod:`pages._framework.datasource`.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from dash import html

from varimp_core.data.prepare import DataError
from varimp_core.problems.registry import get_problem, spec_from_options

from pages._framework import datasource
from pages._framework.controls import option_values, preview_table
from pages._framework.params import Context, ParamSet, sentence

#: The Data page's controls: the data parameters that have one (ids ``data-<key>``).
CONTROLS = ParamSet("data", [datasource.DATA_PARAMS.by_name[n] for n in (
    "source", "problem", "sampling", "n", "seed", "bins", "target", "task", "numeric",
    "exclude", "missing", "dates")])

#: What the page says, in place of a summary, while the upload source has no file yet.
NO_FILE_YET = "Drop a CSV file on the upload area (or click it) to see its summary here."


def data_params(settings: Mapping[str, Any], options: Sequence[Any] = (),
                option_ids: Sequence[dict] = (), upload: Mapping[str, Any] | None = None
                ) -> dict | None:
    """Canonical data parameters from the page's validated settings, or None (no file yet).

    Raises
    ------
    ValueError
        With a sentence, for an invalid problem option.
    """
    s = {**datasource.DATA_PARAMS.defaults(), **settings}
    if s["source"] == "upload":
        if not isinstance(upload, Mapping) or not upload.get("key"):
            return None
        return datasource.canonical_params({
            "source": "upload", "upload": upload["key"], "file": upload.get("file"),
            **{k: s[k] for k in ("target", "task", "numeric", "exclude", "missing", "dates",
                                 "bins")}})
    name = s["problem"].split(":")[0]
    spec = spec_from_options(name, option_values(name, option_ids, options))
    return datasource.canonical_params({
        "source": "problem", "problem": spec, "sampling": s["sampling"], "n": s["n"],
        "seed": s["seed"], "bins": s["bins"]})


def compute(settings, data, progress, options=(), option_ids=(), upload=None) -> dict:
    """The view of the chosen data: ``store`` (the session's ``vi-data``) and ``view``.

    ``{"waiting": True}`` while the upload source has no file yet.
    """
    progress(text="Preparing the data\u2026")
    params = data_params(settings, options or (), option_ids or (), upload)
    if params is None:
        return {"waiting": True}
    try:  # both read one cached view of the data
        return {"store": datasource.session_data(params), "view": datasource.data_view(params)}
    except DataError as exc:
        raise ValueError(sentence(exc)) from None


def apply_choice(controls: Mapping[str, Any]) -> dict:
    """Everything the page shows for a set of control values (as the page's job computes it).

    Returns
    -------
    out : dict
        ``ok``: bool; when True also ``params``, ``query`` (URL query string),
        ``store`` (the ``vi-data`` value) and ``view`` (from
        :func:`datasource.data_view`); when False ``error``, one sentence.
    """
    values = {n: controls.get(n, CONTROLS.by_name[n].default) for n in CONTROLS.names}
    try:
        settings = CONTROLS.settings(values, Context())
        out = compute(settings, None, lambda **_: None, controls.get("opt_values", ()),
                      controls.get("opt_ids", ()), controls.get("upload"))
        if out.get("waiting"):
            raise ValueError("Upload a CSV file first, or switch back to a built-in problem.")
    except ValueError as exc:
        return {"ok": False, "error": sentence(exc)}
    store = out["store"]
    return {"ok": True, "params": store["params"], "query": store["query"], "store": store,
            "view": out["view"]}


def problem_form(spec: str, sampling: str | None = None) -> dict:
    """State of the problem controls for a spec.

    Returns
    -------
    form : dict
        ``sampling_options`` (exact disabled when there is no exact
        distribution), ``sampling`` (the value to show), ``show_n`` (False when
        exact or when the spec has its own ``samples`` option), ``show_seed``,
        ``n_placeholder`` and ``description``.
    """
    problem = get_problem(spec)
    if not problem.has_exact:
        sampling = "sample"
    elif sampling not in ("exact", "sample"):
        sampling = "exact"
    exact_label = "Exact distribution" if problem.has_exact else "Exact distribution (not available)"
    own_size = "samples" in problem.options
    return {
        "sampling_options": [
            {"label": exact_label, "value": "exact", "disabled": not problem.has_exact},
            {"label": "Sample", "value": "sample"},
        ],
        "sampling": sampling,
        "show_n": sampling == "sample" and not own_size,
        "show_seed": sampling == "sample",
        "n_placeholder": f"{problem.default_samples:,}",
        "description": problem.description,
    }


def _fmt_int(v) -> str:
    return "\u2014" if v is None else f"{v:,}"


def summary_block(summary: Mapping[str, Any]) -> html.Div:
    """The summary card's content: p, N, classes, H(Y), distinct rows, exactness."""
    exact = summary["exact"]
    classes = "regression" if summary["classes"] is None else f"{summary['classes']:,}"
    h_label = "H(Y), binned" if summary.get("y_binned") else "H(Y)"
    h = "\u2014" if summary["H_Y"] is None else f"{summary['H_Y']:.4f} bits"

    def stat(label, value, key):
        return html.Div([html.Dt(label), html.Dd(value, id=f"data-summary-{key}")],
                        className="vi-stat")

    badge = (html.Span("Exact distribution", className="vi-badge vi-badge-exact") if exact
             else html.Span("Plug-in estimate from a sample", className="vi-badge vi-badge-plugin"))
    kinds = f"{summary['n_discrete']:,} discrete, {summary['n_numeric']:,} numeric (binned)"
    return html.Div([
        html.Dl([
            stat("Inputs p", f"{summary['p']:,}", "p"),
            stat("Samples N", "exact" if exact else _fmt_int(summary["N"]), "n"),
            stat("Classes", classes, "classes"),
            stat(h_label, h, "hy"),
            stat("Distinct rows", _fmt_int(summary["distinct_rows"]), "rows"),
        ], className="vi-summary"),
        html.P([badge, " ",
                html.Span(f"Target {summary['target']} ({summary['task']}); inputs: {kinds}.",
                          className="vi-muted")],
               className="vi-description", id="data-summary-exact",
               **{"data-exact": "1" if exact else "0"}),
        html.P(summary.get("description") or "", className="vi-description"),
    ])


def columns_block(rows: Sequence[Mapping[str, Any]]) -> html.Div:
    """An upload's columns as the core reads them: role, type, missing values, reason."""
    keys = ("column", "role", "type", "missing", "reason")
    return html.Div(preview_table({"columns": ["Column", "Role", "Type", "Missing", "Why"],
                                   "rows": [[r[k] or "" for k in keys] for r in rows or ()]})
                    if rows else "", id="data-columns")
