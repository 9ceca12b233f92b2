"""What the Importances page shows: figures, texts, table and CSV export.

Every figure comes from :mod:`varimp_core.plots.importances`.
The Importances page (:mod:`pages.importances`) is its only user.
"""

from __future__ import annotations

from typing import Any, Mapping

from dash.dash_table.Format import Format, Scheme

from varimp_core.csvtext import csv_filename as common_csv_filename, safe_csv, table_number
from varimp_core.plots.importances import (make_importance_figure, make_theorem2_figure,
                                           method_label)
from varimp_core.exact.binary import BINARY_METHODS
from varimp_core.plots.convergence import make_convergence_figure
from varimp_core.result import ImportanceResult
from varimp_core.studies.chance import ChanceLevels
from varimp_core.studies.convergence import convergence_curve, convergence_note

from pages._framework import datasource

from pages._framework.results import SAMPLED


def theorem2_text(result: ImportanceResult, information: float | None = None) -> str:
    """The Theorem 2 check line, e.g. ``"sum = 3.3219 bits, I(X;Y) = 3.3219 bits ..."``."""
    units = result.units
    info = result.information if information is None else information
    head = f"sum = {result.total:.4f} {units}"
    if info is None or units != "bits":
        return head + "; Theorem 2 compares this sum with I(X;Y) in bits, which does not " \
                      "apply to these units."
    gap = result.total - float(info)
    text = f"{head}, I(X;Y) = {float(info):.4f} bits"
    depth = result.parameters.get("max_depth")
    if abs(gap) < 5e-5:
        return text + " \u2014 equal, as Theorem 2 says for fully grown trees."
    if depth is not None and gap < 0:
        return text + (f" \u2014 the sum is smaller: trees cut at depth {depth} do not use all "
                       f"the information (at K = 1, Proposition 6 keeps only the terms "
                       f"k < {depth} of Eqn 3).")
    if result.method in SAMPLED:
        return text + (f" \u2014 off by {gap:+.4f} bits: a finite forest (and the bootstrap, "
                       "when on) makes the sum differ.")
    return text + f" \u2014 off by {gap:+.4f} bits."


def exact_note(view: Mapping[str, Any], spread: str = "se") -> str:
    """One sentence on what the bars, whiskers and diamonds are."""
    result, exact = view["result"], view["exact"]
    sentences = [f"Bars: {method_label(result)}."]
    if result.importances_sem is not None:
        sentences.append("Whiskers: one standard error of the mean over trees (per-tree "
                         "SD / \u221aT)" + ("; boxes: the spread of the per-tree values "
                                           "(minimum, quartiles, maximum)." if spread == "trees"
                                           else "."))
    if exact is not None and exact.method in BINARY_METHODS:
        sentences.append(f"Black diamonds: {method_label(exact)}, the value this forest "
                         "converges to as its trees grow in number (same rows, K, depth "
                         "and impurity).")
    elif exact is not None:
        sentences.append(f"Black diamonds: the exact infinite-forest value for the same K and "
                         f"depth ({exact.parameters.get('k_semantics')} semantics).")
        if result.method in ("sklearn-rf", "sklearn-et"):
            sentences.append("scikit-learn grows binary trees on the raw values (and "
                             "bootstraps when asked), so its bars need not match the "
                             "multiway diamonds.")
    if result.method in ("eqn3", "exact") and not result.exact:
        sentences.append("The data is a sample: these are the exact values for its "
                         "empirical distribution (plug-in estimates).")
    chance = view.get("chance")
    return " ".join(sentences + list(view.get("notes", []))
                    + (chance.sentences() if chance is not None else []))


def table_columns(units: str = "bits", *, exact: bool = False, sampled: bool = False,
                  chance: ChanceLevels | None = None) -> list:
    """DataTable column specs (numbers with 4 decimals, in ``units``; the chance levels last)."""
    num = Format(precision=4, scheme=Scheme.fixed)
    cols = [{"name": "Variable", "id": "variable"},
            {"name": f"Importance ({units})", "id": "importance", "type": "numeric",
             "format": num}]
    if sampled:
        cols += [{"name": "Std. error", "id": "sem", "type": "numeric", "format": num},
                 {"name": "Per-tree SD", "id": "std", "type": "numeric", "format": num}]
    cols.append({"name": "Share (normalised)", "id": "normalised", "type": "numeric",
                 "format": Format(precision=2, scheme=Scheme.percentage)})
    if exact:
        cols += [{"name": f"Exact ({units})", "id": "exact", "type": "numeric", "format": num},
                 {"name": "Bar \u2212 exact", "id": "difference", "type": "numeric",
                  "format": Format(precision=4, scheme=Scheme.fixed, sign="+")}]
    return cols + [{"name": name, "id": cid, "type": "numeric", "format": num}
                   for cid, name in (chance.table_columns() if chance is not None else [])]


def table_rows(result: ImportanceResult, exact: ImportanceResult | None = None,
               chance: ChanceLevels | None = None) -> list[dict]:
    """One row per variable, with the exact numbers of the result (not rounded)."""
    sem, std = result.importances_sem, result.importances_std
    rows, extra = [], chance.table_rows() if chance is not None else []
    for i, name in enumerate(result.variables):
        row = {"variable": name, "importance": table_number(result.importances[i]),
               "normalised": table_number(result.normalised[i])}
        if sem is not None:
            row["sem"], row["std"] = table_number(sem[i]), table_number(std[i])
        if exact is not None:
            row["exact"] = table_number(exact.importances[i])
            row["difference"] = table_number(result.importances[i] - exact.importances[i])
        row.update({k: table_number(v) for k, v in (extra[i] if extra else {}).items()})
        rows.append(row)
    return rows


def csv_text(result: ImportanceResult, exact: ImportanceResult | None = None,
             chance: ChanceLevels | None = None) -> str:
    """CSV of ``result.to_frame()`` (plus the exact and chance columns), safe for a spreadsheet."""
    df = result.to_frame()
    if exact is not None:
        df["exact_importance"] = exact.importances
    if chance is not None:
        df = df.join(chance.to_frame().drop(columns=["variable", "importance"]))
    return safe_csv(df)


def csv_filename(data: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """``varimp-importances-<data>-<method>-K<k>.csv`` with only safe characters."""
    return common_csv_filename("importances", datasource.canonical_params(data),
                               settings["method"], f"K{settings['max_features']}")


def view_from_dict(out: Mapping[str, Any]) -> dict:
    """The page's cached result with its core results rebuilt by the core's ``from_dict``."""
    return {**out, "result": ImportanceResult.from_dict(out["result"]),
            "exact": None if out.get("exact") is None else ImportanceResult.from_dict(out["exact"]),
            "chance": None if out.get("chance") is None else ChanceLevels.from_dict(out["chance"])}


def render(view: Mapping[str, Any], spread: str = "se") -> dict:
    """Figures, texts and table of a computed view.

    Returns
    -------
    out : dict
        ``figure``, ``theorem2_figure``, ``convergence`` (how many trees),
        ``theorem2`` (text), ``note`` (text),
        ``columns`` and ``rows`` of the table.
    """
    result, exact, chance = view["result"], view["exact"], view.get("chance")
    info = view.get("information")
    shown = result
    if result.information is None and info is not None:
        shown = ImportanceResult(**{**result.__dict__, "information": info})
    figure = make_importance_figure(result, exact, spread=spread, chance=chance)
    why = convergence_note(result, exact)
    curve = None if why else convergence_curve(result, exact, points=400)
    figure.update_layout(height=None)  # the page sizes it (taller in presentation mode)
    return {
        "figure": figure,
        "theorem2_figure": make_theorem2_figure(shown),
        "convergence": make_convergence_figure(curve, label=method_label(result),
                                               units=result.units, note=why),
        "theorem2": theorem2_text(result, info),
        "note": exact_note(view, spread),
        "columns": table_columns(result.units, exact=exact is not None,
                                 sampled=result.importances_sem is not None, chance=chance),
        "rows": table_rows(result, exact, chance),
    }
