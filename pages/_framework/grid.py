"""The app's one table component: a ``dash_ag_grid.AgGrid`` (Dash 4.4 deprecates ``DataTable``).

* :func:`grid`: the component, sortable and resizable, its columns sized to their content,
  paginated (``page_size``), in the app's style;
* :func:`grid_table`: ``(columnDefs, rowData)`` from column specs in the DataTable style
  (``name``, ``id``, ``type``, ``format``: a ``dash.dash_table.Format`` or its dict) and rows.

Numbers are formatted here, on the server: each cell holds the number rounded as its
column's format says (``.4f``: 4 decimals; ``.4r``/``.4g``: 4 significant digits; ``.2%``: a
percentage, the header says "(%)"), so the grid sorts numerically and needs none of
ag-grid's JavaScript "function" props, which the app's Content-Security-Policy (no
``'unsafe-eval'``) forbids.  CSV exports stay server-side (``page_frame.register_csv_downloads``
and :func:`varimp_core.csvtext` make their cells safe).
"""

from __future__ import annotations

import math
import re
from typing import Any, Sequence

_SPEC = re.compile(r"^(?P<sign>[+\- ]?)(?P<comma>,?)(?:\.(?P<precision>\d+))?(?P<type>[a-z%]?)$")


def _specifier(fmt: Any) -> str:
    if fmt is None:
        return ""
    if hasattr(fmt, "to_plotly_json"):
        fmt = fmt.to_plotly_json()
    return str(fmt.get("specifier", "")) if isinstance(fmt, dict) else str(fmt)


def format_number(value: Any, specifier: str) -> Any:
    """``value`` rounded as the d3 ``specifier`` shows it (a number; None for NaN/inf)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if not math.isfinite(value):
        return None
    m = _SPEC.match(specifier or "")
    if not m or m["precision"] is None:
        return value
    p, kind = int(m["precision"]), m["type"]
    if kind == "%":
        return round(value * 100, p)
    if kind in ("r", "g", "e", "s") and value != 0:
        return float(f"{value:.{max(p, 1)}g}")
    if kind in ("f", ""):
        return round(value, p)
    return value


def grid_table(columns: Sequence[dict], rows: Sequence[dict]) -> tuple[list, list]:
    """``(columnDefs, rowData)`` of DataTable-style ``columns`` and ``rows`` (see the module).

    A column whose ``name`` is a list ``[group, name]`` goes under the header ``group``,
    shared by the consecutive columns naming the same group (DataTable's merged headers).
    """
    defs: list[dict] = []
    specs = {}
    for c in columns:
        spec = _specifier(c.get("format"))
        name = c.get("name", c["id"])
        group, name = (str(name[0]), str(name[-1])) if isinstance(name, (list, tuple)) else (
            None, str(name))
        if spec.endswith("%") and "%" not in name:
            name += " (%)"
        d: dict[str, Any] = {"field": str(c["id"]), "headerName": name,
                             "headerTooltip": name if group is None else f"{group}: {name}"}
        if c.get("type") == "numeric":
            d["type"] = "numericColumn"
            d["cellDataType"] = "number"
            specs[str(c["id"])] = spec
        else:
            d["cellDataType"] = False  # shown as it is (no inferred checkbox or date editor)
        if group is None:
            defs.append(d)
        elif defs and defs[-1].get("headerName") == group and "children" in defs[-1]:
            defs[-1]["children"].append(d)
        else:
            defs.append({"headerName": group, "children": [d]})
    out = [{k: format_number(v, specs[k]) if k in specs else v for k, v in r.items()}
           for r in rows]
    return defs, out


def grid(id: Any, *, page_size: int | None = None, columns: Sequence[dict] = (),
         filter: bool = False, row_id: str | None = None, style: dict | None = None):
    """An empty ``AgGrid`` ``id`` in the app's style (fill ``columnDefs`` and ``rowData``).

    Columns sort and resize, and are sized to their content (wider than the page: the grid
    scrolls sideways, never cuts); ``page_size`` rows a page; ``filter`` adds a filter per
    column; ``row_id``: the (string) field naming a row (``cellClicked``'s ``rowId``);
    ``columns``: fixed column specs (:func:`grid_table`).  Text is left-aligned, numbers right-aligned (their column type).
    """
    import dash_ag_grid as dag

    options: dict[str, Any] = {"domLayout": "autoHeight", "enableCellTextSelection": True,
                               "ensureDomOrder": True, "tooltipShowDelay": 300,
                               "suppressDragLeaveHidesColumns": True}
    if page_size:
        options.update(pagination=True, paginationPageSize=page_size,
                       paginationPageSizeSelector=False)
    extra = {} if row_id is None else {"getRowId": f"params.data.{row_id}"}
    return dag.AgGrid(**extra,
        id=id, columnDefs=grid_table(columns, [])[0], rowData=[], className="vi-grid",
        columnSize="autoSize", columnSizeOptions={"skipHeader": False},
        defaultColDef={"sortable": True, "resizable": True, "filter": bool(filter),
                       "floatingFilter": bool(filter), "wrapHeaderText": True,
                       "autoHeaderHeight": True, "minWidth": 70},
        dashGridOptions=options, style={"width": "100%", **(style or {})})
