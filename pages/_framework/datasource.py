"""The data choice shared by every page: URL parameters, loading, summary, preview.

A data choice is a small dict of parameters (:data:`DATA_PARAMS`), either a
built-in problem (spec, exact or sampled, seed) or an uploaded table (its
cache key, target, column kinds).  It travels in the URL and in the
``vi-data`` session store; every page turns it into the core's
``PreparedData`` with :func:`load_prepared`.

These functions are plain Python (no app needed) and call the core for every
number; the Data page only wires them to components.
"""

from __future__ import annotations

import functools
import math
import os
from typing import Any, Mapping
from urllib.parse import parse_qs

from varimp_core.data.prepare import (DataError, column_facts, decode_upload,
                                      default_roles_by_target, input_names, prepare_problem,
                                      prepare_table, read_csv_bytes, target_task)
from varimp_core.data.columns import DATE_CHOICES, MISSING_CHOICES, number_columns
from varimp_core.data.leaks import find_leaks
from varimp_core.data.summary import column_table, data_label, describe, preview, rank_inputs
from pages._server.retention import expired_text
from varimp_core.problems.registry import get_problem
from varimp_core.studies.convergence import binary_size as core_binary_size

from pages._server import cache
from pages._server.hygiene import client_id
from pages._server.job_signals import in_job
from pages._server.limits import MAX_NAME_LENGTH, max_cells, max_columns, max_upload_bytes, value
from pages._framework.params import Context, Param, ParamSet

DEFAULT_PROBLEM = "led"
PREVIEW_ROWS = 20
PREVIEW_COLUMNS = 30
MAX_SAMPLES = 1_000_000
MAX_BINS = 50


def max_request_bytes() -> int:
    """Largest HTTP request body: the upload as base64 (4/3) plus 1 MiB for the rest."""
    return 4 * math.ceil(max_upload_bytes() / 3) + (1 << 20)


@functools.lru_cache(maxsize=256)
def problem_of(spec: str):
    """:func:`varimp_core.problems.registry.get_problem`, consulted once per spec and
    process: a request's parse, canonical form, p and task all read the same frozen
    ``Problem`` (an invalid spec raises each time, as the registry does)."""
    return get_problem(spec)


#: A built-in problem's exact distribution of at most this many inputs and rows is small
#: enough to compute in the request (:class:`pages._framework.view.JobView`'s ``quick``).
#: The lattice's subsets double with each input: every K of Masking (one propagation for
#: all K) took 0.017 s on LED (7 inputs), 0.34 s on LED + 4 irrelevant bits (11 inputs,
#: Theorem 5's demo) and 0.39-0.42 s on XOR + 9 bits (11 inputs, 2,048 rows), against
#: 0.86 s at 12 inputs; the exact local MDI of every row costs about as much (2026-11-29,
#: idle 2-core machine).  A job's start and first poll cost 1-2.5 s on a cold server.
QUICK_INPUTS = 11
QUICK_ROWS = 4096


def quick_exact(spec: str, extra_inputs: int = 0) -> bool:
    """Whether built-in problem ``spec``'s exact distribution, with ``extra_inputs`` more
    inputs (Masking's irrelevant bits and copy), is small enough to compute in the request
    (at most :data:`QUICK_INPUTS` inputs and :data:`QUICK_ROWS` rows, times 2 per added
    binary input).  False for an upload, a problem without an exact table, an invalid spec."""
    try:
        problem = problem_of(str(spec))
    except (ValueError, KeyError, TypeError):
        return False
    if not problem.has_exact or problem.exact_rows is None:
        return False
    return (len(problem.variables) + extra_inputs <= QUICK_INPUTS
            and problem.exact_rows * 2 ** extra_inputs <= QUICK_ROWS)


def _spec(text: str) -> str:
    return problem_of(str(text)).spec


def _upload_key(text: str) -> str:
    t = str(text).strip().lower()
    if len(t) != 64 or any(c not in "0123456789abcdef" for c in t):
        raise ValueError(f"the upload key must be 64 hex digits, got {text!r}")
    return t


#: The data choice, declared once: the Data page's controls (ids ``data-<key>``), the
#: URL keys every page reads, and the validation of both.  The problem, the upload and its
#: columns are given by spec, key and name; their controls are the Data page's own.
def _from_problem(settings: Mapping[str, Any]) -> bool:
    return settings.get("source") != "upload"


def _from_upload(settings: Mapping[str, Any]) -> bool:
    return settings.get("source") == "upload"


DATA_PARAMS = ParamSet("data", [
    Param("source", "Source", "choice", "problem", what="data source",
          choices=[("problem", "Built-in problem"), ("upload", "Upload CSV")]),
    Param("problem", "Problem", "text", DEFAULT_PROBLEM, check=_spec, what="problem",
          applies=_from_problem),
    Param("sampling", "Distribution", "choice", "exact", what="sampling",
          choices=[("exact", "Exact distribution"), ("sample", "Sample")], applies=_from_problem),
    Param("n", "Sample size N", default=None, low=1, high=MAX_SAMPLES, blank="default",
          what="the sample size N", applies=_from_problem),
    Param("seed", "Seed", default=0, low=0, high=2**32 - 1, what="the seed",
          help="The same seed gives the same sample.", applies=_from_problem),
    Param("bins", "Bins per numeric variable", default=5, low=2, high=MAX_BINS,
          what="the number of bins", help="Quantile bins; equal quantiles are merged."),
    Param("upload", "Uploaded table", "text", None, check=_upload_key, what="uploaded table"),
    Param("file", "File name", "text", None, what="file name"),
    Param("target", "Target", "text", None, what="target", control="dropdown", blank="last column",
          choices=lambda c: c.extra.get("columns", []), applies=_from_upload),
    Param("task", "Task", "choice", "auto", what="task",
          choices=[("auto", "Auto"), ("classification", "Classes"),
                   ("regression", "Numeric")], applies=_from_upload),
    Param("numeric", "Numeric inputs", "list", None, what="numeric columns",
          choices=lambda c: c.extra.get("number_columns", []),
          help="Checked columns are binned into quantile bins; the others are discrete.",
          applies=_from_upload),
    Param("exclude", "Excluded columns", "list", None, what="excluded columns",
          choices=lambda c: c.extra.get("inputs", []), applies=_from_upload,
          help="Identifier-like, name-like (over 50 text values, under 5 rows each) and "
               "constant columns are excluded at first; the table below says why."),
    Param("missing", "Missing values", "choice", "category", what="missing values",
          choices=list(zip(MISSING_CHOICES, ("A level of their own", "Drop incomplete rows",
                                             "Refuse"))), applies=_from_upload),
    Param("dates", "Date columns", "choice", "expand", what="date columns",
          choices=list(zip(DATE_CHOICES, ("Year, month, weekday", "Exclude"))),
          applies=_from_upload),
])
_KEYS = tuple(DATA_PARAMS.names)

_PROBLEM_KEYS = ("source", "problem", "sampling", "n", "seed", "bins")
_UPLOAD_KEYS = ("source", "upload", "file", "target", "task", "numeric", "exclude", "missing",
                "dates", "bins")


def parse_data_query(query: Mapping[str, Any]) -> tuple[dict, list[str]]:
    """Validated data parameters from a URL query (see :func:`state.parse_query`)."""
    values, notes = DATA_PARAMS.from_url(query, Context())
    if values["source"] == "upload" and values["upload"] is None:
        notes.append("The link asks for an uploaded table but names none; showing the "
                     "default problem instead.")
        values["source"] = "problem"
    return canonical_params(values), notes


def canonical_params(values: Mapping[str, Any]) -> dict:
    """Only the parameters that matter for the chosen source, in a fixed order.

    Two choices that load the same data give the same dict, hence the same
    cache keys and the same URL.
    """
    defaults = DATA_PARAMS.defaults()
    v = {**defaults, **{k: values.get(k) for k in defaults if values.get(k) is not None}}
    if v["source"] == "upload":
        out = {k: v[k] for k in _UPLOAD_KEYS}
        if isinstance(out["target"], str) and not out["target"].strip():
            out["target"] = None  # blank, as a link reads it: the last column (upload
            # headers are stripped, and pandas names a blank one "Unnamed: i")
        for key in ("numeric", "exclude"):
            if out[key] is not None:
                out[key] = sorted(set(out[key]) - {out["target"]})
        return out
    out = {k: v[k] for k in _PROBLEM_KEYS}
    try:
        problem = problem_of(out["problem"])
    except ValueError:
        problem = None
    if problem is not None:
        out["problem"] = problem.spec
        if not problem.has_exact:
            out["sampling"] = "sample"
        if out["sampling"] == "sample" and "samples" in problem.options:
            out["n"] = None   # the spec carries its own sample size
    if out["sampling"] == "exact":
        out["n"] = None
        out["seed"] = defaults["seed"]
    return out


def data_query(params: Mapping[str, Any]) -> str:
    """The query string of a data choice (no leading ``?``)."""
    p = canonical_params(params)
    if p["source"] == "problem":
        p = {k: val for k, val in p.items() if k != "source"}
        if p["sampling"] == "exact":
            p = {k: val for k, val in p.items() if k not in ("n", "seed")}
    return DATA_PARAMS.query(p)


# -- loading -------------------------------------------------------------------
def load_prepared(params: Mapping[str, Any]):
    """The core's ``PreparedData`` for a data choice.

    Raises
    ------
    DataError
        With a sentence for the page: unknown problem, table no longer on the
        server, bad target, too many cells ...
    """
    p = canonical_params(params)
    if p["source"] == "upload":
        df = cache.get_table(p["upload"] or "")
        if df is None:
            raise DataError(expired_text(value("upload_ttl")))
        target = p["target"] if p["target"] is not None else str(df.columns[-1])
        kinds = None
        if p["numeric"] is not None:
            numeric = set(p["numeric"])
            kinds = {str(c): ("numeric" if str(c) in numeric else "discrete")
                     for c in df.columns if str(c) != target}
        task = None if p["task"] == "auto" else p["task"]
        # exclude None: the core's choice (identifier-like columns); a list: the user's.
        return prepare_table(df, target, bins=p["bins"], kinds=kinds, task=task,
                             source=f"upload:{p['file'] or 'table.csv'}", max_cells=max_cells(),
                             missing=p["missing"], dates=p["dates"], exclude=p["exclude"] or (),
                             identifiers="exclude" if p["exclude"] is None else "keep")
    try:
        problem = problem_of(p["problem"])
    except ValueError as exc:
        raise DataError(str(exc)) from None
    n = None
    if p["sampling"] == "sample":
        n = p["n"] if p["n"] is not None else problem.default_samples
        cells, most = n * (len(problem.variables) + 1), value("sample_cells")
        if cells > most:  # the core draws any size; this server draws at most ``most`` cells
            raise DataError(f"A sample of {n:,} rows of '{problem.spec}' would have {cells:,} "
                            f"cells, more than this server's limit of {most:,}; draw fewer rows.")
    return prepare_problem(problem, n_samples=n, random_state=p["seed"], bins=p["bins"])


def _preview(prepared, params: Mapping[str, Any]) -> dict:
    """First rows for display, with the caption that says which rows they are."""
    raw = cache.get_table(params["upload"]) if params.get("source") == "upload" else None
    return preview(prepared, raw=raw, rows=PREVIEW_ROWS, columns=PREVIEW_COLUMNS,
                   file=params.get("file"), seed=params.get("seed", 0))


def data_view(params: Mapping[str, Any], compute: bool = True) -> dict | None:
    """Summary, preview and notes of a data choice, cached server-side.

    ``compute=False`` reads the cache only: None on a miss (a web request's way, as
    sampling a large problem takes seconds).

    Returns
    -------
    view : dict
        ``summary``: ``p``, ``N`` (None for an exact distribution), ``classes``
        (None for regression), ``H_Y`` (bits), ``exact``, ``task``,
        ``distinct_rows``, ``target``, ``kinds`` (counts of discrete and numeric
        inputs), ``binned``, ``description``, ``label``; ``preview``:
        ``columns``, ``rows``, ``caption``, ``target``; ``notes``: list of str;
        ``variables``: the inputs' names; ``ranked``: the inputs from most to least
        informative alone (:func:`rank_inputs`); ``leaks``: :func:`find_leaks`'s flags;
        ``columns``: the column list (an upload's, or a problem's with excluded columns).

    Raises
    ------
    DataError
        As :func:`load_prepared`.
    """
    p = canonical_params(params)
    if p["source"] == "upload" and not cache.has_table(p["upload"] or ""):
        raise DataError(expired_text(value("upload_ttl")))  # its cached view may outlive it
    key = cache.key_for("data-view", p)
    if not compute:
        view = cache.get_json(key)
        if view is not None and "refused" in view:
            raise DataError(view["refused"])
        return view

    def load() -> dict:
        try:
            prepared = load_prepared(p)
        except DataError as exc:
            if p["source"] != "problem":  # an upload may come back: never keep its refusal
                raise
            # a problem's refusal is kept: a link looping on it costs one sampling, not each
            return {"refused": str(exc)}
        description = ""
        if p["source"] == "problem":
            description = problem_of(p["problem"]).description
        summary = {**describe(prepared), "description": description,
                   "label": data_label(prepared, (p.get("file") or "")
                                       if p["source"] == "upload" else None)}
        if p["source"] == "upload":
            columns = upload_columns(p["upload"])["columns"]
        elif prepared.excluded:  # a problem with constant columns (digits): which, and why
            problem = problem_of(p["problem"])
            columns = [*problem.variables, problem.target]
        else:
            columns = []
        # The leak scan and the ranking run here, in the Data page's job (never in a request).
        # An analyst's table only: a built-in problem's columns are documented (iris' petal
        # width alone is 96 % accurate, and is known before the species is).
        leaks = find_leaks(prepared) if prepared.n_samples and p["source"] == "upload" else []
        # What exact-rf / exact-et can afford here, shown beside their choice on every page
        # before a click (a bound and 400 probes of rank boxes: no node is solved).
        cache.put_json(binary_size_key(p), core_binary_size(prepared))
        return {"summary": summary, "preview": _preview(prepared, p), "notes": list(prepared.notes),
                "columns": column_table(prepared, columns, leaks), "leaks": leaks,
                "variables": list(prepared.variables), "ranked": rank_inputs(prepared)}

    view = cache.get_or_compute(key, load)
    if "refused" in view:
        raise DataError(view["refused"])
    return view


def binary_size_key(params: Mapping[str, Any]) -> str:
    return cache.key_for("binary-size", canonical_params(params))


def binary_size(params: Mapping[str, Any]) -> dict | None:
    """What the exact binary methods can afford on a data choice
    (:func:`varimp_core.studies.convergence.binary_size`), as the Data page's job found it;
    None before it ran (nothing is computed here: a request reads the cache only)."""
    try:
        return cache.get_json(binary_size_key(params))
    except (ValueError, KeyError, TypeError):
        return None


def session_data(params: Mapping[str, Any], compute: bool = True) -> dict:
    """The ``vi-data`` session store of a data choice, as the Data page writes it.

    Returns
    -------
    store : dict
        ``params`` (canonical), ``query`` (URL query string), and from the
        summary ``label``, ``p``, ``N``, ``exact``, ``task``, ``target``; with
        ``compute=False`` and the data not loaded yet, ``params`` and ``query`` alone
        (what pages read from the store).

    Raises
    ------
    DataError
        As :func:`load_prepared`.
    """
    p = canonical_params(params)
    view = data_view(p, compute)
    if view is None:
        return {"params": p, "query": data_query(p)}
    s = view["summary"]
    return {"params": p, "query": data_query(p), "label": s["label"], "p": s["p"],
            "N": s["N"], "exact": s["exact"], "task": s["task"], "target": s["target"]}


def link_session_data(search: str | None, current: Any = None) -> dict | None:
    """The ``vi-data`` store for a page URL that carries a data choice, or None.

    A shared link (``/importances?problem=xor``) opened in a fresh session
    shows its data, but only the Data page wrote the session store, so the
    next page reached through the navigation fell back to the default data.
    Nothing is loaded here, in a web request: a choice not loaded yet is written
    without its summary, and the page's own job loads it (sampling
    ``madelon:samples=99000`` took 2 s of a web worker per new link, issue #17).

    Parameters
    ----------
    search : str or None
        ``location.search`` (with its leading ``?``).
    current : dict or None
        The session's ``vi-data`` value.

    Returns
    -------
    store : dict or None
        None when the URL names no data (``source=upload`` without a table
        included), names what the session already holds, or is known not to
        load (a refusal kept in the cache, a table gone: the page says why).
    """
    query = {k: v[0] if len(v) == 1 else v
             for k, v in parse_qs((search or "").lstrip("?"), keep_blank_values=True).items()}
    if not set(_KEYS) & set(query) or (query.get("source") == "upload"
                                       and not query.get("upload")):  # no table named yet
        return None
    params, _ = parse_data_query(query)
    if isinstance(current, Mapping) and current.get("params") == params:
        return None
    try:
        return session_data(params, compute=False)
    except DataError:
        return None


# -- uploads -------------------------------------------------------------------
def store_upload(contents: str, filename: str | None) -> dict:
    """Check, parse and store an upload; describe its columns for the controls.

    Parameters
    ----------
    contents : str
        ``dcc.Upload.contents`` (a base64 data URL).
    filename : str or None

    Returns
    -------
    info : dict
        ``key`` (cache key of the table), ``file``, ``columns``,
        ``number_columns`` (columns that can be numeric), ``target`` (default:
        the last column), ``numeric`` (numeric inputs as detected by the core,
        or None when detection failed), ``rows``.

    Raises
    ------
    DataError
        Too large, not CSV, ragged rows ... (one sentence).
    """
    limit = max_upload_bytes()
    if not isinstance(contents, str):
        raise DataError("No file was received; choose a CSV file and upload it again.")
    # A data URL's base64 part is 4/3 of the file: refuse before decoding.
    if len(contents) > max_request_bytes():
        raise DataError(f"The file is larger than the upload limit of {limit / 2**20:g} MiB; "
                        "use a smaller file (fewer rows or columns).")
    content = decode_upload(contents)
    df = read_csv_bytes(content, max_bytes=limit, max_cells=max_cells(),
                        max_columns=max_columns(), max_name_length=MAX_NAME_LENGTH)
    key = cache.put_table(df, client_id())
    info = upload_columns(key) or {}   # every target's roles too, here in the upload's job
    columns = info.get("columns") or [str(c) for c in df.columns]
    roles = target_roles(info, columns[-1]) if len(columns) > 1 else {"numeric": None}
    return {**page_info(info), "key": key, "file": os.path.basename(str(filename or "table.csv"))[:200],
            "columns": columns, "number_columns": number_columns(df), "target": columns[-1],
            "numeric": roles["numeric"], "rows": int(len(df))}


def compact_roles(by_target: Mapping[str, Mapping[str, Any]]) -> dict:
    """Every target's default roles (:func:`default_roles_by_target`) in a few lists.

    For most targets the roles are those of the whole table less the target itself: the
    numeric columns ``numeric`` and the excluded ones ``exclude`` (each the union over the
    targets).  ``targets`` keeps the others whole: a target that cannot be prepared
    (None each), or one whose missing rows change a column's kind.  So a table of 500
    columns keeps two lists, not 500 (:func:`target_roles` reads them back).
    """
    numeric = sorted({c for r in by_target.values() for c in (r["numeric"] or ())})
    exclude = sorted({c for r in by_target.values() for c in (r["exclude"] or ())})
    usual = {"numeric": numeric, "exclude": exclude, "targets": {}}
    usual["targets"] = {t: dict(r) for t, r in by_target.items() if r != target_roles(
        {"roles": usual}, t)}
    return usual


def target_roles(upload: Mapping[str, Any] | None, target: str) -> dict:
    """The default ``numeric`` and ``exclude`` of ``target`` (names, or None each when the
    table cannot be prepared for it) from an upload's columns (:func:`upload_columns`,
    or the Data page's store of them), as :func:`varimp_core.data.prepare.default_roles`
    gives them: read, never computed (they were, in the upload's job, for every target)."""
    roles = (upload or {}).get("roles")
    if not isinstance(roles, Mapping):
        return {"numeric": None, "exclude": None}
    if target in (roles.get("targets") or {}):
        return dict(roles["targets"][target])
    return {k: [c for c in roles.get(k) or () if c != target] for k in ("numeric", "exclude")}


def page_info(upload: Mapping[str, Any]) -> dict:
    """What a page's store keeps of :func:`upload_columns`: all but the column facts, which
    only the server reads (a wide table's are sizeable)."""
    return {k: v for k, v in upload.items() if k != "facts"}


def upload_columns(key: str | None) -> dict | None:
    """Columns of a stored upload (for rebuilding the controls from a link), or None.

    ``columns``, ``number_columns``, ``rows``, ``roles``: every target's default
    numeric and excluded columns (:func:`compact_roles`), so a change of target reads
    them (0.6 to 0.75 s of a web worker per new target on a 10,000 x 60 table, issue #27),
    and ``facts`` (:func:`column_facts`), from which a choice's number of inputs and task
    are read without preparing the table (:func:`upload_shape`).
    Computed once, in the upload's job (:func:`store_upload`), and kept beside the table
    (:func:`pages._server.cache.upload_companion`), so no request works it out again.
    """
    if not isinstance(key, str) or not cache.has_table(key):  # unknown, expired or evicted
        return None

    def columns_of() -> dict:
        df = cache.get_table(key)
        return {"columns": [str(c) for c in df.columns], "number_columns": number_columns(df),
                "rows": int(len(df)), "roles": compact_roles(default_roles_by_target(df)),
                "facts": column_facts(df)}

    # Every page's validation counts the upload's inputs: parse the table once, not per click,
    # and keep the answer beside the table, for as long as it (never evicted before it).
    return cache.upload_companion(key, columns_of)


def data_params_for_page(query: Mapping[str, Any], vi_data: Any = None) -> tuple[dict, list[str]]:
    """The data choice of a page: from its URL, else the session's ``vi-data``.

    Parameters
    ----------
    query : mapping
        What Dash passes to ``layout(**query)``.
    vi_data : dict or None
        The ``vi-data`` store (``{"params": ...}``) of the session.

    Returns
    -------
    params : dict
        Canonical data parameters.
    notes : list of str
        Sentences about link values that were ignored.
    """
    from_link = set(_KEYS) & set(query)
    if not from_link and isinstance(vi_data, Mapping) and isinstance(vi_data.get("params"),
                                                                      Mapping):
        return parse_data_query(
            {k: v for k, v in vi_data["params"].items() if v is not None})
    return parse_data_query(query)


def data_feature_count(params: Mapping[str, Any], vi_data: Any = None) -> int | None:
    """Number of inputs p of a data choice, without loading the data (None if unknown)."""
    p = canonical_params(params)
    if isinstance(vi_data, Mapping) and vi_data.get("params") == p and vi_data.get("p"):
        return int(vi_data["p"])
    if p["source"] == "problem":
        try:
            return len(problem_of(p["problem"]).variables)
        except ValueError:
            return None
    return upload_shape(p)["p"]


def upload_shape(params: Mapping[str, Any], view: Mapping[str, Any] | None = None) -> dict:
    """``p``, ``variables``, ``rows`` (kept) and ``task`` of an uploaded table's choice, None
    each when unknown.

    Read from the choice's cached summary, else from the upload's column facts
    (:func:`varimp_core.data.prepare.input_names`, :func:`~varimp_core.data.prepare.
    target_task`): a link or a new binning never prepares the table in a web request
    (issue #27: about 1 s per request on 10,000 x 60).  The one case the facts leave open,
    a numeric target when many incomplete rows are dropped, is prepared in a page's job
    (``view``: the summary to read) and unknown in a request.  A choice its summary refuses
    has neither.
    """
    p = canonical_params(params)
    try:
        view = view if view is not None else data_view(p, compute=False)
    except DataError:
        return {"p": None, "variables": None, "rows": None, "task": None}
    if view is not None:
        return {"p": int(view["summary"]["p"]), "variables": view.get("variables"),
                "rows": view["summary"]["N"], "task": view["summary"]["task"]}
    info = upload_columns(p["upload"]) or {}
    facts = info.get("facts")
    if not facts:
        return {"p": None, "variables": None, "rows": None, "task": None}
    target = p["target"] if p["target"] is not None else info["columns"][-1]
    names = input_names(facts, target, exclude=p["exclude"], dates=p["dates"],
                        missing=p["missing"])
    # Rows kept: those with a target value (missing values a level of their own), every row
    # ("refuse" prepares only a table with none missing), unknown when incomplete rows are
    # dropped (which depends on the inputs kept).
    rows = None
    if target in facts and p["missing"] == "category":
        rows = info["rows"] - facts[target]["missing"]
    elif target in facts and not (p["missing"] == "drop" and any(
            f["missing"] for f in facts.values())):
        rows = info["rows"]
    task = target_task(facts, target, task=None if p["task"] == "auto" else p["task"],
                       missing=p["missing"])
    if task is None and names and in_job():   # the page's job may prepare what a request may not
        try:
            return upload_shape(params, view=data_view(p))
        except DataError:
            return {"p": None, "variables": None, "rows": None, "task": None}
    return {"p": None if names is None else len(names), "variables": names, "rows": rows,
            "task": task}
