"""What the study pages (Distributions, Selection) share: their data, forests and results.

Both pages run long studies (Monte Carlo replicates, permutation nulls, RS/SRS
trees) on a data set the page itself chooses from a dropdown: presets from the
thesis, every built-in problem, and the session's own table
(:func:`problem_options`, :func:`choose_data`).  A study's core result is
cached once per settings (:func:`cached_study`), so a control that only
changes the drawing (histograms or violins, which method's selection) never
grows a forest again; a study that Cancel stopped is drawn but not kept.
Downloads serve a :class:`pages._framework.view.JobView`'s cache only
(:meth:`JobView.register_downloads`); a page declares its data once
(:func:`stores`, :func:`problem_field` of the declared :data:`PROBLEM` and
:func:`register_data`, which also keeps the header and the URL); figures and
button rows look the same on both pages (:func:`graph`, :func:`buttons`).
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Sequence

from dash import Input, Output, State, callback, dcc, html, no_update

from varimp_core.problems.registry import get_problem
from varimp_core.studies.replicates import (DEFAULT_TREE_ROWS, LOCAL_TREE_WORK,
                                           scaled_replicates)

from pages._server import cache, jobs

from pages._framework import datasource
from pages._framework.common import placeholder_figure
from pages._framework.controls import problem_choices
from pages._framework.datachoice import DataChoice
from pages._framework.page_frame import figure_config, register_data_label
from pages._framework.params import Context, Param, ParamSet, sentence
from pages._framework.view import context_for

#: The forests a study grows (labels as the pages show them).
METHOD_OPTIONS = [("forest", "ours: multiway totally randomized trees"),
                  ("sklearn-et", "scikit-learn extra-trees"),
                  ("sklearn-rf", "scikit-learn random forest")]
PRESETS = (
    ("xor:irrelevant=2", "XOR, 2 relevant + 2 irrelevant bits (Sutera 2013)"),
    ("xor:irrelevant=2,noise=0.1", "XOR + 2 irrelevant, 10 % output noise"),
    ("sym:irrelevant=2", "SYM, 2 relevant + 2 irrelevant bits"),
    ("led", "LED \u2014 7 segments (Louppe et al. 2013)"),
    ("led:irrelevant=3", "LED + 3 irrelevant bits"),
)


# -- what a study page says about its defaults and its partial results ----------------------
def scaled_sentence(n_replicates: int, what: str, n_rows: int | None, n_estimators: int,
                    control: str = "R") -> str:
    """What a study page says under its controls about R (:func:`scaled_replicates`).

    Examples
    --------
    >>> print(scaled_sentence(20, "replicates", 10_000, 50))
    Scaled to your data: 20 replicates of 10,000 rows and 50 trees by default (R × T × N ≤ 10,000,000); add more with R above. The figures fill in as they arrive.
    """
    if not n_rows:
        return f"The figures fill in as the {what} arrive."
    return (f"Scaled to your data: {n_replicates:,} {what} of {n_rows:,} rows and "
            f"{n_estimators:,} trees by default (R × T × N ≤ "
            f"{DEFAULT_TREE_ROWS:,}); add more with {control} above. The figures fill in as "
            "they arrive.")


def scaled_trees(default: int, n_rows: int | None, n_features: int | None) -> tuple[int, str]:
    r"""The default number of trees T of a local-importance forest on ``n_rows`` x ``n_features``
    data, and the sentence that says so ("" when nothing was scaled).

    :math:`T = \min(T_0, \max(20, \lfloor B / (N p) \rfloor))` with
    :math:`B` = :data:`LOCAL_TREE_WORK` (:func:`~varimp_core.studies.replicates.scaled_replicates`): 10,000 rows and 60
    inputs get 20 trees, 6,366 rows and 8 inputs keep 100.

    Examples
    --------
    >>> scaled_trees(100, 10_000, 60)[0], scaled_trees(100, 6_366, 8)
    (20, (100, ''))
    """
    if not n_rows or not n_features:
        return int(default), ""
    trees = scaled_replicates(default, n_rows * n_features, 1, budget=LOCAL_TREE_WORK, low=20)
    if trees == default:
        return trees, ""
    return trees, (f"Scaled to your data: {trees:,} trees by default for {n_rows:,} rows and "
                   f"{n_features:,} inputs (trees \u00d7 rows \u00d7 inputs \u2264 "
                   f"{LOCAL_TREE_WORK:,}); add more with Trees above.")


def partial_note(done: int, total: int, what: str, *, running: bool) -> str:
    """The note over a partial result: drawn while the run goes on, or cancelled.

    Examples
    --------
    >>> partial_note(4, 20, "replicates", running=True)
    'Partial result: 4 of 20 replicates so far; more are coming.'
    >>> partial_note(4, 20, "replicates", running=False)
    'Partial result: cancelled after 4 of 20 replicates.'
    """
    if running:
        return f"Partial result: {done:,} of {total:,} {what} so far; more are coming."
    return f"Partial result: cancelled after {done:,} of {total:,} {what}."


def problem_options(base: DataChoice) -> list[dict]:
    """Presets from the thesis, every built-in problem, the current spec and the upload."""
    opts = [{"label": label, "value": spec} for spec, label in PRESETS]
    seen = {o["value"] for o in opts}
    opts += [o for o in problem_choices() if o["value"] not in seen]
    if base.is_upload:
        opts.insert(0, {"label": f"Uploaded: {base['file'] or 'uploaded table'} \u2192 "
                                 f"{base['target'] or 'last column'}", "value": "upload"})
    elif base["problem"] not in {o["value"] for o in opts}:
        opts.insert(0, {"label": base["problem"], "value": base["problem"]})
    return opts


def choose_data(choice: str | None, base: DataChoice) -> DataChoice:
    """The data of the problem dropdown's value (``"upload"`` keeps the session's table).

    Raises
    ------
    ValueError
        For an unknown problem, or "upload" without an uploaded table.
    """
    if choice == "upload":
        if not base.is_upload:
            raise ValueError("No uploaded table in this session: choose a problem, or upload a "
                             "CSV file on the Data page.")
        return base
    if not choice:
        raise ValueError("Choose a problem.")
    spec = get_problem(str(choice)).spec
    if not base.is_upload and base["problem"] == spec:
        return base  # keeps the session's own sample (sampling, n, seed)
    return DataChoice.from_params({"source": "problem", "problem": spec,
                                   "bins": base["bins"] or 5})


def generator(data: DataChoice):
    """The built-in problem of ``data`` when it has a generator (fresh samples), else None."""
    if data.is_upload:
        return None
    problem = get_problem(data["problem"])
    return problem if problem.relevant is not None else None


def is_exact(data: DataChoice) -> bool:
    """The data is an exact distribution: a study draws N rows of it first."""
    return not data.is_upload and data["sampling"] == "exact"


def sample_of(data: DataChoice, n: int | None, seed: int):
    """The core's ``PreparedData``: ``data``, or N rows drawn from its exact distribution."""
    params = data.as_dict
    if is_exact(data) and n is not None:
        params = dict(params, sampling="sample", n=n, seed=seed)
    return datasource.load_prepared(params)


def graph(graph_id: str, name: str) -> dcc.Graph:
    """A study's figure (a placeholder until its first result), PNG export ``varimp-{name}``."""
    return dcc.Graph(id=graph_id, figure=placeholder_figure(), config=figure_config(name),
                     className="vi-figure")


def buttons(note: str, *pairs: tuple[str, str]) -> html.Div:
    """A row of secondary buttons ``(label, id)`` and the line ``note`` for their sentences."""
    return html.Div([html.Div([html.Button(label, id=i, n_clicks=0,
                                           className="vi-button vi-button-secondary")
                               for label, i in pairs],
                              style={"marginTop": "0.75rem", "display": "flex", "gap": "0.6rem",
                                     "flexWrap": "wrap"}),
                     html.P(id=note, className="vi-field-error")])


def study_key(namespace: str, parts: Any) -> str:
    """Cache key of the study of ``parts`` (the data and settings it depends on)."""
    return cache.key_for(namespace, parts)


def cached_study(namespace: str, parts: Any, run: Callable[[], dict]) -> dict:
    """``run()``'s JSON result, cached under ``parts``; one with ``partial`` set is not kept."""
    key = study_key(namespace, parts)
    out = cache.get_json(key)
    if out is None:
        out = json.loads(json.dumps(run()))
        if not out.get("partial"):
            cache.put_json(key, out)
    return out


def scale_replicates(values: dict, name: str, query, data: DataChoice, n: int | None,
                     what: str) -> str:
    """Scale the default ``values[name]`` (URL key ``R``) to the data unless the link sets it;
    the page's sentence about it (:func:`scaled_replicates`, :func:`scaled_sentence`)."""
    columns = datasource.upload_columns(data["upload"]) if n is None and data.is_upload else None
    rows = n or (columns or {}).get("rows")
    if "R" in query:  # the link's own R: nothing was scaled
        return scaled_sentence(values[name], what, None, values["n_estimators"])
    values[name] = scaled_replicates(values[name], rows, values["n_estimators"])
    return scaled_sentence(values[name], what, rows, values["n_estimators"])


def scale_trees(trees: int, query, data: DataChoice) -> tuple[int, str]:
    """T scaled to an upload unless the link sets it (:func:`scaled_trees`), and the sentence."""
    rows = (datasource.upload_columns(data["upload"]) or {}).get("rows") if data.is_upload else None
    return scaled_trees(trees, None if "trees" in query else rows, data.n_features())


def run_options(progress, total: int, what: str) -> dict:
    """Chunking, progress and Cancel of a study of ``total`` replicates or permutations:
    about 50 progress steps, each saying "12 of 200 <what>", a cooperative stop, and
    partial results built only as often as the job draws them
    (:data:`pages._server.jobs.PUBLISH_EVERY`: on Madelon's 500 variables each one cost
    fitted laws and histograms, after every one of the 50 chunks)."""
    return dict(chunk_size=max(1, math.ceil(total / 50)),
                progress=lambda d, t: progress(d, t, jobs.count_message(d, t, what)),
                should_stop=progress.should_stop, partial_every=jobs.PUBLISH_EVERY)


def register_url(query_store: str, data_store: str, *params) -> None:
    """Write the page's URL (data, then each :class:`ParamSet`) while every value is valid.

    The callback runs at the page's start too, so the address bar shows the
    canonical link of what the page computes.
    """
    inputs = [i for p in params for i in p.inputs()]

    def url(*args):
        store, values = args[-1], list(args[:-1])
        try:
            data = DataChoice.from_store(store)
        except ValueError:
            return no_update
        parts = [data.query()]
        for p in params:
            settings, errors = p.validate(dict(zip(p.names, values[:len(p.names)])),
                                          context_for(data, store))
            if errors:
                return no_update
            parts.append(p.query(settings))
            values = values[len(p.names):]
        return "&".join(q for q in parts if q)

    callback(Output(query_store, "data"), *inputs, Input(data_store, "data"))(url)


#: The problem a study page runs on, its own dropdown (``"upload"``: the session's table).
PROBLEM = Param("problem", "Problem", "choice", None, control="dropdown", what="problem",
                choices=lambda c: problem_options(c.extra["data"]),
                help="Presets from the papers, every built-in problem, or the session's data "
                     "(the Data page sets it).")


def problem_field(picker: str, data: DataChoice) -> html.Div:
    """The field of :data:`PROBLEM` (id ``{picker}-problem``, sentences in its error slot)."""
    value = "upload" if data.is_upload else data["problem"]
    return ParamSet(picker, [PROBLEM]).field("problem", value, Context(extra={"data": data}))


def stores(prefix: str, data: DataChoice) -> list:
    """The page's URL (``{prefix}-query``), the session's data (``{prefix}-base``) and the
    data the views run on (``{prefix}-data``, what the problem dropdown chose)."""
    return [dcc.Store(id=f"{prefix}-query"), dcc.Store(id=f"{prefix}-base", data=data.to_store()),
            dcc.Store(id=f"{prefix}-data", data=data.to_store())]


def register_data(prefix: str, picker: str, *params, follow: Callable | None = None,
                  outputs: Sequence = (), inputs: Sequence = ()) -> Callable:
    """Wire a study page's data: the dropdown ``{picker}-problem`` writes ``{prefix}-data``
    (a sentence under it when the choice cannot be used; the views keep their data), the
    header names that data, and the URL holds it with ``params`` (:func:`register_url`).

    ``follow(data, *inputs) -> values of outputs``: the page's controls that depend on the
    data.  Returns the callback's function, ``(problem, base, *inputs) -> (store, sentence,
    *outputs)``, which tests call as the browser would.
    """
    def choose(problem, base, *more):
        try:
            data = choose_data(problem, DataChoice.from_store(base))
        except ValueError as exc:
            return (no_update, sentence(str(exc)) + " The page still shows the previous data.",
                    *[no_update] * len(outputs))
        return (data.to_store(), "", *(follow(data, *more) if follow else ()))

    callback(Output(f"{prefix}-data", "data"), Output(f"{picker}-problem-error", "children"),
             *outputs, Input(f"{picker}-problem", "value"), State(f"{prefix}-base", "data"),
             *inputs, prevent_initial_call=True)(choose)
    register_url(f"{prefix}-query", f"{prefix}-data", *params)
    register_data_label(prefix)
    return choose
