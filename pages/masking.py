"""Masking page: importances against K or depth, irrelevant variables, a noisy copy.

The page builds its own exact tables from its controls (below), or
takes an uploaded table, and gets every K or depth at once from :mod:`varimp_core.studies.masking`.

The study the Masking page shows: the exact table its controls build, the table, sentences
(from :mod:`varimp_core.studies.masking_report`) and CSV downloads; figures come from
:mod:`varimp_core.plots.masking`.

The table is a built-in problem with a small exact distribution (LED, XOR or SYM), 0..6
irrelevant fair bits and optionally a noisy copy of one variable, or the session's uploaded
table (:data:`UPLOAD`, as it is).
"""

from __future__ import annotations

from typing import Any, Mapping

import dash
from dash import Input, Output, State, callback, dcc, html, no_update

from pages._framework import controls as ui
from pages._framework import datasource
from pages._framework import state
from pages._framework.controls import card
from pages._framework.datachoice import DataChoice
from pages._framework.grid import grid, grid_table, number_format
from pages._framework.page_frame import (download_button, download_note, figure_config, page_frame,
                                         scroll_style)
from pages._framework.params import Context, Param, ParamSet, seed_param, sentence
from pages._framework.view import JobView
from pages._server import limits
from varimp_core.csvtext import safe_csv
from varimp_core.data.prepare import DataError
from varimp_core.plots.masking import delta_min_width, masking_figures, masking_lines
from varimp_core.problems.registry import get_problem
from varimp_core.serialize import from_jsonable, to_jsonable
from varimp_core.studies import masking_report as report
from varimp_core.studies.masking import (BINARY_CHOICES, MaskingCurves, importance_change,
                                         masking_curves, sampled_vs_k)
from varimp_core.studies.masking_copy import (MAX_IRRELEVANT, UPLOAD, masking_data, masking_spec,
                                              needs_binary_method, split_masking_spec,
                                              study_spec)

dash.register_page(__name__, path="/masking", name="Masking", order=3,
                   title="varimp \u2014 Masking", exact_inputs="upload")

PREFIX = "masking"
DATA = "masking-data"  # the store of the session's data choice (an upload is offered)
MAX_TREES = 2000  # the page's cap; VARIMP_MAX_TREES may lower it (pages._server.limits)


PRESETS = [("led", "LED \u2014 7 segments (Table 2)"),
           ("led:noise=0.1", "LED \u2014 segments flipped with probability 0.1"),
           ("xor", "XOR of 2 bits"), ("xor:relevant=3", "XOR of 3 bits"),
           ("sym", "SYM \u2014 2 bits, symmetric"), ("gauss", "gauss \u2014 2 continuous inputs")]
NO_COPY = "none"
NUM = number_format("fixed4")


# -- the problem and its exact table ---------------------------------------------------------
def _last(value):
    return value[-1] if isinstance(value, (list, tuple)) and value else value


def split_spec(text) -> tuple[str, int]:
    """:func:`split_masking_spec` of a link's value, raising the note the link gets."""
    try:
        return split_masking_spec(_last(text))
    except ValueError as exc:
        raise ValueError(f"The Masking page shows LED instead: {sentence(exc)} The other "
                         "pages still use the data chosen on the Data page.") from None


def link_problem(query: Mapping[str, Any], data: DataChoice) -> tuple[str, int, list]:
    """The problem of a fresh page: the link's, else the session's data ``data``.

    Returns its base spec (:data:`UPLOAD` for an uploaded table), its number of irrelevant
    bits and notes (LED, with a note, when the page cannot show the problem).
    """
    asked = _last(query.get("problem"))
    most, p = limits.max_exact_features(), data.n_features() if data.is_upload else None
    if asked is None and p is not None and p > most:  # it stays in the dropdown
        return "led", 0, [f"Your upload has {p} inputs; the exact curves take at most {most}, "
                          "so the page shows LED. Exclude inputs on the Data page to study it."]
    if data.is_upload and asked in (None, UPLOAD):
        return UPLOAD, 0, ["An uploaded table is studied as it is, with no irrelevant variables "
                           "or noisy copy: the link's were ignored."] if {
                               "irrelevant", "copy"} & set(query) else []
    if asked == UPLOAD:
        return "led", 0, ["The session's data is not an uploaded table, so the Masking page "
                          "shows LED; upload a table on the Data page."]
    try:
        base, bits = split_spec(asked or data["problem"] or "led")
    except ValueError as exc:
        return "led", 0, [str(exc)]
    return (base, *_irrelevant_key(query, bits))


def _irrelevant_key(query: Mapping[str, Any], bits: int) -> tuple[int, list]:
    """The irrelevant bits of a link: its problem's (``led:irrelevant=4``, as the page writes
    them), else its ``irrelevant`` key (a hand-typed ``?problem=led&irrelevant=5``), each
    with a note when the key is ignored (a bad value, or one the problem's bits override)."""
    raw = _last(query.get("irrelevant"))
    if raw is None:
        return bits, []
    param = PARAMS.by_name["irrelevant"]
    try:
        asked = param.parse(raw, Context())
    except ValueError as exc:
        return bits, [f"{sentence(exc)} The link's {param.label.lower()} were ignored."]
    if bits and asked != bits:
        return bits, [f"The problem names {bits} irrelevant variables; the link's "
                      f"irrelevant={asked} was ignored."]
    return asked, []


def method_choices(ctx: Context) -> list[dict]:
    """exact, exact-rf and exact-et; on an upload, the binary ones say the largest depth they
    can afford on it, or are disabled with why
    (:func:`pages._framework.controls.binary_method_note`)."""
    note, off = ui.binary_method_note(ctx)
    return [{"label": f"{m} \u2014 {note}" if note and m != "exact" else m, "value": m,
             "disabled": off and m != "exact"} for m in BINARY_CHOICES]


def data_context(store: Any) -> Context:
    """The p of a :class:`DataChoice` or a data store (parsed again), and its label as
    ``extra["upload"]`` when it is an upload, with what the exact binary methods can afford
    on it (``extra["binary"]``)."""
    try:
        data = store if isinstance(store, DataChoice) else DataChoice.from_store(store)
    except DataError:
        return Context()
    return Context(p=data.n_features(), extra={"upload": data.label(),
                                               "binary": data.binary_size}
                   if data.is_upload else {})


def session_data(query: Mapping[str, Any], vi_data: Any) -> tuple[DataChoice, list]:
    """The session's data choice and notes; a link may name an upload (``problem`` is ours)."""
    return DataChoice.from_page(query if query.get("source") == "upload" else {}, vi_data)


def binary_method(problem, method) -> tuple[str | None, list[str]]:
    """The method for ``problem`` when ``method`` (None: the default, ``exact``) cannot run.

    A problem with continuous inputs (gauss) is computed by the exact binary forests only,
    so the multiway ``exact`` becomes ``exact-rf``, with a note when a link asked for it.

    Returns
    -------
    method : str or None
        ``"exact-rf"``, or None when ``method`` can stay.
    notes : list of str
    """
    if method not in (None, "exact") or not needs_binary_method(problem):
        return None, []
    name = str(problem).split(":")[0]
    return "exact-rf", [] if method is None else [
        f"{name} has continuous inputs, which only exact-rf and exact-et take: the page "
        "uses exact-rf."]


def problem_help(problem: str) -> str:
    """The text under the Problem control."""
    if problem == UPLOAD:
        return ("Your uploaded table's rows as they are: exact-rf and exact-et split its numbers "
                "(text coded as scikit-learn sees it); exact works on its bins.")
    return get_problem(problem).description


def built_in(s: Mapping[str, Any]) -> bool:
    """Whether irrelevant bits and a noisy copy apply: not to an uploaded table."""
    return s.get("problem") != UPLOAD


def copy_note(copy, ctx: Context) -> str:
    """The note of a link whose noisy copy ``copy`` is not a variable of its problem."""
    return (f"The link's noisy copy of {str(_last(copy)).upper()} was ignored: "
            f"{ctx.extra['problem']} has the variables {', '.join(ctx.extra['relevant'])}.")


def data_label(values: Mapping[str, Any], data: Context | None = None) -> str:
    """What the header names: the exact table the controls build ("led (exact, 7 inputs)")."""
    ctx = problem_context(values, data)
    if ctx.extra.get("problem") == UPLOAD:
        return ctx.extra.get("upload", "no uploaded table: choose one on the Data page")
    if ctx.p is None:
        return "no table: choose LED, XOR or SYM"
    base = ctx.extra["problem"]
    spec = masking_spec(base, ctx.p - len(get_problem(base).variables) - ctx.extra["copy"])
    copy = f", {_last(values.get('copy'))}' a noisy copy" if ctx.extra["copy"] else ""
    return f"{spec} (exact, {ctx.p} inputs{copy})"


def problem_context(values: Mapping[str, Any], data: Context | None = None) -> Context:
    """What bounds and choices depend on: p of the table that ``values`` build, its problem.

    ``data`` is the session data's :func:`data_context`: an upload is offered with its label.
    """
    offer = {"upload": data.extra["upload"], "upload_p": data.p} \
        if data and "upload" in data.extra else {}
    if _last(values.get("problem")) == UPLOAD:
        return Context(p=data and data.p, extra={"problem": UPLOAD, "relevant": (),
                                                 "copy": False, **offer})
    try:
        base = split_spec(values.get("problem"))[0]
        problem = get_problem(base)
    except ValueError:
        return Context()
    try:  # a bad number of irrelevant bits has its own sentence; K's bound counts none
        irrelevant = min(max(int(_last(values.get("irrelevant")) or 0), 0), MAX_IRRELEVANT)
    except (TypeError, ValueError):
        irrelevant = 0
    copy = _last(values.get("copy")) not in (None, "", NO_COPY)
    return Context(p=len(problem.variables) + irrelevant + copy,
                   extra={"problem": base, "relevant": tuple(problem.relevant or ()),
                          "copy": copy, **offer})


def problem_choices(ctx: Context) -> list:
    """The presets, the session's uploaded table, and the problem of a link when it is another."""
    current, upload = ctx.extra.get("problem"), ctx.extra.get("upload")
    label = f"Your data: {upload or 'the uploaded table'}"
    p, most = ctx.extra.get("upload_p"), limits.max_exact_features()
    if p is not None and p > most:  # offered (a link may ask), but said to be too wide
        label += f" ({p} inputs; the exact curves take at most {most})"
    shown = PRESETS + ([(UPLOAD, label)] if upload or current == UPLOAD else [])
    return shown + ([(current, current)] if current and current not in dict(shown) else [])


def copy_choices(ctx: Context) -> list:
    """"No copy", then the relevant variables of the problem."""
    return [(NO_COPY, "No copy"), *((v, v) for v in ctx.extra.get("relevant", ()))]


def depth_choices(ctx: Context) -> list:
    """Full depth, or a depth limit from 1 to p - 1."""
    return [("full", "Full (no limit)"), *((d, str(d)) for d in range(1, ctx.p or 1))]


def build_table(s: Mapping[str, Any], data: DataChoice | None = None):
    """The exact table of settings ``s``, gauss's rows (:func:`masking_data`), or the upload's
    prepared rows (``data``; its binned table for the multiway ``exact``), read here."""
    if s["problem"] != UPLOAD:
        return masking_data(s["problem"], s["irrelevant"],
                            None if s["copy"] == NO_COPY else s["copy"], s.get("flip", 0.1))
    if data is None or not data.is_upload:
        raise ValueError("The session's data is not an uploaded table; upload one on the "
                         "Data page, or choose a built-in problem.")
    prepared = data.load()
    return prepared.table if s["method"] == "exact" else prepared


def fitted_controls(params, problem, irrelevant, copy, axis, k, depth, store) -> tuple:
    """The values of ``fit_controls``' outputs, in order (None when the problem has no table)."""
    data = data_context(store)
    ctx = problem_context({"problem": problem, "irrelevant": irrelevant}, data)
    if ctx.p is None:
        return None
    copies = params.by_name["copy"].options(ctx)
    copy = copy if copy in {o["value"] for o in copies} else NO_COPY
    p = ctx.p + (copy != NO_COPY)
    depths = params.by_name["max_depth"].options(Context(p=p))
    shown = dict(zip(params.names, params.field_classes({"axis": axis, "problem": problem})))
    return (copies, copy, problem_help(problem), p, {i: str(i) for i in range(1, p + 1)},
            min(int(k or 1), p), depths, depth if depth in {o["value"] for o in depths} else "full",
            *(shown[n] for n in ("max_features", "max_depth", "irrelevant", "copy", "copy")),
            data_label({"problem": problem, "irrelevant": irrelevant, "copy": copy}, data))


# -- figures and sentences -------------------------------------------------------------------
def summary(exact: Mapping[str, Any], settings: Mapping[str, Any]) -> list:
    """What to notice in the current view (the core's sentences), one paragraph each."""
    c = MaskingCurves.from_dict(exact)
    return [html.P(t) for t in report.summary_sentences(
        c.frame, settings, information=c.information, copy_name=c.copy_name)]


def table(exact: Mapping[str, Any], settings: Mapping[str, Any]) -> tuple[list, list, list]:
    """The Table 2 card: the table's columns and rows, and the sentences under it."""
    t, mismatch = report.study_table(MaskingCurves.from_dict(exact), settings)
    two = mismatch is None  # two header rows: the column, then ours / paper / difference

    def name(c):
        head, _, sub = c.partition(" (")
        return [head, sub.rstrip(")").replace(" - ", " \u2212 ") or "ours"] if two else c
    cols = [{"name": ["", "Variable"] if two else "Variable", "id": "variable"}] + [
        {"name": name(c), "id": c, "type": "numeric",  # the paper's values: as printed
         "format": number_format("fixed3") if "(paper)" in c else NUM}
        for c in t.columns[1:]]
    return cols, t.to_dict("records"), [html.P(s) for s in report.table2_sentences(t, mismatch)]


#: The Masking page's downloads, by button id (``JobView.register_downloads``).
EXACT_CSV = {
    "masking-download-figures": lambda out, s, data: (safe_csv(importance_change(
        MaskingCurves.from_dict(out).frame, x=out["x"])), report.csv_name(s, f"by-{out['x']}",
                                                                           data)),
    "masking-download-table": lambda out, s, data: (safe_csv(report.study_table(
        MaskingCurves.from_dict(out), s)[0]), report.csv_name(s, "table", data)),
}


def forests_csv(out, s, data, exact=None) -> tuple[str, str]:
    """The finite forests' points of the figure, as CSV."""
    if not out.get("sampled"):
        raise ValueError(out.get("note") or "Tick Finite forests to grow them, then download.")
    name = report.csv_name(exact, f"forests-{s['n_estimators']}-trees-seed-{s['random_state']}")
    return safe_csv(from_jsonable(out["sampled"])), name


def table_title(problem) -> str:
    """The table card's title: Table 2 of Louppe et al. is the LED's (issue #26)."""
    if problem == UPLOAD:
        return "Table (your uploaded table)"
    base = str(problem or "").split(":")[0]
    return "Table (Table 2 of Louppe et al. for the LED)" if base == "led" else \
        f"Table ({base.upper() or 'the chosen problem'})"


def copy_card_class(problem) -> str:
    """The Noisy copy card: hidden for an uploaded table, which gets no copy."""
    return "vi-card vi-hidden" if problem == UPLOAD else "vi-card"


def _delta_width(n_columns: int | None) -> int | None:
    return delta_min_width(n_columns) if n_columns else None


def problem_columns(problem) -> int | None:
    """The change heatmap's number of columns before a result: the problem's inputs (one
    column per K), or None when the layout cannot tell (an upload)."""
    try:
        return len(datasource.problem_of(str(problem)).variables)
    except ValueError:  # an upload, or a value the page refuses with a sentence
        return None


def figure_cards(problem="led") -> list:
    """The page's content: the lines and the summary, then the ranks and the changes."""
    graph = {n: dcc.Graph(id=f"masking-{n}", style={"height": h},
                          config=figure_config(f"masking-{n}", "svg"))
        for n, h in (("lines", "460px"), ("bump", "420px"), ("delta", "420px"))}
    graph["delta"].className = "vi-figure"
    delta = html.Div(graph["delta"], id="masking-delta-scroll", className="vi-figure-scroll",
                     style=scroll_style(_delta_width(problem_columns(problem))))
    return [download_note("masking"), dcc.Download(id="masking-download"),
            card("Importance", graph["lines"],
                 html.Div(id="masking-summary", className="vi-description"),
                 download_button("masking", "Download the three figures' values (CSV)", "figures"),
                 className="vi-figure"),
            html.Div(className="vi-figure-pair",  # one above the other in presentation mode
                     style={"display": "grid", "gap": "1rem",
                            "gridTemplateColumns": "repeat(auto-fit, minmax(min(100%, 380px), 1fr))"},
                     children=[card("Rank", graph["bump"], className="vi-figure"),
                               card("Change from the first column", delta,
                                    className="vi-figure")]),
            card(None, html.H2(table_title(problem), id="masking-table-title",
                               className="vi-card-title"),
                 html.Div(id="masking-table-note", className="vi-help"),
                 grid("masking-table"),
                 download_button("masking", "Download the table (CSV)", "table"), id="table2")]


def forests_download() -> list:
    """The finite forests' download button, its sentence and its ``dcc.Download``."""
    return [download_button("masking-forests", "Download finite forests (CSV)"),
            download_note("masking-forests"), dcc.Download(id="masking-forests-download")]


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
    Param("problem", "Problem", "choice", "led", choices=problem_choices,
          control="dropdown"),
    Param("irrelevant", "Irrelevant variables", default=0, low=0, high=MAX_IRRELEVANT,
          control="slider", what="number of irrelevant variables", applies=built_in,
          help="Independent fair bits appended to the inputs. At K=1 they change nothing "
               "(Theorem 5); at K>1 they damp masking."),
    Param("copy", "Copy of", "choice", NO_COPY, control="dropdown", what="noisy copy",
          choices=copy_choices, applies=built_in),
    Param("flip", "Noise of the copy", "float", 0.1, low=0.0, high=0.5, step=0.05,
          control="slider", what="copy noise", applies=lambda s: s.get("copy") != NO_COPY,
          help="Probability that the copy differs from the original (0: exact copy). "
               "The copy is added to the exact distribution, so values stay exact."),
    Param("k_semantics", "K semantics", "choice", "id3", key="semantics",
          choices=[("id3", "id3 (Louppe et al.)"), ("sklearn", "scikit-learn")],
          help="scikit-learn counts used and constant variables towards K, so it does not "
               "reproduce Table 2 for K \u2265 2."),
    Param("method", "Method", "choice", "exact", choices=method_choices,
          help="exact-rf, exact-et: scikit-learn's binary forests (K as it reads K), on numbers."),
    Param("axis", "Against", "choice", "K", what="x axis",
          choices=[("K", "K"), ("depth", "Maximum depth")]),
    Param("max_features", "K of every tree", default=1, key="K", low=1, high=lambda c: c.p,
          control="slider", what="K", applies=lambda s: s.get("axis") == "depth"),
    Param("max_depth", "Maximum depth of every tree", "choice", "full", key="depth",
          control="dropdown", what="maximum depth", applies=lambda s: s.get("axis") == "K",
          choices=depth_choices),
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
    columns, rows, sentences = table(out, s)
    curves = MaskingCurves.from_dict(out)
    n_columns = curves.frame[curves.x].nunique()
    return (*masking_figures(curves), summary(out, s), s,
            *grid_table(columns, rows), sentences, scroll_style(_delta_width(n_columns)))


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


def quick(s, data=None) -> bool:
    """Multiway exact curves of a built-in problem of a few inputs, its irrelevant bits and
    copy counted (Table 2: 0.23 s): computed in the request, drawn without a job."""
    return built_in(s) and s.get("method") == "exact" and datasource.quick_exact(
        s["problem"], int(s.get("irrelevant") or 0) + (s.get("copy", NO_COPY) != NO_COPY))


EXACT = JobView(PREFIX, PARAMS, compute=compute_exact, render=render_exact, data_store=DATA,
                namespace="masking-curves",  # MaskingCurves.to_dict, not the old records
                quick=quick,
                outputs=[("masking-lines", "figure"), ("masking-bump", "figure"),
                         ("masking-delta", "figure"), ("masking-summary", "children"),
                         ("masking-exact", "data"), ("masking-table", "columnDefs"),
                         ("masking-table", "rowData"), ("masking-table-note", "children"),
                         ("masking-delta-scroll", "style")],
                disable=["masking-fieldset", *(PARAMS.id(n) for n in (  # dcc controls
                    "problem", "irrelevant", "copy", "flip", "max_features", "max_depth"))])
FORESTS = JobView("masking-forests", SAMPLED, compute=compute_sampled, render=render_sampled,
                  extra=[("exact", Input("masking-exact", "data"))], data_store=DATA,
                  outputs=[("masking-lines", "figure"), ("masking-forests-note", "children")],
                  disable=["masking-forests-fieldset"], what="The figure")
EXACT.register()
FORESTS.register()
EXACT.register_downloads(EXACT_CSV)
FORESTS.register_downloads({"masking-forests-download-button": forests_csv})
state.register_url_sync(PREFIX)


def initial_values(query, vi_data=None) -> tuple[dict, list[str]]:
    """Control values of a fresh page, and notes on the link's values that were ignored."""
    query = dict(query or {})
    data, notes = session_data(query, vi_data)
    query["problem"], query["irrelevant"], more = link_problem(query, data)
    if not built_in(query):  # link_problem's note names the copy it ignores
        query.pop("copy", None)
    method, binary_notes = binary_method(query["problem"], _last(query.get("method")))
    notes += binary_notes
    if method is not None:
        query["method"] = method
    ctx = problem_context(query, data_context(data))
    try:
        PARAMS.by_name["copy"].parse(query.get("copy", NO_COPY), ctx)
    except ValueError:
        notes.append(copy_note(query.pop("copy"), ctx))
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
    data = session_data(query, vi_data)[0]
    ctx = problem_context(values, data_context(data))
    f = dict(zip(PARAMS.names, PARAMS.fields(values, ctx)))
    f["flip"] = PARAMS.field("flip", values["flip"], ctx)  # shown with or without a copy...
    f["flip"].children[1].marks = {v: f"{v:g}" for v in (0, 0.1, 0.2, 0.3, 0.4, 0.5)}
    s = {n: SAMPLED.field(n, values[n], ctx) for n in SAMPLED.names}
    f["flip"].className = f["copy"].className  # ...but not with an upload
    help_ = html.P(problem_help(values["problem"]), id="masking-problem-help",
                   className="vi-help")
    controls = [
        html.Fieldset(id="masking-fieldset", className="vi-fieldset", children=[
            ui.card("Inputs", f["problem"], help_, f["irrelevant"]),
            ui.card("Noisy copy", f["copy"], f["flip"], id="masking-copy-card",
                    className="vi-hidden" if values["problem"] == UPLOAD else ""),
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
                *forests_download())]
    return page_frame(
        PREFIX, title="Masking", notes=notes, data_label=data_label(values, ctx),
        lead="Totally randomized trees (K=1) credit every variable with all of its "
             "conditional information (Eqn 3). With K>1 the best of K drawn variables wins "
             "each node, so strong variables mask weaker ones that carry the same "
             "information, and the ranking can change. Values are exact: the infinite "
             "forest on the exact distribution, or on the rows of an uploaded table.",
        stores=[state.query_store(PREFIX, page_query(values, ctx) or ""),
                dcc.Store(id=DATA, data=data.to_store()), dcc.Store(id="masking-exact"),
                *EXACT.stores(), *FORESTS.stores()],
        controls=controls, status=EXACT.status(),
        content=figure_cards(values["problem"]))


@callback(Output("masking-query", "data"), *PARAMS.inputs(), *SAMPLED.inputs(),
          State(DATA, "data"), prevent_initial_call=True)
def write_query(*a):
    query = page_query(dict(zip(PARAMS.names + SAMPLED.names, a)), data_context(a[-1]))
    return no_update if query is None else query


@callback(Output(PARAMS.id("method"), "value"), Input(PARAMS.id("problem"), "value"),
          State(PARAMS.id("method"), "value"), prevent_initial_call=True)
def method_for_problem(problem, method):
    """exact-rf when the problem chosen has continuous inputs and the method is ``exact``."""
    chosen = binary_method(problem, method or "exact")[0]
    return no_update if chosen is None else chosen


@callback(Output("masking-copy", "options"), Output("masking-copy", "value"),
          Output("masking-problem-help", "children"), Output("masking-k", "max"),
          Output("masking-k", "marks"), Output("masking-k", "value"),
          Output("masking-depth", "options"), Output("masking-depth", "value"),
          Output("masking-k-field", "className"), Output("masking-depth-field", "className"),
          *(Output(f"masking-{n}-field", "className") for n in ("irrelevant", "copy", "flip")),
          Output("masking-table-title", "children"), Output("masking-copy-card", "className"),
          Output("masking-dataset", "children"),
          *(Input(PARAMS.id(n), "value") for n in ("problem", "irrelevant", "copy", "axis")),
          State("masking-k", "value"), State("masking-depth", "value"),
          State(DATA, "data"), prevent_initial_call=True)
def fit_controls(problem, irrelevant, copy, axis, k, depth, data=None):
    """Controls that follow the others (:func:`fitted_controls`)."""
    out = fitted_controls(PARAMS, problem, irrelevant, copy, axis, k, depth, data)
    if out is None:
        return (no_update,) * 16
    return (*out[:-1], table_title(problem), copy_card_class(problem), out[-1])
