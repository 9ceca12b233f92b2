"""Helpers shared by the page tests (``test_page_*.py``): links, the page registry, uploads."""

from __future__ import annotations

import base64
from urllib.parse import parse_qs

import numpy as np
import pandas as pd

__all__ = ["query_dict", "registered_page", "store_csv", "upload_csv", "upload_frame",
           "problem_settings", "constant_column_frame", "FORMULA_CSV", "page_module",
           "grid_cell_selector", "grid_cells", "grid_rows", "component", "first_peek"]

#: A small uploaded table whose column names a spreadsheet would run as formulas.
FORMULA_CSV = ("=cmd|' /C calc'!A0,@x,y\n"
               + "\n".join(f"{i % 3},{i % 2},{(i % 3 + i % 2) % 2}" for i in range(60)))


def query_dict(query: str) -> dict:
    """A URL query as ``{name: last value}`` (blank values kept)."""
    return {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}


def registered_page(module: str) -> dict:
    """The ``dash.page_registry`` entry of ``module`` (e.g. ``"pages.masking"``)."""
    import dash

    return next(p for p in dash.page_registry.values() if p["module"] == module)


def problem_settings(logic, build, problem: str, **controls):
    """``build(problem=problem, data=..., **controls)`` with the page's data for ``problem``.

    ``logic`` is the page's logic module (its ``initial_state`` gives the data).
    """
    data = logic.initial_state({"problem": problem})["data"]
    return build(problem=problem, data=data, **controls)


def store_csv(text: str, name: str) -> dict:
    """Upload CSV ``text`` as the Data page does; the page's ``info`` about it."""
    from pages._framework import datasource

    return datasource.store_upload(
        "data:text/csv;base64," + base64.b64encode(text.encode()).decode(), name)


def upload_csv(text: str, name: str = "table.csv", target: str = "y") -> dict:
    """Upload CSV ``text``; the data parameters that choose it (target ``target``)."""
    from pages._framework import datasource

    info = store_csv(text, name)
    return datasource.canonical_params({"source": "upload", "upload": info["key"],
                                        "file": info["file"], "target": target})


def upload_frame(df, name: str, target: str = "y") -> dict:
    """Store a DataFrame as an upload named ``name``; the data parameters that choose it."""
    from pages._server import cache
    from pages._framework import datasource

    key = cache.put_table(df)
    return datasource.canonical_params({"source": "upload", "upload": key, "file": name,
                                        "target": target})


def constant_column_frame(second: str, constant: float, n: int = 200, seed: int = 0):
    """Columns ``x1``, ``const`` (all ``constant``), ``second`` and a binary target ``y``.

    ``x1`` and ``second`` are standard normal; ``y`` is 1 where
    ``x1 + second + 0.5 * noise > 0``.
    """
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    return pd.DataFrame({"x1": x1, "const": np.full(n, float(constant)), second: x2,
                         "y": (x1 + x2 + 0.5 * rng.normal(size=n) > 0).astype(int)})


def penguins_like(n: int = 240) -> pd.DataFrame:
    """Text categories and missing numbers, as in palmerpenguins: ``island`` cycles through
    Biscoe, Dream, Torgersen (row mod 3); ``bill`` is missing in rows 0-23; ``y`` is 1 on
    Biscoe or a bill over 40."""
    island = np.array(["Biscoe", "Dream", "Torgersen"])[np.arange(n) % 3]
    bill = np.round(30.0 + 20.0 * np.random.default_rng(1).random(n), 1)
    bill[:24] = np.nan
    y = ((island == "Biscoe") | (np.nan_to_num(bill) > 40)).astype(int)
    return pd.DataFrame({"island": island, "bill": bill, "y": y})


def page_module(name: str):
    """The page module ``pages.<name>`` (e.g. ``"importances"``), after the app.

    Dash refuses ``register_page`` before its app exists and loads every page when the app
    is built, so a test reaches a page's plain functions through the app's own module.
    """
    import importlib

    import app  # noqa: F401  (builds the app, which loads every page)

    return importlib.import_module(f"pages.{name}")


def grid_cell_selector(grid: str, column: str) -> str:
    """CSS of the shown body cells of ``column`` in the ag-grid ``grid`` (``"#imp-table"``)."""
    return f"{grid} .ag-center-cols-container .ag-cell[col-id='{column}']"


def grid_cells(dash_duo, grid: str, column: str) -> list[str]:
    """The texts of ``column``'s shown cells in the grid ``grid``, top to bottom (read in one
    script: a redraw of the grid cannot stale them)."""
    return dash_duo.driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".map(c => c.innerText.trim());", grid_cell_selector(grid, column))


def grid_rows(dash_duo, grid: str) -> list:
    """The shown body rows of the grid ``grid`` (a page of them when it paginates)."""
    return dash_duo.find_elements(f"{grid} .ag-center-cols-container .ag-row")


def component(node, id_):
    """The component of the layout tree ``node`` whose id is ``id_``, or None."""
    if getattr(node, "id", None) == id_:
        return node
    children = getattr(node, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children]:
        found = component(child, id_) if child is not None else None
        if found is not None:
            return found
    return None


def first_peek(view, layout):
    """The plain callback (``JobView.peek``) of ``view`` given the values a first visit's
    controls hold in ``layout``, as the browser sends them."""
    args = [component(layout, i.component_id).value for i in view.params.inputs()]
    if view.data_store:
        args.append(component(layout, view.data_store).data)
    return view.peek(*args)
