"""The app's tables are dash-ag-grid grids built by pages._framework.grid (issue #25 item 5).

No page may build a deprecated ``dash_table.DataTable``; importing the app emits no
DataTable deprecation warning; the grid shows numbers as d3-format does (the format
DataTable used), sorts them as numbers, and runs under the app's CSP.
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest
from _browser import open_page
from _pages import grid_cell_selector, grid_cells
from dash.testing.wait import until

from pages._framework.grid import grid, grid_table

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_no_page_module_imports_dash_table_or_builds_a_datatable():
    offenders = []
    for path in sorted((ROOT / "pages").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [a.name for a in node.names]
            elif isinstance(node, ast.Name):
                names = [node.id]
            elif isinstance(node, ast.Attribute):
                names = [node.attr]
            else:
                continue
            if any("dash_table" in n or n == "DataTable" for n in names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_the_check_above_would_see_a_datatable():
    """The AST walk finds both spellings (so the test above can fail)."""
    seen = [n.attr if isinstance(n, ast.Attribute) else n.module for n in ast.walk(ast.parse(
        "from dash import dash_table\nfrom dash.dash_table import DataTable\n"
        "t = dash_table.DataTable(id='x')")) if isinstance(n, (ast.Attribute, ast.ImportFrom))]
    assert "DataTable" in seen and "dash.dash_table" in seen


def test_importing_the_app_emits_no_datatable_deprecation_warning():
    code = ("import warnings\nwarnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n    import app\n"
            "print('\\n'.join(str(w.message) for w in caught if 'DataTable' in str(w.message)"
            " or 'dash_table' in str(w.message)))\nprint('IMPORTED')\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "IMPORTED"
    # the same probe does see DataTable's warning (dash 4.4 warns when one is built)
    seen = subprocess.run([sys.executable, "-W", "always", "-c",
                           "from dash import dash_table; dash_table.DataTable(id='x')"],
                          capture_output=True, text=True, timeout=300)
    assert "DataTable" in seen.stderr


def test_grid_columns_keep_the_number_formats_and_the_exact_values():
    cols = [{"name": "Variable", "id": "variable"},
            {"name": ["K = 1", "ours"], "id": "a", "type": "numeric",
             "format": {"specifier": ".4f"}},
            {"name": ["K = 1", "paper"], "id": "b", "type": "numeric",
             "format": {"specifier": ".3f"}},
            {"name": "Share", "id": "s", "type": "numeric", "format": {"specifier": ".2%"}},
            {"name": "n", "id": "n", "type": "numeric"}]
    rows = [{"variable": "=HYPERLINK()", "a": 0.123456789, "b": 0.5, "s": 0.25, "n": 3}]
    defs, data = grid_table(cols, rows)
    assert data == rows                                   # exact values: numeric sort
    assert defs[0] == {"field": "variable", "headerName": "Variable",
                       "headerTooltip": "Variable", "cellDataType": False}
    assert defs[1]["headerName"] == "K = 1"               # merged header: one group
    assert [c["field"] for c in defs[1]["children"]] == ["a", "b"]
    assert ".4f" in defs[1]["children"][0]["valueFormatter"]["function"]
    assert ".2%" in defs[2]["valueFormatter"]["function"]
    assert "valueFormatter" not in defs[3] and defs[3]["cellDataType"] == "number"


def test_grid_sorts_and_sizes_its_columns():
    g = grid("t", page_size=7, filter=True, row_id="key")
    assert g.defaultColDef["sortable"] and g.defaultColDef["filter"]
    assert g.dashGridOptions["paginationPageSize"] == 7 and g.columnSize == "autoSize"
    assert g.getRowId == "params.data.key"


@pytest.mark.browser
def test_the_importances_grid_formats_sorts_and_runs_under_the_csp(dash_duo, dash_app):
    """XOR with one irrelevant input: X1 and X2 carry 0.5 bit each (exact, K = 1), X3 none."""
    open_page(dash_duo, dash_app, "/importances?problem=xor:irrelevant=1")
    until(lambda: grid_cells(dash_duo, "#imp-table", "variable") == ["X1", "X2", "X3"], 90)
    shown = [c.replace("\u2212", "-") for c in grid_cells(dash_duo, "#imp-table", "importance")]
    assert shown == ["0.5000", "0.5000", "0.0000"]
    # a click on the header sorts by the number: ascending puts X3 (0) first
    dash_duo.find_element("#imp-table .ag-header-cell[col-id='importance'] "
                          ".ag-header-cell-label").click()
    until(lambda: grid_cells(dash_duo, "#imp-table", "variable")[0] == "X3", 10)
    assert dash_duo.find_element(grid_cell_selector("#imp-table", "variable")).is_displayed()
    assert dash_duo.get_logs() == []    # no CSP violation, no grid warning
