"""Masking page: importances against K or depth, irrelevant variables, a noisy copy."""

from __future__ import annotations

import dash
from dash import Input, Output, State, callback, clientside_callback, dcc, html, no_update

from pages._ui import controls as ui
from pages._ui import jobs, limits, state
from pages._ui import masking_logic as logic
from pages._ui.page_frame import job_outputs, page_frame
from varimp_core.plots.masking import make_delta_heatmap, make_k_lines, make_rank_bump
from varimp_core.studies.masking import importance_change

dash.register_page(__name__, path="/masking", name="Masking", order=3,
                   title="varimp \u2014 Masking")

PREFIX = logic.PREFIX
TREES = f"{PREFIX}-trees"          # prefix of the sampled-forest job
state.register_url_sync(PREFIX)

_CONTROLS = [f"{PREFIX}-{n}" for n in ("problem", "irrelevant", "copy", "flip", "k", "depth")]
#: The controls of the exact computation and the settings they give.
_SETTINGS = [f"{PREFIX}-{n}" for n in ("problem", "irrelevant", "copy", "flip", "semantics",
                                        "axis", "k", "depth")]
_KEYS = ("base", "irrelevant", "copy", "flip", "semantics", "axis", "k", "depth")
_GRAPH_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "svg"}}


def _marks(low: int, high: int) -> dict:
    return {i: str(i) for i in range(low, high + 1)}


def _depth_options(p: int) -> list[dict]:
    return [{"label": "Full (no limit)", "value": "full"}] + [
        {"label": str(d), "value": d} for d in range(1, p)]


def _graph(name: str, height: str) -> dcc.Graph:
    return dcc.Graph(id=f"{PREFIX}-{name}", figure=logic.placeholder_figure(),
                     config=_GRAPH_CONFIG, style={"height": height})


def layout(vi_data=None, **query):
    s, notes = logic.initial_state(query, vi_data)
    p = logic.n_inputs(s["base"], s["irrelevant"], s["copy"])
    by_depth = s["axis"] == "depth"
    most_trees = limits.max_trees(logic.MAX_TREES)
    settings_card = ui.card(
        "Inputs",
        ui.field("Problem", dcc.Dropdown(
            id=f"{PREFIX}-problem", options=logic.problem_options(s["base"]), value=s["base"],
            clearable=False, searchable=False, className="vi-dropdown")),
        html.P(logic.problem_description(s["base"]), id=f"{PREFIX}-problem-help",
               className="vi-help"),
        ui.field("Irrelevant variables", dcc.Slider(
            id=f"{PREFIX}-irrelevant", min=0, max=logic.MAX_IRRELEVANT, step=1,
            value=s["irrelevant"], marks=_marks(0, logic.MAX_IRRELEVANT)),
            help="Independent fair bits appended to the inputs. At K=1 they change nothing "
                 "(Theorem 5); at K>1 they damp masking."),
    )
    copy_card = ui.card(
        "Noisy copy",
        ui.field("Copy of", dcc.Dropdown(
            id=f"{PREFIX}-copy", options=logic.copy_options(s["base"]),
            value=s["copy"] or logic.NO_COPY, clearable=False, searchable=False,
            className="vi-dropdown")),
        ui.field("Noise of the copy", dcc.Slider(
            id=f"{PREFIX}-flip", min=0, max=logic.MAX_FLIP, step=0.05, value=s["flip"],
            marks={0: "0", 0.1: "0.1", 0.2: "0.2", 0.3: "0.3", 0.4: "0.4", 0.5: "0.5"}),
            help="Probability that the copy differs from the original (0: exact copy). "
                 "The copy is added to the exact distribution, so values stay exact."),
    )
    trees_card = ui.card(
        "Trees",
        ui.field("K semantics", dcc.RadioItems(
            id=f"{PREFIX}-semantics", value=s["semantics"], className="vi-radio",
            options=[{"label": "id3 (Louppe et al.)", "value": "id3"},
                     {"label": "scikit-learn", "value": "sklearn"}]),
            help="scikit-learn counts used and constant variables towards K, so it does not "
                 "reproduce Table 2 for K \u2265 2."),
        ui.field("Against", dcc.RadioItems(
            id=f"{PREFIX}-axis", value=s["axis"], className="vi-radio",
            options=[{"label": "K", "value": "K"}, {"label": "Maximum depth", "value": "depth"}])),
        ui.field("K of every tree", dcc.Slider(
            id=f"{PREFIX}-k", min=1, max=p, step=1, value=s["k"], marks=_marks(1, p)),
            id=f"{PREFIX}-k-field", className="" if by_depth else "vi-hidden"),
        ui.field("Maximum depth of every tree", dcc.Dropdown(
            id=f"{PREFIX}-depth", options=_depth_options(p),
            value=s["depth"] if s["depth"] is not None else "full", clearable=False,
            searchable=False, className="vi-dropdown"),
            id=f"{PREFIX}-depth-field", className="vi-hidden" if by_depth else ""),
    )
    sampled_card = ui.card(
        "Sampled forests",
        html.Fieldset(id=f"{TREES}-fieldset", className="vi-fieldset", children=[
            dcc.Checklist(id=f"{PREFIX}-sampled", className="vi-check",
                          options=[{"label": "Show finite forests (K view)", "value": "on"}],
                          value=["on"] if s["sampled"] else []),
            html.Div(className="vi-row", children=[
                ui.field("Trees per K", ui.number_input(
                    f"{PREFIX}-trees", s["trees"], min=1, max=most_trees),
                    help=limits.at_most_help(most_trees)),
                ui.field("Seed", ui.number_input(
                    f"{PREFIX}-forest-seed", s["forest_seed"], min=0, max=2**32 - 1)),
            ]),
        ]),
        html.P("Open diamonds: mean over the trees of a forest grown on the exact "
               "distribution, with bars of \u00b12 standard errors.", className="vi-help"),
        jobs.job_panel(TREES),
    )
    return page_frame(
        PREFIX, title="Masking", notes=notes,
        lead="Totally randomized trees (K=1) credit every variable with all of its "
             "conditional information (Eqn 3). With K>1 the best of K drawn variables wins "
             "each node, so strong variables mask weaker ones that carry the same "
             "information, and the ranking can change. Values are exact: the infinite "
             "forest on the exact distribution.",
        stores=[state.query_store(PREFIX, logic.page_query(
                    logic.settings_from_state(s), sampled=s["sampled"], trees=s["trees"],
                    forest_seed=s["forest_seed"], k=s["k"], depth=s["depth"])),
                dcc.Store(id=f"{PREFIX}-exact"), dcc.Store(id=f"{PREFIX}-sampled-data")],
        controls=[html.Fieldset(id=f"{PREFIX}-fieldset", className="vi-fieldset",
                                children=[settings_card, copy_card, trees_card]),
                  sampled_card],
        content=[
            ui.card("Importance", _graph("lines", "460px"),
                    html.Div(id=f"{PREFIX}-summary", className="vi-description"),
                    className="vi-figure"),
            html.Div(style={"display": "grid", "gap": "1rem",
                            "gridTemplateColumns": "repeat(auto-fit, minmax(380px, 1fr))"},
                     children=[
                         ui.card("Rank", _graph("bump", "420px"), className="vi-figure"),
                         ui.card("Change from the first column", _graph("delta", "420px"),
                                 className="vi-figure"),
                     ]),
        ])


@callback(Output(f"{PREFIX}-copy", "options"), Output(f"{PREFIX}-copy", "value"),
          Output(f"{PREFIX}-problem-help", "children"), Input(f"{PREFIX}-problem", "value"),
          State(f"{PREFIX}-copy", "value"), prevent_initial_call=True)
def show_problem(base, copy):
    return logic.problem_controls(base, copy)


@callback(Output(f"{PREFIX}-k", "max"), Output(f"{PREFIX}-k", "marks"),
          Output(f"{PREFIX}-k", "value"), Output(f"{PREFIX}-depth", "options"),
          Output(f"{PREFIX}-depth", "value"),
          *(Input(f"{PREFIX}-{n}", "value") for n in ("problem", "irrelevant", "copy")),
          State(f"{PREFIX}-k", "value"), State(f"{PREFIX}-depth", "value"),
          prevent_initial_call=True)
def fit_ranges(base, irrelevant, copy, k, depth):
    p = logic.n_inputs_or_default(base, irrelevant, copy)
    depth = depth if depth == "full" or (isinstance(depth, int) and depth < p) else "full"
    return p, _marks(1, p), min(int(k or 1), p), _depth_options(p), depth


clientside_callback(
    """
    function(axis) {
        const depth = axis === "depth";
        const shown = "vi-field", hidden = "vi-field vi-hidden";
        return [depth ? shown : hidden, depth ? hidden : shown];
    }
    """,
    Output(f"{PREFIX}-k-field", "className"),
    Output(f"{PREFIX}-depth-field", "className"),
    Input(f"{PREFIX}-axis", "value"),
)


@callback(
    Output(f"{PREFIX}-query", "data"),
    *(Input(i, "value") for i in _SETTINGS),
    Input(f"{PREFIX}-sampled", "value"),
    Input(f"{PREFIX}-trees", "value"),
    Input(f"{PREFIX}-forest-seed", "value"),
    prevent_initial_call=True,
)
def sync_url(*values):
    *controls, sampled, trees, seed = values
    query = logic.query_from_controls(dict(zip(_KEYS, controls)), sampled=sampled,
                                      trees=trees, forest_seed=seed)
    return no_update if query is None else query


@callback(
    *job_outputs(PREFIX, "exact"),
    *(Input(i, "value") for i in _SETTINGS),
    **jobs.background_options(PREFIX, disable=[f"{PREFIX}-fieldset", *_CONTROLS]),
)
def compute_exact(set_progress, *controls):
    progress = jobs.Progress(set_progress)
    try:
        settings = logic.settings_from_controls(**dict(zip(_KEYS, controls)))
        view = logic.compute_exact(settings, progress)
    except Exception as exc:  # a sentence on the page, never a traceback
        return None, jobs.error_message(exc), "vi-error", ""
    return view, "", "vi-hidden", jobs.done_message(progress, "Exact importances ready")


@callback(
    Output(f"{PREFIX}-sampled-data", "data"),
    jobs.status_output(TREES),
    Input(f"{PREFIX}-exact", "data"),
    Input(f"{PREFIX}-sampled", "value"),
    Input(f"{PREFIX}-trees", "value"),
    Input(f"{PREFIX}-forest-seed", "value"),
    **jobs.background_options(TREES, disable=[f"{TREES}-fieldset"]),
)
def compute_sampled(set_progress, exact, sampled, trees, seed):
    if not sampled:
        return None, ""
    if not exact:
        return None, "No sampled forests without exact values for these settings."
    if exact.get("x") != "K":
        return no_update, "Sampled forests are shown against K; switch the view to K."
    progress = jobs.Progress(set_progress)
    try:
        view = logic.compute_sampled(exact["settings"], trees=trees, forest_seed=seed,
                                     progress=progress)
    except Exception as exc:
        return None, jobs.error_message(exc)
    return view, jobs.done_message(progress, f"{view['trees']:,} trees per K grown")


@callback(*(Output(f"{PREFIX}-{name}", "figure") for name in ("lines", "bump", "delta")),
          Output(f"{PREFIX}-summary", "children"),
          Input(f"{PREFIX}-exact", "data"), Input(f"{PREFIX}-sampled-data", "data"))
def draw(exact, sampled):
    df, ds = logic.frames(exact, sampled)
    if df is None:
        empty = logic.placeholder_figure("No figure for these settings; see the message above.")
        return empty, empty, empty, ""
    x = exact["x"]
    return (make_k_lines(df, ds, x=x), make_rank_bump(df, x=x),
            make_delta_heatmap(importance_change(df, x=x), x=x),
            [html.P(t) for t in logic.summary_sentences(exact)])
