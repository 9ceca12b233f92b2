"""Masking page: importances against K or depth, irrelevant variables, a noisy copy.

The page builds its own exact tables from its controls (:mod:`pages.masking_study`), or
takes an uploaded table, and gets every K or depth at once from :mod:`varimp_core.studies.masking`.
"""

from __future__ import annotations

from typing import Mapping

import dash
from dash import Input, Output, State, callback, dcc, html, no_update

from pages._framework import controls as ui
from pages._server import limits
from pages._framework import state
from pages import masking_study as study
from pages.masking_study import NO_COPY, UPLOAD, build_table, problem_context
from pages._framework.page_frame import page_frame
from pages._framework.params import Context, Param, ParamSet, seed_param
from pages._framework.view import JobView
from varimp_core.plots.masking import masking_figures, masking_lines
from varimp_core.serialize import from_jsonable, to_jsonable
from varimp_core.studies.masking import (BINARY_CHOICES, MaskingCurves, masking_curves,
                                         sampled_vs_k)
from varimp_core.studies.masking_copy import MAX_IRRELEVANT, study_spec

dash.register_page(__name__, path="/masking", name="Masking", order=3,
                   title="varimp \u2014 Masking")

PREFIX = "masking"
DATA = "masking-data"  # the store of the session's data choice (an upload is offered)
MAX_TREES = 2000  # the page's cap; VARIMP_MAX_TREES may lower it (pages._server.limits)


class MaskingParams(ParamSet):
    """The page's parameters; their bounds depend on the problem the values build."""

    def validate(self, values, ctx=None):
        ctx = problem_context(values, ctx)
        settings, errors = super().validate(values, ctx)
        if "problem" in errors:
            errors["problem"] = ("Choose LED, XOR, SYM or gauss: the Masking page needs a small "
                                 "exact distribution or small numeric data.")
        elif "copy" in errors:
            errors["copy"] = f"{ctx.extra['problem']} has no variable {values['copy']} to copy."
        return settings, errors


PARAMS = MaskingParams(PREFIX, [
    Param("problem", "Problem", "choice", "led", choices=study.problem_choices,
          control="dropdown"),
    Param("irrelevant", "Irrelevant variables", default=0, low=0, high=MAX_IRRELEVANT,
          control="slider", what="number of irrelevant variables", applies=study.built_in,
          help="Independent fair bits appended to the inputs. At K=1 they change nothing "
               "(Theorem 5); at K>1 they damp masking."),
    Param("copy", "Copy of", "choice", NO_COPY, control="dropdown", what="noisy copy",
          choices=study.copy_choices, applies=study.built_in),
    Param("flip", "Noise of the copy", "float", 0.1, low=0.0, high=0.5, step=0.05,
          control="slider", what="copy noise", applies=lambda s: s.get("copy") != NO_COPY,
          help="Probability that the copy differs from the original (0: exact copy). "
               "The copy is added to the exact distribution, so values stay exact."),
    Param("k_semantics", "K semantics", "choice", "id3", key="semantics",
          choices=[("id3", "id3 (Louppe et al.)"), ("sklearn", "scikit-learn")],
          help="scikit-learn counts used and constant variables towards K, so it does not "
               "reproduce Table 2 for K \u2265 2."),
    Param("method", "Method", "choice", "exact", choices=[(m, m) for m in BINARY_CHOICES],
          help="exact-rf, exact-et: scikit-learn's binary forests (K as it reads K), on numbers."),
    Param("axis", "Against", "choice", "K", what="x axis",
          choices=[("K", "K"), ("depth", "Maximum depth")]),
    Param("max_features", "K of every tree", default=1, key="K", low=1, high=lambda c: c.p,
          control="slider", what="K", applies=lambda s: s.get("axis") == "depth"),
    Param("max_depth", "Maximum depth of every tree", "choice", "full", key="depth",
          control="dropdown", what="maximum depth", applies=lambda s: s.get("axis") == "K",
          choices=study.depth_choices),
])
SAMPLED = ParamSet(PREFIX, [
    Param("sampled", "Finite forests", "bool", False, help="Show finite forests (K view)"),
    Param("n_estimators", "Trees per K", default=200, key="trees", low=1,
          high=lambda c: limits.max_trees(MAX_TREES), what="number of trees",
          applies=lambda s: s.get("sampled"),
          help=lambda c: limits.at_most_help(limits.max_trees(MAX_TREES))),
    seed_param(applies=lambda s: s.get("sampled")),
])


def _depth(s):
    return None if s.get("max_depth", "full") == "full" else s["max_depth"]


def compute_exact(s, data, progress) -> dict:
    """Exact importances of every variable for every K (or every depth), by ``method``."""
    copy = s.get("copy", NO_COPY)  # an upload has none; X5's copy is X5'
    return masking_curves(build_table(s, data), x=s["axis"], max_depth=_depth(s), progress=progress,
        max_features=s.get("max_features", 1), k_semantics=s["k_semantics"], method=s["method"],
        copy_name=None if copy == NO_COPY else copy + "'").to_dict()


def render_exact(out, s, data):
    """The figures, the summary, the settings the finite forests start from, the table."""
    return (*masking_figures(MaskingCurves.from_dict(out)), study.summary(out, s), s,
            *study.table(out, s))


def compute_sampled(s, data, progress, exact=None) -> dict:
    """Finite forests for every K, and the exact values of the settings ``exact``."""
    if not isinstance(exact, Mapping):
        return {"note": "No sampled forests without exact values for these settings."
                if s["sampled"] else ""}
    shown, exact, data = EXACT.run(exact, data.to_store())
    if not s["sampled"]:
        return {"exact": shown, "sampled": None, "note": ""}
    if exact["axis"] != "K" or exact["problem"] == UPLOAD:
        return {"note": "Sampled forests are shown against K, for a built-in problem."}
    df = sampled_vs_k(build_table(exact), n_estimators=s["n_estimators"],
                      random_state=s["random_state"], max_depth=_depth(exact),
                      k_semantics=exact["k_semantics"], progress=progress)
    return {"exact": shown, "sampled": to_jsonable(df),
            "note": f"{s['n_estimators']:,} trees per K grown."}


def render_sampled(out, s, data, exact=None):
    """The lines with the finite forests' points (none where there are none to draw)."""
    lines = masking_lines(MaskingCurves.from_dict(out["exact"]), from_jsonable(
        out["sampled"])) if "exact" in out else no_update
    return lines, out["note"]


EXACT = JobView(PREFIX, PARAMS, compute=compute_exact, render=render_exact, data_store=DATA,
                namespace="masking-curves",  # MaskingCurves.to_dict, not the old records
                outputs=[("masking-lines", "figure"), ("masking-bump", "figure"),
                         ("masking-delta", "figure"), ("masking-summary", "children"),
                         ("masking-exact", "data"), ("masking-table", "columns"),
                         ("masking-table", "data"), ("masking-table-note", "children")],
                disable=["masking-fieldset", *(PARAMS.id(n) for n in (  # dcc controls
                    "problem", "irrelevant", "copy", "flip", "max_features", "max_depth"))])
FORESTS = JobView("masking-forests", SAMPLED, compute=compute_sampled, render=render_sampled,
                  extra=[("exact", Input("masking-exact", "data"))], data_store=DATA,
                  outputs=[("masking-lines", "figure"), ("masking-forests-note", "children")],
                  disable=["masking-forests-fieldset"], what="The figure")
EXACT.register()
FORESTS.register()
EXACT.register_downloads(study.EXACT_CSV)
FORESTS.register_downloads({"masking-forests-download-button": study.forests_csv})
state.register_url_sync(PREFIX)


def initial_values(query, vi_data=None) -> tuple[dict, list[str]]:
    """Control values of a fresh page, and notes on the link's values that were ignored."""
    query = dict(query or {})
    data, notes = study.session_data(query, vi_data)
    query["problem"], query["irrelevant"], more = study.link_problem(query, data)
    if not study.built_in(query):  # link_problem's note names the copy it ignores
        query.pop("copy", None)
    ctx = problem_context(query, study.data_context(data))
    try:
        PARAMS.by_name["copy"].parse(query.get("copy", NO_COPY), ctx)
    except ValueError:
        notes.append(study.copy_note(query.pop("copy"), ctx))
    values, most = PARAMS.from_url(query, ctx)
    forests, rest = SAMPLED.from_url(query, Context())
    return {**values, **forests}, notes + more + most + rest


def page_query(values, data: Context | None = None) -> str | None:
    """The URL query of control values (None when one cannot be used).

    The problem carries its irrelevant bits, other values are written when they are not
    their defaults, and the K or depth the axis does not use is kept (switching the axis
    back restores it).
    """
    settings, errors = PARAMS.validate(values, data)
    forests, more = SAMPLED.validate(values, Context())
    if errors or more:
        return None
    for name in ("max_features", "max_depth"):
        try:
            settings.setdefault(name, PARAMS.by_name[name].parse(values[name],
                                                                 problem_context(values, data)))
        except ValueError:
            pass
    settings.update(forests, problem=study_spec(settings), irrelevant=0)  # in the problem
    kept = {n: v for n, v in settings.items()
            if n == "problem" or v != (PARAMS.by_name.get(n) or SAMPLED.by_name[n]).default}
    return "&".join(q for q in (PARAMS.query(kept), SAMPLED.query(kept)) if q)


def layout(vi_data=None, **query):
    values, notes = initial_values(query, vi_data)
    data = study.session_data(query, vi_data)[0]
    ctx = problem_context(values, study.data_context(data))
    f = dict(zip(PARAMS.names, PARAMS.fields(values, ctx)))
    f["flip"] = PARAMS.field("flip", values["flip"], ctx)  # shown with or without a copy...
    f["flip"].children[1].marks = {v: f"{v:g}" for v in (0, 0.1, 0.2, 0.3, 0.4, 0.5)}
    s = {n: SAMPLED.field(n, values[n], ctx) for n in SAMPLED.names}
    f["flip"].className = f["copy"].className  # ...but not with an upload
    help_ = html.P(study.problem_help(values["problem"]), id="masking-problem-help",
                   className="vi-help")
    controls = [
        html.Fieldset(id="masking-fieldset", className="vi-fieldset", children=[
            ui.card("Inputs", f["problem"], help_, f["irrelevant"]),
            ui.card("Noisy copy", f["copy"], f["flip"]),
            ui.card("Trees", f["method"], f["k_semantics"], f["axis"], f["max_features"],
                    f["max_depth"])]),
        ui.card("Sampled forests", s["sampled"],  # outside the fieldset a job disables
                html.Fieldset(html.Div([s["n_estimators"], s["random_state"]],
                                       className="vi-row"),
                              id="masking-forests-fieldset", className="vi-fieldset"),
                html.P("Open diamonds: mean over the trees of a forest grown on the exact "
                       "distribution, with bars of \u00b12 standard errors.",
                       className="vi-help"),
                html.P(id="masking-forests-note", className="vi-help"), *FORESTS.status(),
                *study.forests_download())]
    return page_frame(
        PREFIX, title="Masking", notes=notes, data_label=study.data_label(values, ctx),
        lead="Totally randomized trees (K=1) credit every variable with all of its "
             "conditional information (Eqn 3). With K>1 the best of K drawn variables wins "
             "each node, so strong variables mask weaker ones that carry the same "
             "information, and the ranking can change. Values are exact: the infinite "
             "forest on the exact distribution, or on the rows of an uploaded table.",
        stores=[state.query_store(PREFIX, page_query(values, ctx) or ""),
                dcc.Store(id=DATA, data=data.to_store()), dcc.Store(id="masking-exact"),
                *EXACT.stores(), *FORESTS.stores()],
        controls=controls, status=EXACT.status(),
        content=study.figure_cards())


@callback(Output("masking-query", "data"), *PARAMS.inputs(), *SAMPLED.inputs(),
          State(DATA, "data"), prevent_initial_call=True)
def write_query(*a):
    query = page_query(dict(zip(PARAMS.names + SAMPLED.names, a)), study.data_context(a[-1]))
    return no_update if query is None else query


@callback(Output("masking-copy", "options"), Output("masking-copy", "value"),
          Output("masking-problem-help", "children"), Output("masking-k", "max"),
          Output("masking-k", "marks"), Output("masking-k", "value"),
          Output("masking-depth", "options"), Output("masking-depth", "value"),
          Output("masking-k-field", "className"), Output("masking-depth-field", "className"),
          *(Output(f"masking-{n}-field", "className") for n in ("irrelevant", "copy", "flip")),
          Output("masking-dataset", "children"),
          *(Input(PARAMS.id(n), "value") for n in ("problem", "irrelevant", "copy", "axis")),
          State("masking-k", "value"), State("masking-depth", "value"),
          State(DATA, "data"), prevent_initial_call=True)
def fit_controls(problem, irrelevant, copy, axis, k, depth, data=None):
    """Controls that follow the others (:func:`study.fitted_controls`)."""
    out = study.fitted_controls(PARAMS, problem, irrelevant, copy, axis, k, depth, data)
    return (no_update,) * 14 if out is None else out
