"""Time to a first result and to the full result of every page, on an analyst's upload and on fair.

    python bench/bench_pages.py [--quick] [--pages importances,distributions,...]
                                [--only upload|fair] [--problems digits,madelon]
                                [--json out.json]

Goal (issue 12, "every page fast on real uploads"): on a 10,000 x 60 upload and
on Fair's affairs data (6,366 x 9, ``fair`` in statsmodels), every page shows a first result
within 5 s on a 2-core machine, then refines.

The upload is built here, seeded, shaped like an analyst's file: an identifier
column (``customer_id``), a date column (``signup_date``), four text
categories, 53 numeric measurements with about 3 % missing values each, and a
binary target ``churned`` that depends on five of them.  It goes through the
Data page's own preparation (:func:`pages.data.apply_choice`: the
upload's default roles, so the identifier is excluded and the date expanded).

Each page is driven as its background job would drive it: its layout is built
for the session's data (so the controls hold the page's defaults), and every
:class:`pages._framework.view.JobView` of the page runs ``view.run`` with those values
and a recording :class:`pages._server.jobs.Progress`.  "First" is the time from
the layout until the first result a page can draw: a partial result the job
publishes (:meth:`Progress.publish`) or, without one, its full result; "full"
is until the job ends.  Each page starts from the cache as the Data page left
it (results of the previous page are deleted), so nothing is shared between
pages.  Absolute seconds depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("VARIMP_CACHE_DIR", tempfile.mkdtemp(prefix="varimp-bench-pages-"))
os.environ["VARIMP_WARM"] = "0"
os.environ.setdefault("VARIMP_MAX_CLIENT_UPLOAD_BYTES", str(1 << 34))

GOAL_SECONDS = 5.0
PAGES = ("data", "importances", "decomposition", "masking", "dependence", "interactions",
         "distributions", "selection", "measures", "explain")


def analyst_table(n: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """A seeded 10,000 x 60 table shaped like an analyst's CSV (see the module docstring)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"customer_id": [f"C{i:06d}" for i in rng.permutation(n) + 1]})
    start = np.datetime64("2019-01-01")
    df["signup_date"] = (start + rng.integers(0, 4 * 365, n)).astype(str)
    df["region"] = rng.choice(["North", "South", "East", "West", "Centre"], n)
    df["plan"] = rng.choice(["basic", "plus", "premium"], n, p=[0.6, 0.3, 0.1])
    df["channel"] = rng.choice(["web", "store", "phone", "partner"], n)
    df["segment"] = rng.choice([f"S{k}" for k in range(8)], n)
    numbers = rng.normal(size=(n, 53))
    for j in range(53):
        col = numbers[:, j] * (10 ** (j % 4)) + 50 * (j % 3)
        col = np.round(col, 2)
        col[rng.random(n) < 0.03] = np.nan
        df[f"m{j:02d}"] = col
    logit = (numbers[:, 0] - 0.8 * numbers[:, 1] + 0.5 * numbers[:, 2] * numbers[:, 3]
             + 0.7 * (df["plan"] == "premium") - 0.4 * numbers[:, 4])
    df["churned"] = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    return df


def fair_csv() -> str:
    """Fair's (1978) affairs data, 6,366 x 9, as statsmodels ships it (``VARIMP_FAIR_CSV``
    names the file when statsmodels is not installed): eight small-integer survey answers and
    the continuous target ``affairs``."""
    path = os.environ.get("VARIMP_FAIR_CSV")
    if not path:
        import statsmodels.datasets.fair as fair

        path = os.path.join(os.path.dirname(fair.__file__), "fair.csv")
    return Path(path).read_text()


def prepare(which: str) -> dict:
    """The session's data (``vi-data``) for ``"upload"``, ``"fair"`` or ``"problem:SPEC"`` (a
    built-in problem, as the Data page offers it), as the Data page makes it."""
    from tests._pages import page_module, store_csv

    if which.startswith("problem:"):
        out = page_module("data").apply_choice({"source": "problem",
                                                "problem": which.split(":", 1)[1]})
        if not out["ok"]:
            raise SystemExit(out["error"])
        return out["store"]

    if which == "fair":
        text, target = fair_csv(), "affairs"
    else:
        buf = io.StringIO()
        analyst_table().to_csv(buf, index=False)
        text, target = buf.getvalue(), "churned"
    info = store_csv(text, f"{which}.csv")
    out = page_module("data").apply_choice({"source": "upload", "upload": info, "target": target})
    if not out["ok"]:
        raise SystemExit(out["error"])
    return out["store"]


def layout_values(tree) -> dict:
    """``{(id, property): value}`` of every control and store in a layout tree."""
    found: dict = {}

    def walk(node):
        if isinstance(node, (list, tuple)):
            for child in node:
                walk(child)
            return
        if not hasattr(node, "to_plotly_json"):
            return
        cid = getattr(node, "id", None)
        if isinstance(cid, str):
            for prop in ("value", "data"):
                if prop in node._prop_names:
                    found[(cid, prop)] = getattr(node, prop, None)
        walk(getattr(node, "children", None))

    walk(tree)
    return found


class Recorder:
    """A job's progress that notes when the first drawable result came (see the docstring)."""

    def __init__(self, started: float):
        from pages._server import jobs

        self.inner = jobs.Progress(None, timeout=3600)
        self.started, self.first, self.drawn = started, None, None
        self.partials, self.render = 0, None

    def __call__(self, *args, **kw):
        self.inner(*args, **kw)

    def publish(self, result, every: float = 1.5) -> None:
        """As the job (:meth:`pages._server.jobs.Progress.publish`): the partial result is
        drawn (the view's render), the first at once and then one per ``every`` s; each is
        counted.  (This bench drew every one before 2026-11-29: on Madelon's 500 variables,
        49 drawings of 500 histograms were half of Distributions' time there.)"""
        now = time.perf_counter()
        if self.render is not None and (self.drawn is None or now - self.drawn >= every):
            self.render(result)
            self.drawn = now
        self.partials += 1
        if self.first is None:
            self.first = time.perf_counter() - self.started

    def should_stop(self) -> bool:
        return False

    @property
    def elapsed(self) -> float:
        return self.inner.elapsed


def views_of(module) -> list:
    from pages._framework.view import JobView

    views = [v for v in vars(module).values() if isinstance(v, JobView)]
    return [v for i, v in enumerate(views) if v not in views[:i]]  # a loop variable repeats one


def run_page(name: str, store: dict) -> list[tuple[str, float | None, float, str]]:
    """``(view, first, full, note)`` for every view of page ``name`` on the session's data."""
    module = importlib.import_module(f"pages.{name}")
    rows = []
    for view in views_of(module):
        t0 = time.perf_counter()
        try:
            values = layout_values(module.layout(vi_data=store))
        except Exception as exc:  # a page that does not apply to this data says so
            rows.append((view.prefix, None, time.perf_counter() - t0, f"layout: {exc}"))
            continue
        get = lambda cid, prop: values.get((cid, prop)) if isinstance(cid, str) else None  # noqa: E731
        controls = {n: get(view.params.id(n), "value") for n in view.params.names}
        extra = {n: get(dep.component_id, dep.component_property) for n, dep in view.extra}
        data_store = get(view.data_store, "data") if view.data_store else None
        progress = Recorder(t0)
        note = ""
        try:
            result, _, _ = view.run(controls, data_store, extra, progress)
            if isinstance(result, dict) and result.get("waiting"):
                note = "nothing to compute"
        except Exception as exc:
            note = f"{type(exc).__name__}: {str(exc)[:70]}"
        full = time.perf_counter() - t0
        rows.append((view.prefix, progress.first if progress.first is not None else full,
                     full, note or (f"{progress.partials} partial results"
                                    if progress.partials else "")))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", default=",".join(PAGES))
    ap.add_argument("--only", choices=("upload", "fair"))
    ap.add_argument("--problems", default="",
                    help="built-in problems instead of the two tables, e.g. digits,madelon "
                         "(issue 30: Distributions within 20 s on them)")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    import app  # noqa: F401  (registers every page and its callbacks)
    from pages._server import cache

    table = []
    chosen = [f"problem:{s}" for s in args.problems.split(",") if s] or (
        [args.only] if args.only else ["upload", "fair"])
    for which in chosen:
        t0 = time.perf_counter()
        store = prepare(which)
        prep = time.perf_counter() - t0
        print(f"\n{which}: p = {store['p']}, prepared in {prep:.1f} s", flush=True)
        print(f"{'page':<15}{'view':<22}{'first (s)':>10}{'full (s)':>10}  note", flush=True)
        keep = set(cache.get_cache().iterkeys())
        for name in args.pages.split(","):
            for view, first, full, note in run_page(name, store):
                ok = "" if first is None or first <= GOAL_SECONDS else "  > 5 s"
                first_text = "-" if first is None else f"{first:.1f}"
                print(f"{name:<15}{view:<22}{first_text:>10}{full:>10.1f}  {note}{ok}",
                      flush=True)
                table.append(dict(data=which, page=name, view=view, first=first, full=full,
                                  note=note))
            for key in set(cache.get_cache().iterkeys()) - keep:
                cache.get_cache().delete(key)
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
