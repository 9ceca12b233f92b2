"""Importances page: MDI per variable, exact or sampled, with the Theorem 2 check.

It reads top to bottom: parameters, compute, what it shows (figures, texts, table,
CSV export), layout.  Every figure comes from :mod:`varimp_core.plots.importances`.
"""

from __future__ import annotations

from typing import Any, Mapping

import dash
import numpy as np
from dash import Input, Output, State, callback, dcc, html, no_update

from pages._framework import controls as ui
from pages._framework import datasource, results, state
from pages._framework.datachoice import DataChoice
from pages._framework.grid import grid, grid_table, number_format
from pages._framework.datasource import data_query
from pages._framework.page_frame import (download_button, download_note, figure_config, page_frame)
from pages._framework.params import Context, Param, ParamSet
from pages._framework.results import SAMPLED
from pages._framework.view import JobView, context_for
from pages._server import jobs, limits
from varimp_core.csvtext import csv_filename as common_csv_filename
from varimp_core.csvtext import safe_csv, table_number
from varimp_core.exact.binary import BINARY_METHODS
from varimp_core.exact.moments import ImportanceMoments
from varimp_core.exact.information import joint_information
from varimp_core.plots.convergence import make_convergence_figure
from varimp_core.plots.importances import (fmt_number, make_importance_figure,
                                           make_theorem2_figure, method_label, units_label)
from varimp_core.result import ImportanceResult
from varimp_core.studies import convergence
from varimp_core.studies.chance import ChanceLevels, band_permutations
from varimp_core.studies.verdicts import VERDICT_WORK, VerdictResult, importance_verdicts
from varimp_core.studies.verdicts import verdict_size as core_verdict_size
from varimp_core.studies.convergence import (convergence_curve, convergence_note,
                                             expected_error_curve)

dash.register_page(__name__, path="/importances", name="Importances", order=1,
                   title="varimp \u2014 Importances")

PREFIX = "imp"
#: At most this many trees from the page; the server's VARIMP_MAX_TREES may lower it.
MAX_TREES_UI = 10_000
#: scikit-learn's and the core's bootstrap defaults per method.
DEFAULT_BOOTSTRAP = {"exact": False, "forest": False, "sklearn-rf": True, "sklearn-et": False,
                     "exact-rf": False, "exact-et": False}
METHOD_OPTIONS = [("exact", "Exact (infinite forest)"), ("forest", "Multiway forest (sampled)"),
                  ("sklearn-rf", "scikit-learn random forest"),
                  ("sklearn-et", "scikit-learn extra-trees"),
                  ("exact-rf", "Exact: scikit-learn RandomForest, bootstrap off (binary splits)"),
                  ("exact-et", "Exact: scikit-learn ExtraTrees (binary splits)")]
#: Why a method cannot measure the variance of a numeric target.
NO_VARIANCE = {"forest": "classification targets only",
               "exact-rf": "classification targets only",
               "exact-et": "classification targets only"}
#: Level of the verdicts (family-wise error rate of "relevant").
ALPHA = 0.05
#: Fewest label permutations: R + 1 >= 1/alpha, else no variable can be "relevant".
MIN_PERMUTATIONS = 19
MAX_PERMUTATIONS = 999


_regression = ui.is_regression
criterion_options = ui.criterion_options


def default_criterion(ctx: Context) -> str:
    return criterion_options(ctx)[0][0]


def method_options(ctx: Context) -> list[dict]:
    """Method choices; the exact method is disabled above the server's limit of inputs, and
    on a numeric target the methods that cannot measure its variance, each with why;
    exact-rf and exact-et say the largest depth they can afford on the data, or are
    disabled with why when they refuse it whatever the settings
    (:func:`pages._framework.controls.binary_method_note`)."""
    most = limits.max_exact_features()
    over = ctx.p is not None and ctx.p > most
    out = []
    for v, label in METHOD_OPTIONS:
        why = f"at most {most} inputs" if over and v == "exact" else (
            NO_VARIANCE.get(v) if _regression(ctx) else None)
        off = why is not None
        if why is None and v in BINARY_METHODS:
            why, off = ui.binary_method_note(ctx, v)
        out.append({"label": f"{label} \u2014 {why}" if why else label, "value": v,
                    "disabled": off})
    return out


def default_method(p: int | None) -> str:
    """Exact up to the server's limit of inputs, else scikit-learn's extra-trees."""
    return "exact" if p is None or p <= limits.max_exact_features() else "sklearn-et"


def default_order(data: DataChoice) -> str:
    """Bars of a sample (an upload, a drawn or real data set) open largest first, where the
    analyst looks for the important ones; an exact problem's keep the paper's column
    order, as its tables list them (issue #26)."""
    return "importance" if data.is_sample else "columns"


def _sampled(s) -> bool:
    return s.get("method") in SAMPLED


#: Methods whose per-tree covariance is exact (:func:`varimp_core.exact.moments.exact_moments`).
EXACT_MOMENTS = ("exact", "exact-rf", "exact-et")


PARAMS = ParamSet(PREFIX, [
    Param("method", "Method", "choice", "exact", choices=method_options),
    Param("max_features", "K", default=1, key="K", low=1, high=lambda c: c.p or 10_000,
          help=lambda c: f"Variables drawn at each node, 1 to {c.p}." if c.p
          else "Variables drawn at each node."),
    Param("max_depth", "Max depth", default=None, key="depth", low=1, blank="full",
          help="Blank grows the trees fully."),
    Param("criterion", "Impurity", "choice", "entropy", choices=criterion_options,
          help=lambda c: "The variance of the numeric target (units: variance of Y); the sum "
          "is Var(Y) \u2212 E Var(Y|X) at full depth." if _regression(c) else
          "Entropy measures in bits (Theorem 2 applies); Gini in Gini units."),
    Param("k_semantics", "K semantics", "choice", "id3", key="semantics",
          choices=ui.SEMANTICS_CHOICES, applies=lambda s: s.get("method") in ("exact", "forest")),
    Param("n_estimators", "Number of trees", default=100, key="trees", low=1,
          high=lambda c: limits.max_trees(MAX_TREES_UI), applies=_sampled,
          help=lambda c: limits.at_most_help(limits.max_trees(MAX_TREES_UI))),
    Param("bootstrap", "Bootstrap", "bool", None, applies=_sampled,
          help="Draw a bootstrap sample per tree"),
    Param("random_state", "Seed", default=0, key="tree_seed", low=0, high=2**32 - 1,
          applies=_sampled, help="Seeds the trees; the same seed grows the same forest."),
    Param("spread", "Whiskers", "choice", "se", key="whiskers", applies=_sampled,
          choices=[("se", "Standard error of the mean"), ("trees", "Per-tree spread")],
          help="The standard error (per-tree SD / \u221aT) says how precise a bar is; the "
               "spread of single trees is \u221aT times wider and can dwarf the bars."),
    Param("n_trees", "Trees T", default=None, key="T", low=1, high=10**9,
          blank=str(10 ** 2), what="T", applies=lambda s: s.get("method") in EXACT_MOMENTS,
          help="Whiskers on the exact bars: where a forest of T trees (bootstrap off) falls "
               "with probability 95%, \u00b11.96 \u03c3\u2c7c/\u221aT from the exact "
               "per-tree covariance; blank: 100."),
    Param("precision", "Precision \u03b5", "float", None, key="eps", low=1e-6, high=1e6,
          blank="0.01", what="\u03b5", applies=lambda s: s.get("method") in EXACT_MOMENTS,
          help="The table gives, per variable, the trees that bring its standard error "
               "\u03c3\u2c7c/\u221aT under \u03b5; blank: 0.01."),
    Param("order", "Bar order", "choice", "columns", choices=[
        ("importance", "Largest first"), ("columns", "Column order")],
          help="A sample's bars open largest first; an exact problem's in the paper's "
               "column order (X1, X2, ...)."),
    Param("show", "Show", "choice", "above", choices=[
        ("above", "above chance (debiased)"), ("plugin", "plug-in (biased on a sample)")],
          when=lambda c: bool(c.extra.get("sample")),
          help="On a sample every plug-in importance is biased upwards (an irrelevant "
               "variable gets a bar); above chance subtracts the mean of the variable's "
               "permutation null, so noise centres on 0."),
    Param("n_permutations", "Permutations R", default=19, key="perms", low=MIN_PERMUTATIONS,
          high=MAX_PERMUTATIONS, when=lambda c: bool(c.extra.get("sample")),
          help=f"Each permutation shuffles the target and regrows the method; the verdicts "
               f"need R + 1 \u2265 1/\u03b1 = {round(1 / ALPHA)}. On large data the test's "
               f"forests get fewer trees, then R is lowered, so that (R + 1) \u00d7 trees "
               f"\u00d7 rows stays under {VERDICT_WORK / 1e6:g} million; never below "
               f"{MIN_PERMUTATIONS}."),
])
#: Parameters that only change the drawing (not the cache key of the result).
DRAWING = ("spread", "show", "n_trees", "precision", "order")
#: T and epsilon of a blank control.
DEFAULT_T, DEFAULT_EPS = 100, 0.01
#: Parameters of a sample only (``when``: hidden and left out on an exact distribution).
SAMPLE_ONLY = ("show", "n_permutations")


def core_settings(settings: Mapping[str, Any], task: str | None) -> dict:
    """The keyword arguments of the core (no drawing or verdict parameters).

    scikit-learn's forests measure a numeric target's variance natively (the core takes no
    criterion for them), so their criterion is left out on a regression.
    """
    kwargs = {k: v for k, v in settings.items() if k not in DRAWING + SAMPLE_ONLY}
    if settings["method"] in SAMPLED and kwargs.get("bootstrap") is None:
        kwargs["bootstrap"] = DEFAULT_BOOTSTRAP[settings["method"]]
    if task == "regression" and settings["method"] in ("sklearn-rf", "sklearn-et"):
        kwargs.pop("criterion", None)
    return kwargs


def verdict_size(requested: int, prepared, kwargs: Mapping[str, Any]) -> tuple[int, int | None]:
    """R and the trees per forest of the verdicts' test (None: the exact method, no trees).

    A forest's test keeps (R + 1) x trees x rows under :data:`VERDICT_WORK`, fewer trees
    first (:func:`varimp_core.studies.verdicts.verdict_size`); the exact method's R is at
    most what its cost model fits in a few seconds (:func:`band_permutations`).  R is
    never below 19.
    """
    rows = max(int(round(prepared.table.total_weight)), 1)
    if kwargs["method"] == "exact":
        most = band_permutations(prepared.table, max_features=kwargs["max_features"],
                                 max_depth=kwargs.get("max_depth"),
                                 criterion=kwargs.get("criterion", "entropy"),
                                 k_semantics=kwargs.get("k_semantics", "id3"))
        return max(MIN_PERMUTATIONS, min(int(requested), int(most))), None
    if kwargs["method"] in ("exact-rf", "exact-et"):
        return max(MIN_PERMUTATIONS, int(requested)), None
    return core_verdict_size(requested, kwargs.get("n_estimators", 100), rows,
                             min_permutations=MIN_PERMUTATIONS)


def verdict_size_note(requested: int, R: int, trees: int | None, n_estimators: int) -> str | None:
    """The sentence that says the verdicts' test was made smaller, or None."""
    if trees is not None and trees < n_estimators:
        return (f"The verdicts compare forests of {trees:,} trees (the observed target's and "
                f"each of the R = {R} permuted ones), not {n_estimators:,}: this data is "
                f"large, (R + 1) \u00d7 trees \u00d7 rows is kept under "
                f"{VERDICT_WORK / 1e6:g} million. The bars keep all {n_estimators:,} trees.")
    if R < requested:
        return (f"R = {R} label permutations, not {requested}: this data is large "
                f"(the exact computations are kept to a few seconds).")
    return None


def compute(settings, data: DataChoice, progress) -> dict:
    """The method's importances, the exact reference of a sampled method, and I(X;Y); on a
    sample, one verdict per variable (after the bars, which are published first)."""
    method, most = settings["method"], limits.max_exact_features()
    load, p = results.width_checked_loader(data, method, progress)
    task = load().task
    criterion = settings.get("criterion", "entropy")
    if task == "regression" and criterion != "squared_error":
        raise ValueError("The target is numeric: its impurity is its variance (squared "
                         "error); entropy and Gini apply to classes.")
    if task != "regression" and criterion == "squared_error":
        raise ValueError("The target has classes: choose entropy or Gini; the variance "
                         "applies to a numeric target.")
    if task == "regression" and method in NO_VARIANCE:
        raise ValueError(f"The {method_label_of(method)} handles classification targets only; "
                         "choose the exact method or a scikit-learn forest for a numeric "
                         "target.")
    kwargs = core_settings(settings, task)
    if method in BINARY_METHODS and not results.has_importances(data, kwargs):
        progress(0, 1, "Estimating the number of nodes\u2026")
        refusal = convergence.binary_refusal(load(), method=method, max_features=kwargs[
            "max_features"], max_depth=kwargs["max_depth"])
        if refusal is not None:
            raise ValueError(refusal)
    progress(0, 1, "Computing the importances\u2026")
    result = results.cached_importances(
        data, kwargs, load,
        (lambda d, t: progress(d, t, jobs.count_message(d, t, "trees"))) if method in SAMPLED
        else None, lambda so_far: progress.publish(
            {"result": so_far, "exact": None, "information": None, "p": p,
             "notes": ["Trees are still being grown: the bars refine as they arrive."],
             "chance": None}))
    notes, exact = [], None
    if method in SAMPLED:
        progress(1, 1, "Computing the exact values\u2026")
        reference, note = convergence.exact_reference(load, kwargs)
        notes += [note] if note else []
        if reference["method"] == "exact" and p > most:
            notes.append(f"No exact values are drawn: the exact method handles at most "
                         f"{most} inputs and this data has {p}.")
        elif reference.get("criterion") == "squared_error" or result.units != (
                "gini" if kwargs.get("criterion") == "gini" else "bits"):
            notes.append(f"No exact values are drawn: this forest measures {result.units} "
                         "while the exact values are impurities of the binned target.")
        else:
            try:
                exact = results.cached_importances(data, reference, load)
            except ValueError as exc:
                notes.append(f"No exact values are drawn: {exc}")
    moments = None
    source = result if method in EXACT_MOMENTS else exact
    if source is not None and source.method in EXACT_MOMENTS and (
            method in EXACT_MOMENTS or convergence_note(result, exact) is None):
        progress(1, 1, "Computing the exact covariance of one tree's importances\u2026")
        try:
            moments = results.cached_moments(data, source, load)
        except ValueError as exc:
            why = str(exc)
            notes.append(f"No exact error bars: {why[:1].lower()}{why[1:]}")
    information = result.information if result.information is not None else (
        exact.information if exact is not None else None)
    if information is None and result.units == "bits":
        information = float(joint_information(load().table))
    # Core objects: JobView serialises them once (the shared ones as references to their
    # parts, pages._framework.parts) and render draws these very objects.
    out = {"result": result, "exact": exact,
           "information": information, "notes": notes, "p": p, "task": task,
           "verdicts": None, "excluded": [c for c, _ in load().excluded],
           "moments": moments}
    if not load().table.exact:   # a sample: one verdict per variable, after the bars
        progress.publish({**out, "notes": notes + ["Testing each variable against chance: "
                                                   "the verdicts follow."]})
        requested = settings.get("n_permutations", 19)
        R, trees = verdict_size(requested, load(), kwargs)
        note = verdict_size_note(requested, R, trees, kwargs.get("n_estimators", 100))
        notes += [note] if note else []
        verdicts = importance_verdicts(
            load(), **kwargs, n_permutations=R, alpha=ALPHA, n_jobs=limits.n_jobs(),
            test_estimators=trees,
            progress=lambda d, t: progress(d, t, f"{d} of {t} permutations"))
        out["verdicts"] = verdicts
        note = depth_power_note(verdicts, kwargs)
        notes += [note] if note else []
    return out


def depth_power_note(verdicts: VerdictResult, kwargs: Mapping[str, Any]) -> str | None:
    """On a sample, fully grown trees and a variable not found relevant: say that a depth
    limit tests the terms the rows can estimate (the deep ones are noise on few rows)."""
    if kwargs.get("max_depth") is not None or len(verdicts.variables) < 3 or \
            all(v == "relevant" for v in verdicts.verdicts):
        return None
    return (f"Fully grown trees split these {verdicts.n_samples:,} rows into cells of a few "
            "rows, where the deep terms of an importance are mostly noise, so the test has "
            "little power for moderate effects. A Max depth of 2 or 3 keeps the first terms "
            "of the decomposition, which the rows can estimate, and tests them instead.")


def method_label_of(method: str) -> str:
    return dict(METHOD_OPTIONS).get(method, method)


def theorem2_text(result: ImportanceResult, information: float | None = None) -> str:
    """The Theorem 2 check line, e.g. ``"sum = 3.3219 bits, I(X;Y) = 3.3219 bits ..."``.

    In variance units the check is the sum against Var(Y) \u2212 E Var(Y|X).
    """
    units = units_label(result)
    info = result.information if information is None else information
    num = lambda x: fmt_number(x, units)  # noqa: E731
    head = f"sum = {num(result.total)} {units}"
    variance = units == "variance of Y"
    if info is None or (units != "bits" and not (variance and result.method == "exact")):
        return head + "; Theorem 2 compares this sum with I(X;Y) in bits, which does not " \
                      "apply to these units."
    gap = result.total - float(info)
    name = "Var(Y) \u2212 E Var(Y|X)" if variance else "I(X;Y)"
    text = f"{head}, {name} = {num(float(info))} {units}"
    depth = result.parameters.get("max_depth")
    if abs(gap) < 5e-5 * (max(abs(float(info)), 1.0) if variance else 1.0):
        return text + " \u2014 equal, as Theorem 2 says for fully grown trees."
    if depth is not None and gap < 0:
        return text + (f" \u2014 the sum is smaller: trees cut at depth {depth} do not use all "
                       f"the information (at K = 1, Proposition 6 keeps only the terms "
                       f"k < {depth} of Eqn 3).")
    if result.method in SAMPLED:
        return text + (f" \u2014 off by {gap:+.4f} bits: a finite forest (and the bootstrap, "
                       "when on) makes the sum differ.")
    return text + f" \u2014 off by {fmt_number(gap, units, sign=True)} {units}."


def verdict_sentences(verdicts: VerdictResult | None, show: str = "above") -> list[str]:
    """What the verdicts are, how they were reached, and which value the bars show."""
    if verdicts is None:
        return []
    proc, n = verdicts.procedure, verdicts.n_samples
    R, level = proc.get("n_permutations"), proc.get("level")
    out = [f"One verdict per variable, from {R} label permutations (the target shuffled, "
           f"the same method regrown each time) and the Westfall\u2013Young step-down maxT "
           f"test at a family-wise error rate of {level:g}."]
    for verdict, what in (("relevant", "Relevant"),
                          ("chance", "Not distinguishable from chance"),
                          ("undecided", f"Cannot be decided from {n:,} rows")):
        names = verdicts.names(verdict)
        if names:
            out.append(f"{what}: {', '.join(names)}.")
    out.append("Bars: the importance above chance (plug-in minus the mean of the variable's "
               "permutation null; an irrelevant variable centres on 0)." if show == "above" else
               "Bars: the plug-in importance, biased upwards on a sample; red dashes: the "
               "chance level, the mean of each variable's permutation null.")
    if verdicts.set_aside:
        out.append(f"The other inputs were tested without {', '.join(verdicts.set_aside)} "
                   "(a leak absorbs the target's impurity and masks them).")
    return out


def exact_note(view: Mapping[str, Any], spread: str = "se", show: str = "above") -> str:
    """One sentence on what the bars, whiskers and diamonds are."""
    result, exact, verdicts = view["result"], view["exact"], view.get("verdicts")
    sentences = [f"Bars: {method_label(result)}."]
    if result.importances_sem is not None:
        sentences.append("Whiskers: one standard error of the mean over trees (per-tree "
                         "SD / \u221aT)" + ("; boxes: the spread of the per-tree values "
                                           "(minimum, quartiles, maximum)." if spread == "trees"
                                           else "."))
    diamonds = exact is not None and not (verdicts is not None and show == "above")
    if diamonds and exact.method in BINARY_METHODS:
        sentences.append(f"Black diamonds: {method_label(exact)}, the value this forest "
                         "converges to as its trees grow in number (same rows, K, depth "
                         "and impurity).")
    elif diamonds:
        sentences.append(f"Black diamonds: the exact infinite-forest value for the same K and "
                         f"depth ({exact.parameters.get('k_semantics')} semantics).")
        if result.method in ("sklearn-rf", "sklearn-et"):
            sentences.append("scikit-learn grows binary trees on the raw values (and "
                             "bootstraps when asked), so its bars need not match the "
                             "multiway diamonds.")
    if result.method in ("eqn3", "exact") and not result.exact:
        sentences.append("The data is a sample: these are the exact values for its "
                         "empirical distribution (plug-in estimates, biased upwards).")
    chance = view.get("chance")
    return " ".join(sentences + list(view.get("notes", []))
                    + (chance.sentences() if chance is not None else [])
                    + verdict_sentences(verdicts, show))


def table_columns(units: str = "bits", *, exact: bool = False, sampled: bool = False,
                  chance: ChanceLevels | None = None, verdicts: bool = False,
                  moments: tuple | None = None) -> list:
    """Column specs (:func:`pages._framework.grid.grid_table`), in ``units`` (4 decimals;
    4 significant digits for a variance), the verdict columns first after the variable on
    a sample."""
    units = units_label(units)
    variance = units == "variance of Y"
    num = number_format("grouped4" if variance else "fixed4")
    cols = [{"name": "Variable", "id": "variable"}]
    if verdicts:
        cols += [{"name": "Verdict", "id": "verdict"},
                 {"name": f"Above chance ({units})", "id": "above_chance", "type": "numeric",
                  "format": num}]
    cols.append({"name": f"{'Plug-in importance' if verdicts else 'Importance'} ({units})",
                 "id": "importance", "type": "numeric", "format": num})
    if sampled:
        cols += [{"name": "Std. error", "id": "sem", "type": "numeric", "format": num},
                 {"name": "Per-tree SD", "id": "std", "type": "numeric", "format": num}]
    if moments is not None:
        T, eps = moments
        cols += [{"name": "Per-tree SD (exact)", "id": "std", "type": "numeric", "format": num},
                 {"name": f"Std. error at T = {T:,}", "id": "sem", "type": "numeric",
                  "format": num},
                 {"name": f"Trees for SE < {eps:g}", "id": "trees_needed", "type": "numeric",
                  "format": number_format("grouped")}]
    cols.append({"name": "Share (normalised)", "id": "normalised", "type": "numeric",
                 "format": number_format("pct2")})
    if exact:
        cols += [{"name": f"Exact ({units})", "id": "exact", "type": "numeric", "format": num},
                 {"name": "Bar \u2212 exact", "id": "difference", "type": "numeric",
                  "format": number_format("signed_grouped4" if variance else "signed4")}]
    if verdicts:
        cols += [{"name": f"Chance level ({units})", "id": "null_mean", "type": "numeric",
                  "format": num},
                 {"name": "Adjusted p", "id": "p_adjusted", "type": "numeric",
                  "format": number_format("fixed4")}]  # why: CSV, hover
    return cols + [{"name": name, "id": cid, "type": "numeric", "format": num}
                   for cid, name in (chance.table_columns() if chance is not None else [])]


def table_rows(result: ImportanceResult, exact: ImportanceResult | None = None,
               chance: ChanceLevels | None = None,
               verdicts: VerdictResult | None = None, moments: tuple | None = None
               ) -> list[dict]:
    """One row per variable, with the exact numbers of the result (not rounded).

    ``moments`` = (ImportanceMoments, T, epsilon) of an exact result adds the exact per-tree
    SD :math:`\\sigma_j`, the standard error :math:`\\sigma_j/\\sqrt T` and the trees
    :math:`\\lfloor\\sigma_j^2/\\varepsilon^2\\rfloor + 1` that bring it under epsilon.
    """
    sem, std = result.importances_sem, result.importances_std
    needed = None
    if moments is not None and sem is None:
        m, T, eps = moments
        sem, std, needed = m.standard_errors(T), np.sqrt(m.variances), m.trees_needed_each(eps)
    rows, extra = [], chance.table_rows() if chance is not None else []
    for i, name in enumerate(result.variables):
        row = {"variable": name, "importance": table_number(result.importances[i]),
               "normalised": table_number(result.normalised[i])}
        if sem is not None:
            row["sem"], row["std"] = table_number(sem[i]), table_number(std[i])
        if needed is not None:
            row["trees_needed"] = int(needed[i])
        if exact is not None:
            row["exact"] = table_number(exact.importances[i])
            row["difference"] = table_number(result.importances[i] - exact.importances[i])
        if verdicts is not None:
            row.update(verdict=verdicts.verdicts[i], reason=verdicts.reasons[i],
                       above_chance=table_number(verdicts.above_chance[i]),
                       null_mean=table_number(verdicts.null_mean[i]),
                       p_adjusted=table_number(verdicts.p_adjusted[i]))
        row.update({k: table_number(v) for k, v in (extra[i] if extra else {}).items()})
        rows.append(row)
    return rows


def csv_text(result: ImportanceResult, exact: ImportanceResult | None = None,
             chance: ChanceLevels | None = None, verdicts: VerdictResult | None = None) -> str:
    """CSV of ``result.to_frame()`` (plus the exact, chance and verdict columns), safe for a
    spreadsheet; a leak column is marked in ``warning``."""
    df = result.to_frame()
    if exact is not None:
        df["exact_importance"] = exact.importances
    if chance is not None:
        df = df.join(chance.to_frame().drop(columns=["variable", "importance"]))
    if verdicts is not None:
        v = verdicts.to_frame().drop(columns=["variable", "importance"])
        df = df.join(v)
        leaks = {w["column"]: w for w in verdicts.warnings}
        df["warning"] = [f"leak: out-of-fold {leak_score_name(w)} {w['score']:.2f} alone"
                         if name in leaks else "" for name, w in
                         ((n, leaks.get(n)) for n in result.variables)]
    return safe_csv(df)


def csv_filename(data: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """``varimp-importances-<data>-<method>-K<k>.csv`` with only safe characters."""
    return common_csv_filename("importances", datasource.canonical_params(data),
                               settings["method"], f"K{settings['max_features']}")


def _core(cls, value):
    """``value`` as a ``cls``: None, the object itself, or rebuilt from a ``to_dict()``."""
    return value if value is None or isinstance(value, cls) else cls.from_dict(value)


def view_from_dict(out: Mapping[str, Any]) -> dict:
    """The page's result with its core objects: those ``compute`` returned (or JobView
    decoded) as they are, a ``to_dict()`` (a result kept before the objects) rebuilt."""
    return {**out, "result": _core(ImportanceResult, out["result"]),
            "moments": _core(ImportanceMoments, out.get("moments")),
            "exact": _core(ImportanceResult, out.get("exact")),
            "chance": _core(ChanceLevels, out.get("chance")),
            "verdicts": _core(VerdictResult, out.get("verdicts"))}


# -- leaks ---------------------------------------------------------------------------------
def leak_score_name(warning: Mapping[str, Any]) -> str:
    """``"accuracy"`` (classes) or ``"R\u00b2"`` (numeric target), from the leak's rule."""
    return "R\u00b2" if "R^2" in str(warning.get("rule", "")) or "R2" in str(
        warning.get("rule", "")) else "accuracy"


def exclude_query(data: DataChoice, column: str, excluded: list[str] | None = None) -> str:
    """The data query with ``column`` excluded too (an upload's ``exclude`` list: the user's,
    else the columns the core excluded itself, so they stay out)."""
    params = dict(data.as_dict)
    before = params.get("exclude")
    before = list(excluded or []) if before is None else list(before)
    params["exclude"] = sorted(set(before) | {column})
    return data_query(params)


def leak_children(verdicts: VerdictResult | None, data: DataChoice | None,
                  settings: Mapping[str, Any], excluded: list[str] | None = None) -> list:
    """A sentence per leak, above the figure, with a link excluding the column (uploads)."""
    if verdicts is None or not verdicts.warnings:
        return []
    out = []
    for w in verdicts.warnings:
        col = w["column"]
        text = (f"{col} alone predicts the target (out-of-fold {leak_score_name(w)} "
                f"{w['score']:.2f}): is it known before the outcome? If not, exclude it. ")
        kids = [html.Span(text)]
        if data is not None and data.is_upload:
            query = "&".join(q for q in (exclude_query(data, col, excluded),
                                         PARAMS.query(settings)) if q)
            kids.append(dcc.Link(f"Exclude {col}", href=f"/importances?{query}",
                                 className="vi-button vi-leak-exclude"))
        out.append(html.P(kids, className="vi-leak", role="alert"))
    return out


def moments_sentences(result: ImportanceResult, moments: ImportanceMoments | None, T: int,
                      eps: float) -> list[str]:
    """The exact bars' whiskers, the trees a precision needs, and a stable ranking's T."""
    if moments is None or result.method not in EXACT_MOMENTS:
        return []
    units = units_label(result)
    need = moments.trees_needed(eps)
    out = [f"Whiskers: where a forest of T = {T:,} trees of this method (bootstrap off) falls "
           "with probability 95%, \u00b11.96 \u03c3\u2c7c/\u221aT, with \u03c3\u2c7c\u00b2 "
           "the exact variance of one tree's importance of the variable.",
           f"{need:,} trees bring every standard error under \u03b5 = {eps:g} {units} (the "
           "table gives each variable's)."]
    if len(moments.variables) >= 2:
        try:
            out.append(f"The ranking is right with probability at least 95% from "
                       f"T = {moments.stable_ranking_trees(0.95):,} trees (see How many trees "
                       "do I need? and the Stability page).")
        except ValueError:
            pass
    return out


def expected_curve(moments: ImportanceMoments, curve=None, stable: int | None = None):
    """The exact expected-error law over the sampled curve's T (or to 10x the stable T)."""
    top = int(curve["n_trees"].max()) if curve is not None and len(curve) else \
        max(1000, 10 * (stable or 1))
    return expected_error_curve(moments, min(top, 10 ** 9), points=200)


def render_view(view: Mapping[str, Any], spread: str = "se", show: str = "above",
                T: int | None = None, eps: float | None = None,
                order: str = "columns") -> dict:
    """Figures, texts and table of a computed view.

    Returns
    -------
    out : dict
        ``figure``, ``theorem2_figure``, ``convergence`` (how many trees),
        ``convergence_note`` (why no curve is drawn, None when one is), ``theorem2`` (text),
        ``note`` (text),
        ``columns`` and ``rows`` of the table.
    """
    result, exact, chance = view["result"], view["exact"], view.get("chance")
    verdicts = view.get("verdicts")
    info = view.get("information")
    moments = view.get("moments")
    T, eps = T or DEFAULT_T, eps or DEFAULT_EPS
    shown = result
    if result.information is None and info is not None:
        shown = ImportanceResult(**{**result.__dict__, "information": info})
    own = moments if result.method in EXACT_MOMENTS else None
    figure = make_importance_figure(result, exact, spread=spread, chance=chance,
                                    verdicts=verdicts, show=show, moments=own, n_trees=T,
                                    order=order)
    why = convergence_note(result, exact)
    curve = None if why else convergence_curve(result, exact, points=400)
    expected, stable = None, None
    if moments is not None:
        try:
            stable = moments.stable_ranking_trees(0.95) if len(moments.variables) > 1 else None
        except ValueError:
            stable = None
        expected = expected_curve(moments, curve, stable)
    # one sentence in place of the figure only when it would be empty: an exact method
    # without its exact moments (with them, the figure draws the exact expected error)
    hidden = None
    if why and result.per_tree is None and expected is None:
        hidden = (f"These are the infinite forest's values ({method_label(result)}): there "
                  "are no trees to count. Choose a sampled method, with Bootstrap off, to see "
                  "how many trees come close to them.")
    figure.update_layout(height=None)  # the page sizes it (taller in presentation mode)
    note = exact_note(view, spread, show)
    extra = moments_sentences(result, own, T, eps)
    return {
        "figure": figure,
        "theorem2_figure": make_theorem2_figure(shown),
        "convergence": make_convergence_figure(
            curve, label=method_label(result), units=result.units,
            note=why, expected=expected, stable_trees=stable),
        "convergence_note": hidden,
        "theorem2": theorem2_text(result, info),
        "note": " ".join([note, *extra]) if extra else note,
        "columns": table_columns(result.units, exact=exact is not None,
                                 sampled=result.importances_sem is not None, chance=chance,
                                 verdicts=verdicts is not None,
                                 moments=(T, eps) if own is not None else None),
        "rows": table_rows(result, exact, chance, verdicts,
                           moments=(own, T, eps) if own is not None else None),
    }


def render(out, settings, data):
    view = view_from_dict(out)
    r = render_view(view, settings.get("spread", "se"), settings.get("show", "above"),
                    settings.get("n_trees"), settings.get("precision"),
                    settings.get("order", "columns"))
    leaks = leak_children(view["verdicts"], data, settings, out.get("excluded"))
    why = r["convergence_note"]   # one sentence in place of an empty 340 px figure
    return (r["figure"], r["theorem2"], r["theorem2_figure"], *grid_table(r["columns"], r["rows"]),
            r["note"],
            r["convergence"], leaks, "vi-leaks" if leaks else "vi-leaks vi-hidden",
            "vi-hidden" if why else "", why or "")


class ImportancesView(JobView):
    """A JobView whose result is not keyed by what only changes the drawing (whiskers, shown
    value)."""

    def key(self, data, settings, extra):
        return super().key(data, {k: v for k, v in settings.items() if k not in DRAWING}, extra)


VIEW = ImportancesView(
    PREFIX, PARAMS, compute=compute, render=render, data_store="imp-data",
    outputs=[("imp-graph", "figure"), ("imp-theorem2", "children"),
             ("imp-theorem2-graph", "figure"), ("imp-table", "columnDefs"),
             ("imp-table", "rowData"), ("imp-note", "children"),
             ("imp-convergence-graph", "figure"), ("imp-leaks", "children"),
             ("imp-leaks", "className"), ("imp-convergence-body", "className"),
             ("imp-convergence-why", "children")],
    query_store="imp-query",
    url=lambda s, data: "&".join(q for q in (data.query(), PARAMS.query(s)) if q),
    disable=["imp-fieldset", "imp-download-button"], what="The figure")
VIEW.register()
state.register_url_sync(PREFIX)


def initial_values(query, data: DataChoice, ctx: Context) -> tuple[dict, list[str]]:
    """Control values of a fresh page: the link's (with notes), the method's and the
    target's defaults (the variance for a numeric target)."""
    values, notes = PARAMS.from_url(query, ctx)
    if "method" not in query:
        values["method"] = default_method(ctx.p)
    if "order" not in query:
        values["order"] = default_order(data)
    if values["bootstrap"] is None:
        values["bootstrap"] = DEFAULT_BOOTSTRAP[values["method"]]
    return ui.allowed_criterion(values, ctx), notes


def layout(vi_data=None, **query):
    data, notes = DataChoice.from_page(query, vi_data)
    ctx = context_for(data)
    values, more = initial_values(query, data, ctx)
    f = dict(zip(PARAMS.names, PARAMS.fields(values, ctx)))
    settings = html.Fieldset(id="imp-fieldset", className="vi-fieldset", children=[
        ui.card("Method", f["method"], f["order"]),
        ui.card("Trees", f["max_features"], f["max_depth"], f["criterion"], f["k_semantics"],
                f["n_trees"], f["precision"]),
        ui.card("Sampling", f["n_estimators"], f["bootstrap"], f["random_state"], f["spread"],
                id="imp-sampling-card", className=sampling_class(values["method"])),
        ui.card("On a sample", f["show"], f["n_permutations"],
                className="" if data.is_sample else "vi-hidden"),
    ])
    return page_frame(
        PREFIX, title="Importances", notes=notes + more, data_label=data.label(),
        lead=[
            "Mean decrease of impurity (MDI) of each variable, unnormalised and in bits: the "
            "sum over the nodes that split on it of p(t)\u00b7\u0394i, averaged over trees. "
            "scikit-learn's own ", html.Code("feature_importances_"), " is normalised (each "
            "tree's importances are divided by their sum, so they add up to 1); the Share "
            "column of the table gives that view. In bits, the importances of fully grown "
            "totally randomized trees add up to I(X;Y) (Theorem 2). On a sample (an upload, "
            "a drawn problem) every plug-in value is biased upwards: each variable gets one "
            "verdict, relevant, chance or undecided, from a label-permutation test."],
        stores=[state.query_store(PREFIX, data.query()),
                dcc.Store(id="imp-data", data=data.to_store()),
                *VIEW.stores(), dcc.Download(id="imp-download")],
        controls=settings, status=VIEW.status(),
        content=[
            ui.card("Importances",
                    html.Div(id="imp-leaks", className="vi-leaks vi-hidden"),
                    dcc.Graph(id="imp-graph", config=figure_config("importances"),
                              className="vi-figure", style={"height": "440px"}),
                    html.P(id="imp-note", className="vi-help")),
            ui.card("How many trees do I need?",
                    html.P(id="imp-convergence-why", className="vi-help"),
                    html.Div(id="imp-convergence-body", children=[
                        dcc.Graph(id="imp-convergence-graph",
                                  config=figure_config("convergence"), style={"height": "340px"}),
                        html.P(convergence.CURVE_CAPTION, className="vi-help")])),
            ui.card("Theorem 2",
                    html.P(id="imp-theorem2", style={"margin": "0 0 0.5rem", "fontWeight": 600}),
                    dcc.Graph(id="imp-theorem2-graph", config={"displayModeBar": False},
                              style={"height": "170px"})),
            ui.card("Table",
                    grid("imp-table", page_size=20),
                    html.P("The CSV has the same rows, with the importance split by "
                           "degree k (by-degree columns), and on a sample each verdict with "
                           "its adjusted p-value and a leak warning.", className="vi-help"),
                    download_button(PREFIX), download_note(PREFIX)),
        ])


def sampling_class(method: str) -> str:
    """The Sampling card's class: hidden for an exact method, whose fields all are."""
    return "" if _sampled({"method": method}) else "vi-hidden"


@callback([Output(f"{PARAMS.id(n)}-field", "className") for n in PARAMS.names],
          Output(PARAMS.id("bootstrap"), "value"), Output("imp-sampling-card", "className"),
          Input(PARAMS.id("method"), "value"),
          State(PARAMS.id("bootstrap"), "value"), State("imp-data", "data"),
          prevent_initial_call=True)
def show_method_fields(method, bootstrap, store):
    default = ["on"] if DEFAULT_BOOTSTRAP.get(method) else []
    try:
        ctx = context_for(DataChoice.from_store(store))
    except ValueError:
        ctx = Context()
    return [*PARAMS.field_classes({"method": method}, ctx),  # one flat list: Dash 4 flattens
            no_update if default == (bootstrap or []) else default, sampling_class(method)]


def csv_of(out, settings, data) -> tuple[str, str]:
    """The CSV of a cached result (``JobView.register_downloads``)."""
    view = view_from_dict(out)
    return (csv_text(view["result"], view["exact"], view["chance"], view["verdicts"]),
            csv_filename(data.as_dict, settings))


VIEW.register_downloads({"imp-download-button": csv_of})
