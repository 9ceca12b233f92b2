"""Logic behind the Data page's callbacks, as plain functions tests can call.

The page module only wires these to components; every number comes from the
core through :mod:`pages._ui.datasource`.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from dash import html

from varimp_core.data.prepare import DataError
from varimp_core.problems.registry import get_problem

from . import datasource
from .controls import option_values
from .state import whole_number

__all__ = [
    "params_from_controls",
    "apply_choice",
    "problem_form",
    "summary_block",
    "error_box",
]


def params_from_controls(
    *,
    source: str | None = "problem",
    problem: str | None = None,
    opt_ids: Sequence[dict] = (),
    opt_values: Sequence[Any] = (),
    sampling: str | None = "exact",
    n: Any = None,
    seed: Any = 0,
    bins: Any = 5,
    upload: Mapping[str, Any] | None = None,
    target: str | None = None,
    task: str | None = "auto",
    numeric: Sequence[str] | None = None,
) -> dict:
    """Canonical data parameters from the Data page's control values.

    Raises
    ------
    ValueError
        With a sentence, for an invalid option value, sample size, seed or
        number of bins, or an upload source without a file.
    """
    n = whole_number(n, "sample size", 1, datasource.MAX_SAMPLES, None)
    seed = whole_number(seed, "seed", 0, 2**32 - 1, 0)
    bins = whole_number(bins, "number of bins", 2, datasource.MAX_BINS, 5)
    if source == "upload":
        if not upload or not upload.get("key"):
            raise ValueError("Upload a CSV file first (drop it on the upload area or click "
                             "it), or switch back to a built-in problem.")
        return datasource.canonical_params({
            "source": "upload", "upload": upload["key"], "file": upload.get("file"),
            "target": target, "task": task or "auto",
            "numeric": None if numeric is None else list(numeric), "bins": bins,
        })
    name = problem or datasource.DEFAULT_PROBLEM
    spec = datasource.spec_from_options(name, option_values(name, opt_ids, opt_values))
    return datasource.canonical_params({
        "source": "problem", "problem": spec, "sampling": sampling or "exact",
        "n": n, "seed": seed, "bins": bins,
    })


def apply_choice(controls: Mapping[str, Any]) -> dict:
    """Everything the page shows for a set of control values.

    Returns
    -------
    out : dict
        ``ok``: bool; when True also ``params``, ``query`` (URL query string),
        ``store`` (the ``vi-data`` value) and ``view`` (from
        :func:`datasource.data_view`); when False ``error``, one sentence.
    """
    try:
        params = params_from_controls(**controls)
        view = datasource.data_view(params)
    except (DataError, ValueError) as exc:
        return {"ok": False, "error": _sentence(str(exc))}
    query = datasource.data_query(params)
    s = view["summary"]
    store = {"params": params, "query": query, "label": s["label"], "p": s["p"],
             "N": s["N"], "exact": s["exact"], "task": s["task"], "target": s["target"]}
    return {"ok": True, "params": params, "query": query, "store": store, "view": view}


def _sentence(text: str) -> str:
    text = text.strip() or "These settings cannot be used."
    return text if text.endswith((".", "!", "?")) else text + "."


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
    if summary["classes"] is None:
        classes, classes_label = "regression", "Classes"
    else:
        classes, classes_label = f"{summary['classes']:,}", "Classes"
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
            stat(classes_label, classes, "classes"),
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


def error_box(message: str | None, *, id: str | None = None) -> html.Div:
    """A red box with one sentence (hidden when there is no message)."""
    kwargs = {"id": id} if id else {}
    if not message:
        return html.Div(className="vi-hidden", **kwargs)
    return html.Div(message, className="vi-error", role="alert", **kwargs)
