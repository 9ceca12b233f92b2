"""Command line: ``varimp {importances,relevance,problems,serve} ...`` (or ``python -m varimp_core``).

A public contract: keep flags and JSON keys stable.  Errors print one
sentence on stderr and exit with status 2.  ``varimp serve`` starts the
dashboard (the module ``app``, installed beside the core by ``pip install .``)
in a program of its own, gunicorn or Dash's development server: the core
imports nothing of the web layer.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from varimp_core import __version__

_FORMATS = ("json", "csv", "table")
_BINARY = ("sklearn-rf", "sklearn-et", "exact-rf", "exact-et")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one sentence on stderr, exit status 2
        sys.stderr.write(f"error: {message}.\n")
        raise SystemExit(2)


def _source_args(p):
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--problem", metavar="SPEC", help="built-in problem, e.g. led:noise=0.1")
    g.add_argument("--data", metavar="FILE.csv", help="CSV file (with --target)")
    p.add_argument("--target", metavar="COL", help="target column of --data")
    p.add_argument("--n-samples", type=int, default=None, metavar="N",
                   help="sample size of a problem (default: its exact distribution); "
                        "bootstrap size for the forest")
    p.add_argument("--bins", type=int, default=5, metavar="B",
                   help="quantile bins for numeric inputs (default 5)")
    p.add_argument("--random-state", type=int, default=0, metavar="S", help="seed (default 0)")
    p.add_argument("--missing", choices=("category", "drop", "refuse"), default="category",
                   help="missing values of --data: a level of their own (default), drop the "
                        "incomplete rows, or refuse")
    p.add_argument("--exclude", metavar="COL[,COL...]", default=None,
                   help="columns of --data to leave out (identifier-like columns are left "
                        "out anyway)")
    p.add_argument("--dates", choices=("expand", "exclude"), default="expand",
                   help="date columns of --data: year, month and weekday inputs (default), "
                        "or left out")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="varimp",
                     description="Exact and sampled random-forest variable importances.")
    parser.add_argument("--version", action="version", version=f"varimp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    imp = sub.add_parser("importances", help="MDI importances and their decomposition")
    _source_args(imp)
    imp.add_argument("--method", choices=("exact", "forest", "sklearn-et", "sklearn-rf",
                                          "exact-rf", "exact-et"))
    imp.add_argument("--max-features", type=int, default=1, metavar="K")
    imp.add_argument("--max-depth", type=int, default=None, metavar="D")
    imp.add_argument("--min-samples-leaf", type=int, default=None, metavar="L",
                     help="fewest rows in a leaf of the binary-split methods (sklearn-rf, "
                          "sklearn-et, exact-rf, exact-et; default 1)")
    imp.add_argument("--n-estimators", type=int, default=None, metavar="N")
    imp.add_argument("--bootstrap", action=argparse.BooleanOptionalAction, default=None,
                     help="draw each tree's rows with replacement (default: on for sklearn-rf, "
                          "off otherwise); --no-bootstrap grows every tree on all rows")
    imp.add_argument("--k-semantics", choices=("id3", "sklearn"), default="id3")
    imp.add_argument("--criterion", choices=("entropy", "gini", "squared_error"),
                     default="entropy", help="squared_error: variance of a numeric target "
                                             "(exact method)")
    imp.add_argument("--n-jobs", type=int, default=None, metavar="J",
                     help="processes growing the sampled forests' trees (-1: every core; "
                          "default: VARIMP_N_JOBS, else 1); the numbers do not depend on it")
    imp.add_argument("--terms", action="store_true",
                     help="list every Eqn 3 term (exact method, K=1)")
    imp.add_argument("--format", choices=_FORMATS, default="table")
    imp.add_argument("--n-permutations", type=int, default=99, metavar="R",
                     help="label permutations of the verdicts (JSON on a sample; default 99)")
    imp.add_argument("--alpha", type=float, default=0.05, metavar="A",
                     help="family-wise error rate of the 'relevant' verdicts (default 0.05)")
    imp.add_argument("--no-verdicts", action="store_true",
                     help="leave out the verdicts, procedure and warnings of the JSON output")
    rel = sub.add_parser("relevance", help="relevance classes, degrees, Markov boundary")
    _source_args(rel)
    rel.add_argument("--format", choices=("json", "table"), default="table")
    rel.add_argument("--alpha", type=float, default=0.05, metavar="A",
                     help="level of the G-tests on a sample (default 0.05)")
    rel.add_argument("--tol", type=float, default=None, metavar="BITS",
                     help="a threshold in bits instead of the G-tests on a sample")
    sub.add_parser("problems", help="list built-in problems and their options")
    srv = sub.add_parser("serve", help="serve the dashboard (gunicorn; --dev: Dash's server)")
    srv.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; "
                                                          "0.0.0.0: every interface)")
    srv.add_argument("--port", type=int, default=8050, metavar="PORT",
                     help="port (default 8050)")
    srv.add_argument("--workers", type=int, default=None, metavar="W",
                     help="gunicorn worker processes (default: WEB_CONCURRENCY, else 2)")
    srv.add_argument("--dev", action="store_true",
                     help="Dash's development server in one process instead of gunicorn")
    return parser


def _load(args):
    from varimp_core.api import load_data

    if args.data is not None and not args.target:
        raise ValueError("--data needs --target COL to name the target column")
    if args.problem is not None:
        if args.exclude is not None:
            raise ValueError("--exclude applies to --data; a built-in problem has no columns "
                             "to leave out")
        return load_data(problem=args.problem, n_samples=args.n_samples,
                         random_state=args.random_state, bins=args.bins)
    exclude = [c.strip() for c in (args.exclude or "").split(",") if c.strip()]
    return load_data(data=args.data, target=args.target, random_state=args.random_state,
                     bins=args.bins, missing=args.missing, exclude=exclude, dates=args.dates)


def _safe_csv(frame) -> str:
    """CSV whose text cells cannot run as spreadsheet formulas (:func:`varimp_core.csvtext.safe_csv`)."""
    from varimp_core.csvtext import safe_csv

    return safe_csv(frame).rstrip("\n")


def _n_jobs(given: int | None) -> int | None:
    """``--n-jobs``, else ``VARIMP_N_JOBS``, else None (one process)."""
    if given is not None:
        return given
    text = os.environ.get("VARIMP_N_JOBS", "").strip()
    try:
        return int(text) if text else None
    except ValueError:
        raise ValueError(f"VARIMP_N_JOBS must be a whole number (-1: every core), not {text!r}")


def _importances(args) -> str:
    from varimp_core.api import compute_importances
    from varimp_core.exact.eqn3 import all_terms

    data = _load(args)
    for note in data.notes if args.data else ():
        sys.stderr.write(f"note: {note}\n")
    method = args.method
    if args.terms and (method not in (None, "exact") or args.max_features != 1):
        raise ValueError("--terms lists the terms of Eqn 3: use it with --method exact and K=1")
    if method in ("exact", "exact-rf", "exact-et") and args.bootstrap is not None:
        raise ValueError(f"--bootstrap and --no-bootstrap apply to the sampled methods "
                         f"(forest, sklearn-rf, sklearn-et); {method} computes the infinite "
                         "forest grown on every row")
    if args.min_samples_leaf is not None and method not in _BINARY:
        raise ValueError(f"--min-samples-leaf applies to the binary-split methods "
                         f"({', '.join(_BINARY)}); {method or 'the default method'} grows "
                         "multiway trees to the end")
    if method in ("exact-rf", "exact-et") and args.n_estimators is not None:
        sys.stderr.write(f"note: --n-estimators is ignored by {method}, which computes the "
                         "infinite forest exactly.\n")
    result = compute_importances(
        data, method=method, max_features=args.max_features, max_depth=args.max_depth,
        n_estimators=100 if args.n_estimators is None else args.n_estimators,
        bootstrap=args.bootstrap,
        min_samples_leaf=1 if args.min_samples_leaf is None else args.min_samples_leaf,
        k_semantics=args.k_semantics, criterion=args.criterion, random_state=args.random_state,
        n_samples=args.n_samples if args.data else None, n_jobs=_n_jobs(args.n_jobs))
    terms = all_terms(data.table) if args.terms else None
    if terms is not None and args.max_depth is not None:
        terms = terms[terms["degree"] < args.max_depth]
    if args.format == "json":
        d = result.to_dict()
        out = {k: d[k] for k in ("variables", "importances", "importances_std", "by_degree",
                                 "information")}
        out["parameters"] = {**d["parameters"], "method": d["method"], "units": d["units"],
                             "exact": d["exact"], "problem": d["problem"]}
        out["excluded"] = [{"column": c, "reason": why} for c, why in data.excluded]
        out["missing"] = dict(data.missing)
        if not args.no_verdicts and not data.table.exact:
            out.update(_verdicts(args, data, method))
        if terms is not None:
            out["terms"] = [{"variable": r.variable, "conditioning": list(r.conditioning),
                             "degree": int(r.degree), "weight": float(r.weight),
                             "cmi": float(r.cmi)} for r in terms.itertuples()]
        return json.dumps(out)
    if args.format == "csv":
        if terms is not None:
            t = terms.copy()
            t["conditioning"] = [" ".join(c) for c in t["conditioning"]]
            return _safe_csv(t)
        return _safe_csv(result.to_frame())
    frame = result.to_frame()[["variable", "importance", "importance_std", "normalised"]]
    lines = [f"method={result.method} units={result.units} "
             + " ".join(f"{k}={v}" for k, v in result.parameters.items()),
             frame.to_string(index=False, float_format=lambda v: f"{v:.4f}"),
             f"sum = {result.total:.4f}"
             + ("" if result.information is None else
                f"   {'Var(Y) - E Var(Y|X)' if args.criterion == 'squared_error' else 'I(X;Y)'}"
                f" = {result.information:.4f}")]
    if terms is not None:
        lines.append(terms.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return "\n".join(lines)


def _verdicts(args, data, method) -> dict:
    """``verdicts``, ``procedure``, ``warnings`` (and the numbers behind them) on a sample."""
    from varimp_core.studies.verdicts import importance_verdicts

    if args.n_permutations < 1:
        raise ValueError(f"--n-permutations must be at least 1, not {args.n_permutations}")
    if not 0 < args.alpha < 1:
        raise ValueError(f"--alpha must be between 0 and 1, not {args.alpha}")
    v = importance_verdicts(
        data, method=method, max_features=args.max_features, max_depth=args.max_depth,
        n_estimators=100 if args.n_estimators is None else args.n_estimators,
        bootstrap=args.bootstrap, k_semantics=args.k_semantics, criterion=args.criterion,
        n_permutations=args.n_permutations, alpha=args.alpha, random_state=args.random_state,
        n_jobs=_n_jobs(args.n_jobs) or 1)
    finite = lambda a: [float(x) if x == x else None for x in a]   # NaN as null
    return {"verdicts": v.verdict_map(), "procedure": dict(v.procedure),
            "warnings": [dict(w) for w in v.warnings],
            "above_chance": finite(v.above_chance), "p_adjusted": finite(v.p_adjusted)}


def _relevance(args) -> str:
    from varimp_core.exact.relevance import relevance

    data = _load(args)
    res = relevance(data.table, tol=args.tol, alpha=args.alpha)
    if args.format == "json":
        d = res.to_dict()
        out = {k: d[k] for k in ("variables", "relevance", "degree", "markov_boundary",
                                 "minimal_boundary", "boundary_unique")}
        if "test" in d:   # a sample: classes from G-tests, "undecided" possible
            out["test"] = d["test"]
        return json.dumps(out)
    tested = (res.test or {}).get("boundary")
    if tested is not None and not tested["decided"]:
        note = (f" (cannot be decided from {res.test['n']:,.0f} rows: {tested['sparse']:,} "
                "blanket tests of smaller sets are too sparse)")
    elif tested is not None:
        note = f" (G-tests of blankets at level {tested['level']:g})"
    elif res.strictly_positive:
        note = ""
    elif res.boundary_unique:
        note = " (the only one, although the distribution is not strictly positive)"
    else:
        note = (" (one minimal boundary of several: the distribution is not strictly "
                "positive)")
    empty = "(undecided)" if tested is not None and not tested["decided"] else "(empty)"
    text = res.to_frame().to_string(index=False) + (
        f"\nMarkov boundary: {', '.join(res.minimal_boundary) or empty}" + note)
    if res.test is not None:
        text += (f"\nClasses from G-tests at level {res.test['level']:g} on N = "
                 f"{res.test['n']:,.0f} rows ({res.test['correction']}); \"undecided\": "
                 "a needed test has too few rows per cell.")
    return text


def _problems() -> str:
    from varimp_core.problems.registry import list_problems

    lines = []
    for p in list_problems():
        lines.append(f"{p['name']}: {p['description']}")
        for o in p["options"]:
            lines.append(f"    {o['key']}={o['default']}  ({o['type']}) {o['help']}")
    return "\n".join(lines)


def _serve_command(args) -> tuple[list[str], dict]:
    """The program ``varimp serve`` runs, and its environment."""
    if not 1 <= args.port <= 65535:
        raise ValueError(f"--port must be from 1 to 65535, not {args.port}")
    env = dict(os.environ)
    if args.dev:
        env.update(VARIMP_HOST=args.host, VARIMP_PORT=str(args.port))
        return [sys.executable, "-c", "import app; app.main()"], env
    workers = args.workers
    if workers is None:
        text = env.get("WEB_CONCURRENCY", "").strip() or "2"
        if not text.isdigit():
            raise ValueError(f"WEB_CONCURRENCY must be a whole number of workers, not {text!r}")
        workers = int(text)
    if workers < 1:
        raise ValueError(f"--workers must be at least 1, not {workers}")
    host = f"[{args.host}]" if ":" in args.host else args.host
    return [sys.executable, "-m", "gunicorn", "app:server", "--bind", f"{host}:{args.port}",
            "--workers", str(workers), "--timeout", "120"], env


def _serve(args) -> int:
    """Become the server (``exec``: its signals and exit status are the server's)."""
    from importlib.machinery import PathFinder

    command, env = _serve_command(args)
    # Installed, or a checkout's app.py in the working directory (which both programs import).
    if PathFinder.find_spec("app", [os.getcwd(), *sys.path]) is None:
        raise ValueError("the dashboard is not installed here: install varimp with "
                         "`pip install .`, or run `varimp serve` from a checkout")
    sys.stdout.flush()
    os.execve(command[0], command, env)
    return 0  # not reached


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "importances":
            out = _importances(args)
        elif args.command == "relevance":
            out = _relevance(args)
        else:
            out = _problems()
    except (ValueError, OSError, MemoryError) as exc:
        msg = str(exc).strip() or exc.__class__.__name__
        sys.stderr.write(f"error: {msg}\n")
        return 2
    sys.stdout.write(out + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
