"""The study the Masking page shows: the exact table its controls build, figures, sentences.

The table is a built-in problem with a small exact distribution (LED, XOR or SYM), 0..6
irrelevant fair bits and optionally a noisy copy of one variable; every figure comes from
:mod:`varimp_core.plots.masking`.  The Masking page (:mod:`pages.masking`) is its only user.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd
from dash import dcc, html

from varimp_core.plots.masking import make_delta_heatmap, make_k_lines, make_rank_bump
from varimp_core.problems.registry import get_problem, parse_spec
from varimp_core.studies.masking import importance_change
from varimp_core.studies.masking_copy import add_noisy_copy

from .controls import card
from .datasource import spec_from_options
from .params import Context

__all__ = ["PROBLEMS", "PRESETS", "MAX_IRRELEVANT", "NO_COPY", "split_spec", "full_spec",
           "link_problem", "copy_note", "problem_context", "problem_choices", "copy_choices",
           "depth_choices", "build_table", "figures", "lines_figure", "summary_sentences",
           "figure_cards"]

PROBLEMS = ("led", "xor", "sym")  # built-in problems with a small exact distribution
PRESETS = [("led", "LED \u2014 7 segments (Table 2)"),
           ("led:noise=0.1", "LED \u2014 segments flipped with probability 0.1"),
           ("xor", "XOR of 2 bits"), ("xor:relevant=3", "XOR of 3 bits"),
           ("sym", "SYM \u2014 2 bits, symmetric")]
MAX_IRRELEVANT = 6
NO_COPY = "none"


# -- the problem and its exact table ---------------------------------------------------------
def _last(value):
    return value[-1] if isinstance(value, (list, tuple)) and value else value


def split_spec(text) -> tuple[str, int]:
    """``"led:irrelevant=3,noise=0.1"`` -> ``("led:noise=0.1", 3)``.

    Raises ValueError with the note a link gets when the page cannot show ``text``.
    """
    text = _last(text)
    try:
        name, options = parse_spec(str(text))
    except ValueError as exc:
        raise ValueError(f"The link's problem was ignored: {exc} Showing LED instead.") from None
    if name not in PROBLEMS:
        raise ValueError(f"The Masking page needs a built-in problem with a small exact "
                         f"distribution (LED, XOR or SYM), so it shows LED instead of {name}; "
                         f"the other pages still use {name}.")
    irrelevant = int(options.pop("irrelevant", 0))
    if irrelevant > MAX_IRRELEVANT:
        raise ValueError(f"The Masking page adds at most {MAX_IRRELEVANT} irrelevant "
                         f"variables, so it shows LED instead of {text}.")
    return spec_from_options(name, options), irrelevant


def full_spec(base: str, irrelevant: int) -> str:
    """Base spec plus ``irrelevant`` fair bits, canonical."""
    name, options = parse_spec(base)
    return spec_from_options(name, {**options, "irrelevant": irrelevant or None})


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
                   extra={"problem": base, "relevant": tuple(problem.relevant or ())})


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
    """The exact table of settings ``s``: the problem, its irrelevant bits, the noisy copy.

    The copy (``"X5'"`` for X5) comes right after the relevant variables, so the colours
    of X1..Xr never change when irrelevant variables come and go.
    """
    problem = get_problem(full_spec(s["problem"], s["irrelevant"]))
    table = problem.exact_table()
    if s["copy"] != NO_COPY:
        table = add_noisy_copy(table, s["copy"], s["flip"], position=len(problem.relevant or ()))
    return table


# -- figures and sentences -------------------------------------------------------------------
def lines_figure(exact: Mapping[str, Any], sampled: Mapping[str, list] | None = None):
    """Importance of each variable against K (or depth); open diamonds for ``sampled``."""
    ds = None if sampled is None else pd.DataFrame(sampled)
    return make_k_lines(pd.DataFrame(exact["records"]), ds, x=exact["x"])


def figures(exact: Mapping[str, Any]) -> tuple:
    """The lines, the rank bump chart and the change heatmap of an exact result."""
    df, x = pd.DataFrame(exact["records"]), exact["x"]
    return (lines_figure(exact), make_rank_bump(df, x=x),
            make_delta_heatmap(importance_change(df, x=x), x=x))


def _order(d: pd.DataFrame) -> str:
    """``"X5 > X2 = X3"``: variables with a positive importance, most important first."""
    d = d[d["importance"] > 1e-9].sort_values(["rank", "variable"])
    groups = d.groupby("rank", sort=True)["variable"].apply(" = ".join)
    return " > ".join(groups.tolist())


def summary_sentences(exact: Mapping[str, Any], settings: Mapping[str, Any]) -> list[str]:
    """What to notice in the current view, in a few sentences with the core's numbers."""
    df, p, info, x = pd.DataFrame(exact["records"]), exact["p"], exact["information"], exact["x"]
    sums = df.groupby(x)["importance"].sum()
    out = []
    if x == "depth":
        return [f"{p} inputs, K = {settings['max_features']}. Trees stopped at depth D keep the "
                "parts of the importances from nodes above depth D (Proposition 6 at K=1); the "
                f"full-depth sum {sums.iloc[-1]:.4f} bits is I(X;Y)."]
    if settings["max_depth"] == "full" and info is not None:
        spread = (f"{sums.mean():.4f} bits" if sums.max() - sums.min() < 5e-5 else
                  f"{sums.min():.4f}\u2013{sums.max():.4f} bits")
        out.append(f"{p} inputs; I(X;Y) = {info:.4f} bits. The importances sum to "
                   f"{spread} at every K (Theorem 2).")
    else:
        out.append(f"{p} inputs; trees stop at depth {settings['max_depth']}, so the sums "
                   f"({sums.min():.3f}\u2013{sums.max():.3f} bits) stay below "
                   f"I(X;Y) = {info:.3f} bits.")
    k1 = df[df.K == 1].set_index("variable")["importance"]
    kp = df[df.K == df.K.max()].set_index("variable")["importance"]
    irrelevant = settings["irrelevant"]
    if irrelevant:
        out.append(f"The {irrelevant} irrelevant variable"
                   f"{'s get' if irrelevant > 1 else ' gets'} 0 at K=1 and leave the "
                   "others' K=1 values unchanged (Theorems 3 and 5); at K>1 they dilute the "
                   "draws, which damps masking.")
    copy = exact.get("copy_name")
    if copy:
        orig = settings["copy"]
        out.append(f"{copy} copies {orig} with {settings['flip']:g} noise: at K=1 {orig} has "
                   f"{k1[orig]:.3f} and {copy} {k1[copy]:.3f} bits; at K={p} "
                   f"{orig} has {kp[orig]:.3f} and {copy} {kp[copy]:.3f} "
                   f"\u2014 {'masked' if kp[copy] < 0.5 * k1[copy] else 'not masked'}"
                   f" by {orig}.")
    first, last = _order(df[df.K == 1]), _order(df[df.K == df.K.max()])
    if first != last:
        out.append(f"The order changes: {first} at K=1, {last} at K={p}.")
    return out


def figure_cards() -> list:
    """The page's content: the lines and the summary, then the ranks and the changes."""
    graph = {n: dcc.Graph(id=f"masking-{n}", style={"height": h}, config={
        "displaylogo": False, "toImageButtonOptions": {"format": "svg"}})
        for n, h in (("lines", "460px"), ("bump", "420px"), ("delta", "420px"))}
    return [card("Importance", graph["lines"],
                 html.Div(id="masking-summary", className="vi-description"),
                 className="vi-figure"),
            html.Div(style={"display": "grid", "gap": "1rem",
                            "gridTemplateColumns": "repeat(auto-fit, minmax(380px, 1fr))"},
                     children=[card("Rank", graph["bump"], className="vi-figure"),
                               card("Change from the first column", graph["delta"],
                                    className="vi-figure")])]
