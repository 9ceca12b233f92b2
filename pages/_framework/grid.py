"""The app's one table component: a ``dash_ag_grid.AgGrid`` (Dash 4.4 deprecates ``DataTable``).

* :func:`grid`: the component, sortable and resizable, its columns sized to their content,
  paginated (``page_size``), in the app's style;
* :func:`grid_table`: ``(columnDefs, rowData)`` from column specs in the DataTable style
  (``name``, ``id``, ``type``, ``format``: a ``dash.dash_table.Format`` or its dict) and rows.

Numbers keep their exact values in ``rowData`` (so the grid sorts them numerically) and
are shown through d3-format, as DataTable showed them: each numeric column's
``valueFormatter`` is ``d3.format(specifier)``.  dash-ag-grid parses such a "function"
string with esprima and evaluates its syntax tree itself (no ``eval`` or ``new Function``),
so the app's Content-Security-Policy (no ``'unsafe-eval'``) holds; ``tests/framework/test_grid.py``
checks the browser reports no violation.  Blank cells (None) stay blank.  CSV exports stay
server-side (``page_frame.register_csv_downloads``; :mod:`varimp_core.csvtext` makes their
cells safe).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

#: The app's number formats by name, as d3-format specifiers (every table uses these).
NUMBER_FORMATS = {"fixed3": ".3f", "fixed4": ".4f", "fixed6": ".6f", "exp4": ".4g",
                  "sig6": ".6g", "signed4": "+.4f", "pct2": ".2%", "grouped": ",",
                  "grouped4": ",.4r", "signed_grouped4": "+,.4r"}


def number_format(name: str) -> dict:
    """The column ``format`` of the named number format (:data:`NUMBER_FORMATS`)."""
    return {"specifier": NUMBER_FORMATS[name]}


_SPEC = re.compile(r"^(?P<sign>[+\- ]?)(?P<comma>,?)(?:\.(?P<precision>\d+))?(?P<type>[a-z%]?)$")


def _specifier(fmt: Any) -> str:
    if fmt is None:
        return ""
    if hasattr(fmt, "to_plotly_json"):
        fmt = fmt.to_plotly_json()
    return str(fmt.get("specifier", "")) if isinstance(fmt, dict) else str(fmt)


def value_formatter(specifier: str) -> dict | None:
    """The ``valueFormatter`` showing a number as the d3 ``specifier`` says (None: as it is)."""
    if not specifier or not _SPEC.match(specifier):
        return None
    return {"function": f"params.value == null ? '' : d3.format('{specifier}')(params.value)"}


def grid_table(columns: Sequence[dict], rows: Sequence[dict]) -> tuple[list, list]:
    """``(columnDefs, rowData)`` of DataTable-style ``columns`` and ``rows`` (see the module).

    A column whose ``name`` is a list ``[group, name]`` goes under the header ``group``,
    shared by the consecutive columns naming the same group (DataTable's merged headers).
    """
    defs: list[dict] = []
    for c in columns:
        spec = _specifier(c.get("format"))
        name = c.get("name", c["id"])
        group, name = (str(name[0]), str(name[-1])) if isinstance(name, (list, tuple)) else (
            None, str(name))
        d: dict[str, Any] = {"field": str(c["id"]), "headerName": name,
                             "headerTooltip": name if group is None else f"{group}: {name}"}
        if c.get("type") == "numeric":
            d["type"] = "numericColumn"
            d["cellDataType"] = "number"
            if value_formatter(spec):
                d["valueFormatter"] = value_formatter(spec)
        else:
            d["cellDataType"] = False  # shown as it is (no inferred checkbox or date editor)
        if group is None:
            defs.append(d)
        elif defs and defs[-1].get("headerName") == group and "children" in defs[-1]:
            defs[-1]["children"].append(d)
        else:
            defs.append({"headerName": group, "children": [d]})
    return defs, list(rows)


def grid(id: Any, *, page_size: int | None = None, columns: Sequence[dict] = (),
         filter: bool = False, row_id: str | None = None, style: dict | None = None):
    """An empty ``AgGrid`` ``id`` in the app's style (fill ``columnDefs`` and ``rowData``).

    Columns sort and resize, and are sized to their content (wider than the page: the grid
    scrolls sideways, never cuts); ``page_size`` rows a page; ``filter`` adds a filter per
    column; ``row_id``: the (string) field naming a row (``cellClicked``'s ``rowId``);
    ``columns``: fixed column specs (:func:`grid_table`).  Text is left-aligned, numbers
    right-aligned (their column type).
    """
    import dash_ag_grid as dag

    options: dict[str, Any] = {"domLayout": "autoHeight", "enableCellTextSelection": True,
                               "ensureDomOrder": True, "tooltipShowDelay": 300,
                               # every column drawn (small tables): sized to content, readable
                               "suppressColumnVirtualisation": True,
                               "suppressDragLeaveHidesColumns": True}
    if page_size:
        options.update(pagination=True, paginationPageSize=page_size,
                       paginationPageSizeSelector=False)
    extra = {} if row_id is None else {"getRowId": f"params.data.{row_id}"}
    return dag.AgGrid(**extra,
        id=id, columnDefs=grid_table(columns, [])[0], rowData=[], className="vi-grid",
        columnSize="autoSize", columnSizeOptions={"skipHeader": False},
        defaultColDef={"sortable": True, "resizable": True, "filter": bool(filter),
                       "floatingFilter": bool(filter), "minWidth": 70},
        dashGridOptions=options, style={"width": "100%", **(style or {})})
