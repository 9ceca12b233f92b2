"""Data page: choose a built-in problem or upload a CSV; see its summary and first rows."""

from __future__ import annotations

import dash
from dash import (ALL, Input, Output, State, callback, clientside_callback, ctx, dcc, html,
                  no_update)

from pages._ui import controls as ui
from pages._ui import datasource, dataviews, jobs, limits, state
from pages._ui.page_frame import page_frame

dash.register_page(__name__, path="/", name="Data", order=0, title="varimp \u2014 Data")

PREFIX = "data"
state.register_url_sync(PREFIX)
_DATA_KEYS = {p.name for p in datasource.DATA_PARAMS}


def layout(vi_data=None, **query):
    if not _DATA_KEYS & set(query) and isinstance(vi_data, dict) and vi_data.get("params"):
        params, notes = datasource.parse_data_query(
            {k: v for k, v in vi_data["params"].items() if v is not None})
    else:
        params, notes = datasource.parse_data_query(query)
    is_upload = params["source"] == "upload"
    spec = params["problem"] if not is_upload else datasource.DEFAULT_PROBLEM
    form = dataviews.problem_form(spec, params.get("sampling"))
    upload = datasource.upload_columns(params.get("upload")) if is_upload else None
    if is_upload and upload is None:
        notes.append("The uploaded table of this link is no longer on the server; "
                     "upload the file again.")
    upload_info = dict(upload, key=params["upload"], file=params.get("file")) if upload else None
    columns = upload["columns"] if upload else []
    target = params.get("target") or (columns[-1] if columns else None)
    numeric = params.get("numeric")
    if upload and numeric is None:  # a hand-written link: show what the core detects
        try:
            numeric = datasource.data_view(params)["summary"]["numeric"]
        except Exception:  # shown by the apply callback; the layout must not fail
            numeric = []
    limit = datasource.max_upload_bytes()

    problem_card = ui.card(
        "Built-in problem",
        ui.field("Problem", ui.problem_picker(PREFIX, spec.split(":")[0])),
        html.P(form["description"], id="data-problem-help", className="vi-help"),
        html.Div(ui.problem_option_fields(PREFIX, spec), id="data-options"),
        ui.field("Distribution", dcc.RadioItems(
            id="data-sampling", options=form["sampling_options"], value=form["sampling"],
            className="vi-radio")),
        ui.field("Sample size N", ui.number_input("data-n", params.get("n"), min=1,
                                                  max=datasource.MAX_SAMPLES,
                                                  placeholder=form["n_placeholder"]),
                 id="data-n-field", className="" if form["show_n"] else "vi-hidden"),
        html.Div(ui.seed_field(PREFIX, params.get("seed", 0)), id="data-seed-field",
                 className="" if form["show_seed"] else "vi-hidden"),
        id="data-problem-card", className="vi-hidden" if is_upload else "",
    )
    upload_card = ui.card(
        "Your table",
        html.Div(
            dcc.Upload(id="data-upload", children=html.Div(
                ["Drop a CSV file here or ", html.A("choose one")]),
                max_size=limit, multiple=False, accept=".csv,.tsv,.txt,text/csv,text/plain",
                className="vi-upload", className_reject="vi-upload vi-upload-reject"),
            **{"data-max-bytes": str(limit), "data-note-id": "data-upload-note"}),
        html.P(f"CSV with a header row, at most {limit / 2**20:g} MiB.", className="vi-help"),
        html.Div(id="data-upload-note", className="vi-hidden"),
        ui.field("Target", dcc.Dropdown(id="data-target", options=columns, value=target,
                                        clearable=False)),
        ui.field("Task", dcc.RadioItems(
            id="data-task", value=params.get("task", "auto"), className="vi-radio",
            options=[{"label": "Auto", "value": "auto"},
                     {"label": "Classes", "value": "classification"},
                     {"label": "Numeric", "value": "regression"}])),
        ui.field("Numeric inputs", dcc.Checklist(
            id="data-numeric", className="vi-check",
            options=[c for c in (upload or {}).get("number_columns", []) if c != target],
            value=numeric or []),
            help="Checked columns are binned into quantile bins; the others are discrete."),
        id="data-upload-card", className="" if is_upload else "vi-hidden",
    )
    fieldset = html.Fieldset(id="data-fieldset", className="vi-fieldset", children=[
        ui.card("Source", dcc.RadioItems(
            id="data-source", value=params["source"], className="vi-radio",
            options=[{"label": "Built-in problem", "value": "problem"},
                     {"label": "Upload CSV", "value": "upload"}])),
        problem_card,
        upload_card,
        ui.card("Binning", ui.field(
            "Bins per numeric variable",
            ui.number_input("data-bins", params.get("bins", 5), min=2, max=datasource.MAX_BINS),
            help="Quantile bins; equal quantiles are merged.")),
    ])
    return page_frame(
        PREFIX, title="Data", notes=notes,
        lead="Pick a built-in problem with a known distribution, or upload a table. "
             "Every other page uses the data chosen here.",
        stores=[state.query_store(PREFIX, datasource.data_query(params)),
                dcc.Store(id="data-upload-info", data=upload_info)],
        controls=[fieldset, html.P(limits.limits_text(), id="data-limits",
                                   className="vi-help vi-limits")],
        content=[
            ui.card("Summary", html.Div(id="data-summary", children=html.Span(
                "Loading\u2026", className="vi-muted"))),
            ui.card("Preview", html.Div(id="data-preview")),
        ])


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
          Output("data-n-field", "className"), Output("data-seed-field", "className"),
          Output("data-n", "placeholder"),
          Input("data-problem", "value"), Input("data-sampling", "value"),
          prevent_initial_call=True)
def show_problem_form(name, sampling):
    """The problem's option fields (when the problem changed) and its sampling fields."""
    form = dataviews.problem_form(name, sampling)
    fields = ui.problem_option_fields(PREFIX, name) if ctx.triggered_id == "data-problem" \
        else no_update
    return (fields, form["description"], form["sampling_options"],
            no_update if form["sampling"] == sampling else form["sampling"],
            "vi-field" if form["show_n"] else "vi-field vi-hidden",
            "" if form["show_seed"] else "vi-hidden", form["n_placeholder"])


@callback(Output("data-upload-info", "data"), Output("data-target", "options"),
          Output("data-target", "value"), Output("data-numeric", "value"),
          Output("data-upload-note", "children"), Output("data-upload-note", "className"),
          Input("data-upload", "contents"), State("data-upload", "filename"),
          prevent_initial_call=True)
def receive_upload(contents, filename):
    try:
        info = datasource.store_upload(contents, filename)
    except Exception as exc:  # DataError is a sentence; anything else is logged
        return (no_update, no_update, no_update, no_update,
                jobs.error_message(exc) + " Your current data is unchanged.", "vi-error")
    note = f"{info['file']}: {info['rows']:,} rows, {len(info['columns'])} columns."
    return info, info["columns"], info["target"], info["numeric"] or [], note, "vi-help"


@callback(Output("data-numeric", "options"), Input("data-target", "value"),
          State("data-upload-info", "data"), prevent_initial_call=True)
def numeric_choices(target, info):
    return [c for c in (info or {}).get("number_columns", []) if c != target]


@callback(
    Output("vi-data", "data"),
    Output("data-query", "data"),
    Output("data-summary", "children"),
    Output("data-preview", "children"),
    Output("data-error", "children"),
    Output("data-error", "className"),
    jobs.status_output(PREFIX),
    Input("data-source", "value"),
    Input("data-problem", "value"),
    Input({"type": "data-opt", "problem": ALL, "key": ALL}, "value"),
    Input("data-sampling", "value"),
    Input("data-n", "value"),
    Input("data-seed", "value"),
    Input("data-bins", "value"),
    Input("data-upload-info", "data"),
    Input("data-target", "value"),
    Input("data-task", "value"),
    Input("data-numeric", "value"),
    State({"type": "data-opt", "problem": ALL, "key": ALL}, "id"),
    **jobs.background_options(
        PREFIX, disable=["data-fieldset", "data-problem", "data-target", "data-upload"]),
)
def apply_data(set_progress, source, problem, opt_values, sampling, n, seed, bins, upload,
               target, task, numeric, opt_ids):
    progress = jobs.Progress(set_progress)
    progress(text="Preparing the data\u2026")
    try:
        out = dataviews.apply_choice(dict(
            source=source, problem=problem, opt_ids=opt_ids, opt_values=opt_values,
            sampling=sampling, n=n, seed=seed, bins=bins, upload=upload, target=target,
            task=task, numeric=numeric))
    except Exception as exc:  # never a traceback on the page
        out = {"ok": False, "error": jobs.error_message(exc)}
    if not out["ok"]:
        return (no_update, no_update, no_update, no_update, out["error"] +
                " The summary below still shows the previous data.", "vi-error", "")
    view = out["view"]
    notes = [html.P(n, className="vi-help") for n in view["notes"]]
    return (out["store"], out["query"], [dataviews.summary_block(view["summary"]), *notes],
            ui.preview_table(view["preview"]), "", "vi-hidden",
            jobs.done_message(progress, "Ready"))
