"""The study the Masking page shows: the exact table its controls build, figures, the table,
sentences (from :mod:`varimp_core.studies.masking_report`) and CSV downloads.

The table is a built-in problem with a small exact distribution (LED, XOR or SYM), 0..6
irrelevant fair bits and optionally a noisy copy of one variable; every figure comes from
:mod:`varimp_core.plots.masking`.  The Masking page (:mod:`pages.masking`) is its only user.
"""

from __future__ import annotations

from typing import Any, Mapping

from dash import dcc, html
from dash.dash_table import DataTable
from dash.dash_table.Format import Format, Scheme

from varimp_core.csvtext import csv_filename, safe_csv
from varimp_core.plots.masking import make_delta_heatmap, make_k_lines, make_rank_bump
from varimp_core.problems.registry import get_problem
from varimp_core.studies import masking_report as report
from varimp_core.serialize import from_jsonable
from varimp_core.studies.masking import MaskingCurves, importance_change
from varimp_core.studies.masking_copy import masking_data, masking_spec, split_masking_spec


from .controls import card
from .page_frame import download_button, download_note, figure_config, table_style
from .params import Context, sentence

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


def link_problem(query: Mapping[str, Any], vi_data: Any = None) -> tuple[str, int, list]:
    """The problem of a fresh page: the link's, else the session's when the page can show it.

    Returns its base spec, its number of irrelevant bits and notes (LED, with a note, when
    the page cannot show the problem).
    """
    session = vi_data.get("params") if isinstance(vi_data, Mapping) else None
    session = session if isinstance(session, Mapping) else {}
    if query.get("source") == "upload" or (
            "problem" not in query and session.get("source") == "upload"):
        return "led", 0, ["The Masking page needs a built-in problem with an exact "
                          "distribution (LED, XOR or SYM), so it shows LED; your uploaded "
                          "table is still used by the other pages."]
    try:
        return (*split_spec(query.get("problem", session.get("problem") or "led")), [])
    except ValueError as exc:
        return "led", 0, [str(exc)]


def copy_note(copy, ctx: Context) -> str:
    """The note of a link whose noisy copy ``copy`` is not a variable of its problem."""
    return (f"The link's noisy copy of {str(_last(copy)).upper()} was ignored: "
            f"{ctx.extra['problem']} has the variables {', '.join(ctx.extra['relevant'])}.")


def data_label(values: Mapping[str, Any]) -> str:
    """What the header names: the exact table the controls build ("led (exact, 7 inputs)")."""
    ctx = problem_context(values)
    if ctx.p is None:
        return "no table: choose LED, XOR or SYM"
    base = ctx.extra["problem"]
    spec = masking_spec(base, ctx.p - len(get_problem(base).variables) - ctx.extra["copy"])
    copy = f", {_last(values.get('copy'))}' a noisy copy" if ctx.extra["copy"] else ""
    return f"{spec} (exact, {ctx.p} inputs{copy})"


def problem_context(values: Mapping[str, Any]) -> Context:
    """What bounds and choices depend on: p of the table that ``values`` build, its problem."""
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
                          "copy": copy})


def problem_choices(ctx: Context) -> list:
    """The presets, and the problem of a link when it is another one."""
    current = ctx.extra.get("problem")
    return PRESETS + ([(current, current)] if current and current not in dict(PRESETS) else [])


def copy_choices(ctx: Context) -> list:
    """"No copy", then the relevant variables of the problem."""
    return [(NO_COPY, "No copy"), *((v, v) for v in ctx.extra.get("relevant", ()))]


def depth_choices(ctx: Context) -> list:
    """Full depth, or a depth limit from 1 to p - 1."""
    return [("full", "Full (no limit)"), *((d, str(d)) for d in range(1, ctx.p or 1))]


def build_table(s: Mapping[str, Any]):
    """The exact table of settings ``s``, or gauss's rows (:func:`masking_data`)."""
    return masking_data(s["problem"], s["irrelevant"],
                         None if s["copy"] == NO_COPY else s["copy"], s.get("flip", 0.1))


# -- figures and sentences -------------------------------------------------------------------
def lines_figure(exact: Mapping[str, Any], sampled: Any = None):
    """Importance of each variable against K (or depth); open diamonds for ``sampled``."""
    curves = MaskingCurves.from_dict(exact)
    return make_k_lines(curves.frame, None if sampled is None else from_jsonable(sampled),
                        x=curves.x)


def figures(exact: Mapping[str, Any]) -> tuple:
    """The lines, the rank bump chart and the change heatmap of an exact result."""
    c = MaskingCurves.from_dict(exact)
    return (lines_figure(exact), make_rank_bump(c.frame, x=c.x),
            make_delta_heatmap(importance_change(c.frame, x=c.x), x=c.x))


def summary(exact: Mapping[str, Any], settings: Mapping[str, Any]) -> list:
    """What to notice in the current view (the core's sentences), one paragraph each."""
    c = MaskingCurves.from_dict(exact)
    return [html.P(t) for t in report.summary_sentences(
        c.frame, settings, information=c.information, copy_name=c.copy_name)]


def _paper_table(exact, settings):
    mismatch = report.table2_mismatch(settings)
    c = MaskingCurves.from_dict(exact)
    return report.importance_table(c.frame, x=c.x, paper=mismatch is None), mismatch


def table(exact: Mapping[str, Any], settings: Mapping[str, Any]) -> tuple[list, list, list]:
    """The Table 2 card: the table's columns and rows, and the sentences under it."""
    t, mismatch = _paper_table(exact, settings)
    two = mismatch is None  # two header rows: the column, then ours / paper / difference

    def name(c):
        head, _, sub = c.partition(" (")
        return [head, sub.rstrip(")").replace(" - ", " \u2212 ") or "ours"] if two else c
    cols = [{"name": ["", "Variable"] if two else "Variable", "id": "variable"}] + [
        {"name": name(c), "id": c, "type": "numeric",  # the paper's values: as printed
         "format": Format(precision=3, scheme=Scheme.fixed) if "(paper)" in c else NUM}
        for c in t.columns[1:]]
    return cols, t.to_dict("records"), [html.P(s) for s in report.table2_sentences(t, mismatch)]


def _filename(settings, what: str) -> str:
    s = settings
    parts = [f"copy-{s['copy']}-{s['flip']:g}" if s["copy"] != NO_COPY else "",
             "" if s["k_semantics"] == "id3" else s["k_semantics"],
             f"K{s['max_features']}" if s["axis"] == "depth" else
             ("" if s["max_depth"] == "full" else f"depth{s['max_depth']}"), what]
    return csv_filename("masking", None, *(x for x in parts if x),
                        name=masking_spec(s["problem"], s["irrelevant"]))


#: The Masking page's downloads, by button id (``JobView.register_downloads``).
EXACT_CSV = {
    "masking-download-figures": lambda out, s, data: (safe_csv(importance_change(
        MaskingCurves.from_dict(out).frame, x=out["x"])), _filename(s, f"by-{out['x']}")),
    "masking-download-table": lambda out, s, data: (safe_csv(_paper_table(out, s)[0]),
                                                    _filename(s, "table")),
}


def forests_csv(out, s, data, exact=None) -> tuple[str, str]:
    """The finite forests' points of the figure, as CSV."""
    if not out.get("sampled"):
        raise ValueError(out.get("note") or "Tick Finite forests to grow them, then download.")
    name = _filename(exact, f"forests-{s['n_estimators']}-trees-seed-{s['random_state']}")
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
