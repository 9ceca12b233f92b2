"""Data page: choose a built-in problem or upload a CSV; see its summary and first rows.

The page turns its settings into data parameters and shows the summary and the form.
Tests reach its plain functions through ``tests/_pages.page_module``; every number comes
from the core through :mod:`pages._framework.datasource`.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import dash
from dash import (ALL, Input, Output, State, callback, clientside_callback, ctx, dcc, html,
                  no_update)

from pages._framework import controls as ui
from pages._framework import datasource, state
from pages._framework.controls import option_values, preview_table
from pages._framework.datachoice import DataChoice
from pages._framework.page_frame import page_frame, register_data_label
from pages._framework.params import Context, ParamSet, sentence
from pages._framework.view import JobView, job_panel
from pages._server import jobs, limits
from varimp_core.data.prepare import DataError
from varimp_core.data.summary import leak_sentence
from varimp_core.problems.registry import get_problem, spec_from_options

dash.register_page(__name__, path="/data", name="Data", order=0, title="varimp \u2014 Data")

PREFIX = "data"
UPLOAD = "data-upload"  # the upload's job panel


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
        read = ""
        if isinstance(upload, Mapping) and upload.get("rows"):  # the file was read: say so
            read = (f" The file {upload.get('file') or ''} was read: {upload['rows']:,} rows, "
                    f"{len(upload.get('columns') or ())} columns.").replace("file  was", "file was")
        raise ValueError(sentence(exc) + read) from None


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


LEAK_BUTTON = "data-leak-exclude"


def leaks_block(leaks: Sequence[Mapping[str, Any]], task: str, upload: bool) -> html.Div:
    """Inputs that alone almost determine the target: a question each, and (for an upload)
    a button that excludes the column (issue #24)."""
    if not leaks:
        return html.Div(id="data-leaks")
    items = []
    for w in leaks:
        button = html.Button(f"Exclude {w['column']}", n_clicks=0,
                             id={"type": LEAK_BUTTON, "column": w["column"]},
                             className="vi-button vi-button-secondary") if upload else ""
        items.append(html.P([leak_sentence(w, task), " ", button],
                            **{"data-leak": w["column"]}))
    return html.Div(items, id="data-leaks", className="vi-notes")


def columns_block(rows: Sequence[Mapping[str, Any]]) -> html.Div:
    """An upload's columns as the core reads them: role, type, missing values, reason."""
    keys = ("column", "role", "type", "missing", "reason")
    return html.Div(preview_table({"columns": ["Column", "Role", "Type", "Missing", "Why"],
                                   "rows": [[r[k] or "" for k in keys] for r in rows or ()]})
                    if rows else "", id="data-columns")


PARAMS = CONTROLS
OPTIONS = {"type": "data-opt", "problem": ALL, "key": ALL}


def url(settings, data, options=(), option_ids=(), upload=None) -> str:
    """The data query of the controls (the URL is left alone while an option is invalid)."""
    try:
        params = data_params(settings, options or (), option_ids or (), upload)
    except ValueError:
        return no_update
    return no_update if params is None else datasource.data_query(params)


def render(out, settings, data, **extra):
    if out.get("waiting"):
        return no_update, html.P(NO_FILE_YET, className="vi-help"), no_update
    view = out["view"]
    notes = [html.P(n, className="vi-help") for n in view["notes"]]
    upload = out["store"]["params"].get("source") == "upload"
    return (out["store"], [summary_block(view["summary"]),
                           leaks_block(view.get("leaks", ()), view["summary"]["task"], upload),
                           *notes, columns_block(view.get("columns"))],
            ui.preview_table(view["preview"]))


def no_file_yet(settings, data, upload=None, **extra):
    """The upload source before a file is chosen: a help line at once, no job, no error."""
    return {"waiting": True} if settings.get("source") == "upload" and not (
        isinstance(upload, dict) and upload.get("key")) else None


VIEW = JobView(PREFIX, PARAMS, compute=compute, render=render, data_store=None,
               outputs=[("data-choice", "data"), ("data-summary", "children"),
                        ("data-preview", "children")],
               extra=[("options", Input(OPTIONS, "value")), ("option_ids", State(OPTIONS, "id")),
                      ("upload", Input("data-upload-info", "data"))],
               query_store="data-query", url=url, what="The summary", instant=no_file_yet,
               disable=["data-fieldset", "data-problem", "data-target", "data-upload"])
VIEW.register()
register_data_label(PREFIX, "data-choice")
state.register_url_sync(PREFIX)


def layout(vi_data=None, **query):
    # ?source=upload without a table (the home page's "Analyse your CSV"): the upload area, open.
    choose_file = query.get("source") == "upload" and not query.get("upload")
    params, notes = datasource.data_params_for_page(
        {k: v for k, v in query.items() if k != "source"} if choose_file else query, vi_data)
    if choose_file:
        params = datasource.canonical_params({**params, "source": "upload", "upload": None})
    is_upload = params["source"] == "upload"
    spec = params["problem"] if not is_upload else datasource.DEFAULT_PROBLEM
    form = problem_form(spec, params.get("sampling"))
    upload = datasource.upload_columns(params.get("upload")) if is_upload else None
    if is_upload and upload is None and not choose_file:
        notes.append("The uploaded table of this link is no longer on the server; "
                     "upload the file again.")
    upload_info = ({**datasource.page_info(upload), "key": params["upload"],
                    "file": params.get("file")} if upload else None)
    columns = upload["columns"] if upload else []
    target = params.get("target") or (columns[-1] if columns else None)
    numeric, exclude = params.get("numeric"), params.get("exclude")
    if upload and None in (numeric, exclude):  # a hand-written link: what the core detects
        roles = datasource.target_roles(upload, target)
        numeric = roles["numeric"] if numeric is None else numeric
        exclude = roles["exclude"] if exclude is None else exclude
    values = {**PARAMS.defaults(), **params, "problem": spec.split(":")[0],
              "sampling": form["sampling"], "target": target, "numeric": numeric or [],
              "exclude": exclude or []}
    c = Context(extra={"columns": columns, "inputs": [n for n in columns if n != target],
                       "number_columns": [n for n in (upload or {}).get("number_columns", [])
                                          if n != target]})
    f = {n: PARAMS.field(n, values[n], c) for n in PARAMS.names}
    f["n"].className = "vi-field" if form["show_n"] else "vi-field vi-hidden"
    f["n"].children[1].placeholder = form["n_placeholder"]
    f["sampling"].children[1].options = form["sampling_options"]
    f["problem"].children[1] = ui.problem_picker(PREFIX, spec.split(":")[0])
    limit = datasource.max_upload_bytes()

    problem_card = ui.card(
        "Built-in problem", f["problem"],
        html.P(form["description"], id="data-problem-help", className="vi-help"),
        html.Div(ui.problem_option_fields(PREFIX, spec), id="data-options"),
        f["sampling"], f["n"],
        html.Div(f["seed"], id="data-seed-box", className="" if form["show_seed"] else "vi-hidden"),
        id="data-problem-card", className="vi-hidden" if is_upload else "")
    upload_card = ui.card(
        "Your table",
        html.Div(
            dcc.Upload(id="data-upload", children=html.Div(
                ["Drop a CSV file here or ", html.A("choose one")]),
                max_size=limit, multiple=False, accept=".csv,.tsv,.txt,text/csv,text/plain",
                className="vi-upload", className_reject="vi-upload vi-upload-reject"),
            **{"data-max-bytes": str(limit), "data-note-id": "data-upload-note"}),
        html.P(limits.upload_rule(), className="vi-help"),
        html.Div(id="data-upload-note", className="vi-hidden"), job_panel(UPLOAD),
        f["target"], f["task"], f["numeric"], f["exclude"], f["missing"], f["dates"],
        id="data-upload-card", className="" if is_upload else "vi-hidden")
    fieldset = html.Fieldset(id="data-fieldset", className="vi-fieldset", children=[
        ui.card("Source", f["source"]), problem_card, upload_card,
        ui.card("Binning", f["bins"])])
    return page_frame(
        PREFIX, title="Data", notes=notes,
        data_label="no table yet" if choose_file else DataChoice.from_params(params).label(),
        lead="Pick a built-in problem with a known distribution, or upload a table. "
             "Every other page uses the data chosen here.",
        stores=[state.query_store(PREFIX, datasource.data_query(params)),
                dcc.Store(id="data-upload-info", data=upload_info), dcc.Store(id="data-choice"),
                *VIEW.stores()],
        controls=[fieldset, html.P(limits.limits_text(), id="data-limits",
                                   className="vi-help vi-limits")],
        status=VIEW.status(),
        content=[
            ui.card("Summary", html.Div(id="data-summary", children=html.Span(
                "Loading\u2026", className="vi-muted"))),
            ui.card("Preview", html.Div(id="data-preview")),
        ])


# The session's choice (``vi-data``, in the app shell) follows the page's: a callback whose
# output lies outside the page would be called on every page load, so the job writes the
# page's own store and this copies it.
clientside_callback(
    "function(d) { return d ? d : window.dash_clientside.no_update; }",
    Output("vi-data", "data", allow_duplicate=True), Input("data-choice", "data"),
    prevent_initial_call=True)

clientside_callback(
    """
    function(source) {
        const up = source === "upload";
        return [up ? "vi-card vi-hidden" : "vi-card", up ? "vi-card" : "vi-card vi-hidden"];
    }
    """,
    Output("data-problem-card", "className"),
    Output("data-upload-card", "className"),
    Input("data-source", "value"),
)


@callback(Output("data-options", "children"), Output("data-problem-help", "children"),
          Output("data-sampling", "options"), Output("data-sampling", "value"),
          Output("data-n-field", "className"), Output("data-seed-box", "className"),
          Output("data-n", "placeholder"),
          Input("data-problem", "value"), Input("data-sampling", "value"),
          prevent_initial_call=True)
def show_problem_form(name, sampling):
    """The problem's option fields (when the problem changed) and its sampling fields."""
    form = problem_form(name, sampling)
    fields = ui.problem_option_fields(PREFIX, name) if ctx.triggered_id == "data-problem" \
        else no_update
    return (fields, form["description"], form["sampling_options"],
            no_update if form["sampling"] == sampling else form["sampling"],
            "vi-field" if form["show_n"] else "vi-field vi-hidden",
            "" if form["show_seed"] else "vi-hidden", form["n_placeholder"])


@callback(Output("data-upload-info", "data"), Output("data-target", "options"),
          Output("data-target", "value"),
          Output("data-upload-note", "children"), Output("data-upload-note", "className"),
          Input("data-upload", "contents"), State("data-upload", "filename"),
          prevent_initial_call=True,
          **jobs.background_options(UPLOAD))
def receive_upload(set_progress, contents, filename):
    """Parse and keep a file in a job: a 5 MB file took seconds of a web worker (issue #17)."""
    jobs.Progress(set_progress)(text="Reading the file\u2026")
    try:
        info = datasource.store_upload(contents, filename)
    except Exception as exc:  # DataError is a sentence; anything else is logged
        return (no_update, no_update, no_update,
                jobs.error_message(exc) + " Your current data is unchanged.", "vi-error")
    note = f"{info['file']}: {info['rows']:,} rows, {len(info['columns'])} columns."
    return info, info["columns"], info["target"], note, "vi-help"   # reading notes: the data's


@callback(Output("data-numeric", "options"), Output("data-numeric", "value"),
          Output("data-exclude", "options"), Output("data-exclude", "value"),
          Input("data-target", "value"), Input("data-upload-info", "data"),
          prevent_initial_call=True)
def column_controls(target, info):
    """A new file or a new target: every other column's type and role derived again (bug 1),
    read from the roles of every target that the upload's job worked out (issue #27: this
    request prepared the whole table, 0.6 to 0.75 s per new target on 10,000 x 60)."""
    if not isinstance(info, dict) or not info.get("key"):
        return (no_update,) * 4
    target = target if target in info["columns"] else info["target"]
    # A store written before the roles were kept: the upload's cached columns have them.
    roles = datasource.target_roles(info if "roles" in info else
                                    datasource.upload_columns(info["key"]), target)
    return ([c for c in info["number_columns"] if c != target], roles["numeric"] or [],
            [c for c in info["columns"] if c != target], roles["exclude"] or [])


@callback(Output("data-exclude", "value", allow_duplicate=True),
          Input({"type": LEAK_BUTTON, "column": ALL}, "n_clicks"),
          State("data-exclude", "value"), prevent_initial_call=True)
def exclude_leak(clicks, excluded):
    """One click on a leak's button: its column joins the excluded ones (the job reruns)."""
    column = ctx.triggered_id["column"] if isinstance(ctx.triggered_id, dict) else None
    if not column or not any(clicks or ()):
        return no_update
    excluded = list(excluded or [])
    return no_update if column in excluded else sorted([*excluded, column])
