"""The study the Masking page shows: the exact table its controls build, the table, sentences
(from :mod:`varimp_core.studies.masking_report`) and CSV downloads; figures come from
:mod:`varimp_core.plots.masking`.

The table is a built-in problem with a small exact distribution (LED, XOR or SYM), 0..6
irrelevant fair bits and optionally a noisy copy of one variable, or the session's uploaded
table (:data:`UPLOAD`, as it is).  The Masking page (:mod:`pages.masking`) is its only user.
"""

from __future__ import annotations

from typing import Any, Mapping

from dash import dcc, html
from dash.dash_table import DataTable
from dash.dash_table.Format import Format, Scheme

from varimp_core.csvtext import safe_csv
from varimp_core.data.prepare import DataError
from varimp_core.problems.registry import get_problem
from varimp_core.studies import masking_report as report
from varimp_core.serialize import from_jsonable
from varimp_core.studies.masking import MaskingCurves, importance_change
from varimp_core.studies.masking_copy import (UPLOAD, masking_data, masking_spec,
                                              split_masking_spec)


from pages._framework.controls import card
from pages._server import limits
from pages._framework.datachoice import DataChoice
from pages._framework.page_frame import download_button, download_note, figure_config, table_style
from pages._framework.params import Context, sentence

PRESETS = [("led", "LED \u2014 7 segments (Table 2)"),
           ("led:noise=0.1", "LED \u2014 segments flipped with probability 0.1"),
           ("xor", "XOR of 2 bits"), ("xor:relevant=3", "XOR of 3 bits"),
           ("sym", "SYM \u2014 2 bits, symmetric"), ("gauss", "gauss \u2014 2 continuous inputs")]
NO_COPY = "none"
NUM = Format(precision=4, scheme=Scheme.fixed)


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
        return (*split_spec(asked or data["problem"] or "led"), [])
    except ValueError as exc:
        return "led", 0, [str(exc)]


def data_context(store: Any) -> Context:
    """The p of a :class:`DataChoice` or a data store (parsed again), and its label as
    ``extra["upload"]`` when it is an upload."""
    try:
        data = store if isinstance(store, DataChoice) else DataChoice.from_store(store)
    except DataError:
        return Context()
    return Context(p=data.n_features(), extra={"upload": data.label()} if data.is_upload else {})


def session_data(query: Mapping[str, Any], vi_data: Any) -> tuple[DataChoice, list]:
    """The session's data choice and notes; a link may name an upload (``problem`` is ours)."""
    return DataChoice.from_page(query if query.get("source") == "upload" else {}, vi_data)


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
    offer = {"upload": data.extra["upload"]} if data and "upload" in data.extra else {}
    if _last(values.get("problem")) == UPLOAD:
        return Context(p=data and data.p, extra={"problem": UPLOAD, "relevant": (),
                                                 "copy": False, **offer})
    try:
        base = split_spec(values.get("problem"))[0]
        problem = get_problem(base)
    except ValueError:
        return Context()
    try:  # a bad number of irrelevant bits has its own sentence; K's bound counts none
        irrelevant = int(_last(values.get("irrelevant")) or 0)
    except (TypeError, ValueError):
        irrelevant = 0
    copy = _last(values.get("copy")) not in (None, "", NO_COPY)
    return Context(p=len(problem.variables) + irrelevant + copy,
                   extra={"problem": base, "relevant": tuple(problem.relevant or ()),
                          "copy": copy, **offer})


def problem_choices(ctx: Context) -> list:
    """The presets, the session's uploaded table, and the problem of a link when it is another."""
    current, upload = ctx.extra.get("problem"), ctx.extra.get("upload")
    shown = PRESETS + ([(UPLOAD, f"Your data: {upload or 'the uploaded table'}")]
                       if upload or current == UPLOAD else [])
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
         "format": Format(precision=3, scheme=Scheme.fixed) if "(paper)" in c else NUM}
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


def figure_cards() -> list:
    """The page's content: the lines and the summary, then the ranks and the changes."""
    graph = {n: dcc.Graph(id=f"masking-{n}", style={"height": h},
                          config=figure_config(f"masking-{n}", "svg"))
        for n, h in (("lines", "460px"), ("bump", "420px"), ("delta", "420px"))}
    return [download_note("masking"), dcc.Download(id="masking-download"),
            card("Importance", graph["lines"],
                 html.Div(id="masking-summary", className="vi-description"),
                 download_button("masking", "Download the three figures' values (CSV)", "figures"),
                 className="vi-figure"),
            html.Div(style={"display": "grid", "gap": "1rem",
                            "gridTemplateColumns": "repeat(auto-fit, minmax(min(100%, 380px), 1fr))"},
                     children=[card("Rank", graph["bump"], className="vi-figure"),
                               card("Change from the first column", graph["delta"],
                                    className="vi-figure")]),
            card("Table (Table 2 of Louppe et al. for the LED)", html.Div(id="masking-table-note",
                                                               className="vi-help"),
                 DataTable(id="masking-table", columns=[], data=[],
                           merge_duplicate_headers=True, **table_style(["variable"])),
                 download_button("masking", "Download the table (CSV)", "table"), id="table2")]


def forests_download() -> list:
    """The finite forests' download button, its sentence and its ``dcc.Download``."""
    return [download_button("masking-forests", "Download finite forests (CSV)"),
            download_note("masking-forests"), dcc.Download(id="masking-forests-download")]
